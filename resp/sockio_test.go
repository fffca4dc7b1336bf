package resp

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"testing"
	"time"
)

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

func rawSock(t *testing.T, nc net.Conn) *sockIO {
	t.Helper()
	s, ok := newSockIO(nc).(*sockIO)
	if !ok {
		t.Fatalf("newSockIO(%T) is not raw", nc)
	}
	return s
}

// A write far larger than the socket buffers must park on EAGAIN and go
// on when the peer reads, delivering every byte in order; reads see what
// the peer wrote, then io.EOF.
func TestSockIOBigWriteAndRead(t *testing.T) {
	srv, cli := tcpPair(t)
	s := rawSock(t, srv)
	want := make([]byte, 32<<20)
	for i := range want {
		want[i] = byte(rand.Uint32())
	}
	got := make(chan []byte, 1)
	go func() {
		var buf bytes.Buffer
		chunk := make([]byte, 7000)
		for buf.Len() < len(want) {
			n, err := cli.Read(chunk)
			buf.Write(chunk[:n])
			if err != nil {
				break
			}
		}
		got <- buf.Bytes()
	}()
	n, err := s.Write(want)
	if err != nil || n != len(want) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(want))
	}
	if g := <-got; !bytes.Equal(g, want) {
		t.Fatalf("peer read %d bytes, not the %d written", len(g), len(want))
	}

	go func() {
		for i := 0; i < 100; i++ {
			cli.Write([]byte("*1\r\n$4\r\nPING\r\n"))
		}
		cli.Close()
	}()
	all, err := io.ReadAll(s)
	if err != nil {
		t.Fatalf("ReadAll: %v", err)
	}
	if want := bytes.Repeat([]byte("*1\r\n$4\r\nPING\r\n"), 100); !bytes.Equal(all, want) {
		t.Fatalf("read %q", all)
	}
	if n, err := s.Read(make([]byte, 10)); n != 0 || err != io.EOF {
		t.Fatalf("Read after EOF = %d, %v", n, err)
	}
}

// Deadlines set on the net.Conn stop a read or write that waits, with the
// error net.Conn gives.
func TestSockIODeadlines(t *testing.T) {
	srv, _ := tcpPair(t)
	s := rawSock(t, srv)
	srv.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	start := time.Now()
	_, err := s.Read(make([]byte, 16))
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Read past its deadline = %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("Read waited %v", time.Since(start))
	}

	// The peer never reads: the buffers fill and the write waits.
	big := make([]byte, 64<<20)
	srv.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	n, err := s.Write(big)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Write past its deadline = %d, %v", n, err)
	}
	if n <= 0 || n >= 64<<20 {
		t.Fatalf("Write reported %d bytes written before the deadline: %v", n, err)
	}
}

// Closing the connection from another goroutine (CLIENT KILL, shutdown)
// ends a read that waits.
func TestSockIOCloseWakesRead(t *testing.T) {
	srv, _ := tcpPair(t)
	s := rawSock(t, srv)
	errc := make(chan error, 1)
	go func() {
		_, err := s.Read(make([]byte, 16))
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	srv.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Read on a closed conn = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the read")
	}
	if _, err := s.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Write on a closed conn = %v", err)
	}
}

// A peer that resets the connection gives the write an error, not a hang.
func TestSockIOPeerGone(t *testing.T) {
	srv, cli := tcpPair(t)
	s := rawSock(t, srv)
	cli.(*net.TCPConn).SetLinger(0)
	cli.Close()
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		_, err = s.Write(make([]byte, 1<<16))
		time.Sleep(time.Millisecond)
	}
	if err == nil {
		t.Fatal("writes to a reset connection kept succeeding")
	}
}

// Connections that are not sockets keep their own Read and Write.
func TestSockIONotASocket(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if rw := newSockIO(a); rw != io.ReadWriter(a) {
		t.Fatalf("newSockIO(pipe) = %T, want the pipe itself", rw)
	}
}
