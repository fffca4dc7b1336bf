package resptest

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"
)

// DefaultTimeout bounds each read and write of a Conn: a server that does
// not answer fails the test instead of hanging it.
const DefaultTimeout = 10 * time.Second

// Conn is a raw RESP client: it sends commands as arrays of bulk strings
// and returns replies as the exact bytes the server sent, one frame at a
// time. It is not safe for concurrent use.
type Conn struct {
	t       testing.TB
	addr    string
	nc      net.Conn
	r       *bufio.Reader
	timeout time.Duration
}

// Dial connects to addr. The connection is closed when the test ends; a
// failure to connect fails the test.
func Dial(t testing.TB, addr string) *Conn {
	t.Helper()
	c, err := DialErr(t, addr)
	if err != nil {
		t.Fatalf("resptest: %v", err)
	}
	return c
}

// DialErr is Dial returning its error instead of failing the test.
func DialErr(t testing.TB, addr string) (*Conn, error) {
	nc, err := net.DialTimeout("tcp", addr, DefaultTimeout)
	if err != nil {
		return nil, err
	}
	c := &Conn{t: t, addr: addr, nc: nc, r: bufio.NewReader(nc), timeout: DefaultTimeout}
	t.Cleanup(func() { c.Close() })
	return c, nil
}

// Addr is the address the connection was dialed to.
func (c *Conn) Addr() string { return c.addr }

// SetTimeout changes the deadline of each later read and write.
func (c *Conn) SetTimeout(d time.Duration) { c.timeout = d }

// Close closes the connection. Closing twice is harmless.
func (c *Conn) Close() error { return c.nc.Close() }

// Do sends one command and returns its reply frame's bytes. An I/O error,
// a timeout or a malformed reply fails the test.
func (c *Conn) Do(args ...string) []byte {
	c.t.Helper()
	reply, err := c.TryDo(args...)
	if err != nil {
		c.t.Fatalf("resptest: %s: %v", c.addr, err)
	}
	return reply
}

// TryDo is Do returning its error instead of failing the test, for tests
// that expect the server to close the connection.
func (c *Conn) TryDo(args ...string) ([]byte, error) {
	if err := c.TrySendRaw(AppendCommand(nil, args...)); err != nil {
		return nil, err
	}
	return c.TryReadReply()
}

// SendRaw writes b as is: inline commands, several commands at once
// (pipelining), or malformed input. Replies are read with ReadReply.
func (c *Conn) SendRaw(b []byte) {
	c.t.Helper()
	if err := c.TrySendRaw(b); err != nil {
		c.t.Fatalf("resptest: %s: %v", c.addr, err)
	}
}

// TrySendRaw is SendRaw returning its error instead of failing the test.
func (c *Conn) TrySendRaw(b []byte) error {
	if err := c.nc.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
		return err
	}
	_, err := c.nc.Write(b)
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// ReadReply reads the next reply frame and returns its bytes.
func (c *Conn) ReadReply() []byte {
	c.t.Helper()
	reply, err := c.TryReadReply()
	if err != nil {
		c.t.Fatalf("resptest: %s: %v", c.addr, err)
	}
	return reply
}

// TryReadReply is ReadReply returning its error instead of failing the
// test: io.EOF when the server closed the connection between replies.
func (c *Conn) TryReadReply() ([]byte, error) {
	if err := c.nc.SetReadDeadline(time.Now().Add(c.timeout)); err != nil {
		return nil, err
	}
	reply, err := ReadFrame(c.r)
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	return reply, nil
}

// AppendCommand appends args to dst as a RESP array of bulk strings, the
// form clients send commands in.
func AppendCommand(dst []byte, args ...string) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(args)), 10)
	dst = append(dst, '\r', '\n')
	for _, a := range args {
		dst = append(dst, '$')
		dst = strconv.AppendInt(dst, int64(len(a)), 10)
		dst = append(dst, '\r', '\n')
		dst = append(dst, a...)
		dst = append(dst, '\r', '\n')
	}
	return dst
}
