package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"
)

// Conn is a minimal RESP2 client connection for load generation: the
// benchmark's own cost per command must stay far below the server's, and
// pipelining must be explicit.
type Conn struct {
	nc net.Conn
	r  *bufio.Reader
	w  *bufio.Writer
}

// Dial connects to a RESP server.
func Dial(addr string) (*Conn, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &Conn{nc: nc, r: bufio.NewReaderSize(nc, 64<<10), w: bufio.NewWriterSize(nc, 64<<10)}, nil
}

// dialAll opens n connections to addr, or none.
func dialAll(addr string, n int) ([]*Conn, error) {
	conns := make([]*Conn, 0, n)
	for range n {
		c, err := Dial(addr)
		if err != nil {
			closeAll(conns)
			return nil, err
		}
		conns = append(conns, c)
	}
	return conns, nil
}

func closeAll(conns []*Conn) {
	for _, c := range conns {
		c.Close()
	}
}

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

// Send buffers one command; Flush sends what is buffered.
func (c *Conn) Send(args ...any) {
	c.w.WriteByte('*')
	c.w.WriteString(strconv.Itoa(len(args)))
	c.w.WriteString("\r\n")
	for _, a := range args {
		var b []byte
		switch v := a.(type) {
		case []byte:
			b = v
		case string:
			b = []byte(v)
		case int:
			b = strconv.AppendInt(nil, int64(v), 10)
		case int64:
			b = strconv.AppendInt(nil, v, 10)
		default:
			b = fmt.Append(nil, v)
		}
		c.w.WriteByte('$')
		c.w.WriteString(strconv.Itoa(len(b)))
		c.w.WriteString("\r\n")
		c.w.Write(b)
		c.w.WriteString("\r\n")
	}
}

// Flush sends the buffered commands.
func (c *Conn) Flush() error { return c.w.Flush() }

// ErrReply is an error reply from the server.
type ErrReply string

func (e ErrReply) Error() string { return string(e) }

// Receive reads one reply: a string ([]byte for bulk and simple strings),
// int64, nil, []any, or an ErrReply as the error.
func (c *Conn) Receive() (any, error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 {
		return nil, errors.New("resp: short line")
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+':
		return append([]byte(nil), body...), nil
	case '-':
		return nil, ErrReply(body)
	case ':':
		return strconv.ParseInt(string(body), 10, 64)
	case '$':
		n, err := strconv.Atoi(string(body))
		if err != nil || n < 0 {
			return nil, err
		}
		b := make([]byte, n+2)
		if _, err := readFull(c.r, b); err != nil {
			return nil, err
		}
		return b[:n], nil
	case '*':
		n, err := strconv.Atoi(string(body))
		if err != nil || n < 0 {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = c.Receive(); err != nil {
				var e ErrReply
				if !errors.As(err, &e) {
					return nil, err
				}
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("resp: unexpected reply %q", line)
}

func readFull(r *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Do sends one command and reads its reply.
func (c *Conn) Do(args ...any) (any, error) {
	c.Send(args...)
	if err := c.Flush(); err != nil {
		return nil, err
	}
	return c.Receive()
}
