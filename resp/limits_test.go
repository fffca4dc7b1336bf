package resp

import (
	"bytes"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stratakv/strata/resp/resptest"
)

// expectClosed reads want as the next reply, then the end of the
// connection.
func expectClosed(t *testing.T, c *resptest.Conn, want string) {
	t.Helper()
	got, err := c.TryReadReply()
	if err != nil {
		t.Fatalf("want %q, got error %v", want, err)
	}
	if string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got, err := c.TryReadReply(); !errors.Is(err, io.EOF) {
		t.Fatalf("connection not closed after %q: %q, %v", want, got, err)
	}
}

func expectReply(t *testing.T, c *resptest.Conn, want string) {
	t.Helper()
	if got := c.ReadReply(); string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestProtocolErrors: malformed requests get Redis's text and the
// connection is closed; the commands before them run; other clients go on.
func TestProtocolErrors(t *testing.T) {
	ts := startServer(t, Config{})
	other := resptest.Dial(t, ts.addr)
	other.Do("SET", "k", "v")
	for _, tc := range []struct{ in, want string }{
		{"*x\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"*1\r\n$x\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"*1\r\n$-1\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"*1\r\nPING\r\n", "-ERR Protocol error: expected '$', got 'P'\r\n"},
		{"*2000000\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"set a \"unbalanced\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n"},
		{"*1\r\n$600000000\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		// string2ll's numbers: no leading zeros, no -0 (the fuzz campaign's
		// differential check found these).
		{"*01\r\n$4\r\nPING\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"*-0\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"*1\r\n$04\r\nPING\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"*1\r\n$-0\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
	} {
		c := resptest.Dial(t, ts.addr)
		c.SendRaw([]byte("PING\r\n*1\r\n$4\r\nPING\r\n" + tc.in))
		expectReply(t, c, "+PONG\r\n")
		expectReply(t, c, "+PONG\r\n")
		expectClosed(t, c, tc.want)
		if got := other.Do("GET", "k"); string(got) != "$1\r\nv\r\n" {
			t.Fatalf("other client after %q: %q", tc.in, got)
		}
	}
}

// TestBulkTerminator: Redis skips the two bytes after a bulk's payload
// without checking that they are CRLF, so a client's bad terminator does
// not end its connection there.
func TestBulkTerminator(t *testing.T) {
	ts := startServer(t, Config{})
	c := resptest.Dial(t, ts.addr)
	c.SendRaw([]byte("*1\r\n$4\r\nPINGxx*2\r\n$4\r\nECHO\r\n$1\r\na\n\r*1\r\n$4\r\nPING\r\n"))
	for _, want := range []string{"+PONG\r\n", "$1\r\na\r\n", "+PONG\r\n"} {
		expectReply(t, c, want)
	}
}

// TestInlineAndEmpty: telnet-style inline commands with quotes, blank
// lines, and the empty multibulks *0 and *-1, which Redis ignores.
func TestInlineAndEmpty(t *testing.T) {
	ts := startServer(t, Config{})
	c := resptest.Dial(t, ts.addr)
	c.SendRaw([]byte("set a \"hello world\"\r\nget a\r\n  \r\n\r\nping\n*0\r\n*-1\r\nset b 'x y'\r\nget b\r\n" +
		"SET c \"\\x41\\n\"\r\nGET c\r\nEcHo  spaced   \r\n"))
	for _, want := range []string{"+OK\r\n", "$11\r\nhello world\r\n", "+PONG\r\n", "+OK\r\n", "$3\r\nx y\r\n",
		"+OK\r\n", "$2\r\nA\n\r\n", "$6\r\nspaced\r\n"} {
		expectReply(t, c, want)
	}
	// An inline command in pieces, as redis-cli or telnet may send it.
	for _, b := range []string{"GE", "T a", "\r", "\n"} {
		c.SendRaw([]byte(b))
		time.Sleep(5 * time.Millisecond)
	}
	expectReply(t, c, "$11\r\nhello world\r\n")
	// A multibulk in pieces.
	for _, b := range []string{"*2\r", "\n$3\r\nGET", "\r\n$1", "\r\na\r\n"} {
		c.SendRaw([]byte(b))
		time.Sleep(5 * time.Millisecond)
	}
	expectReply(t, c, "$11\r\nhello world\r\n")
}

func TestInlineTooBig(t *testing.T) {
	ts := startServer(t, Config{})
	c := resptest.Dial(t, ts.addr)
	c.SendRaw([]byte("PING\r\n" + strings.Repeat("a", 70*1024)))
	expectReply(t, c, "+PONG\r\n")
	expectClosed(t, c, "-ERR Protocol error: too big inline request\r\n")
	// Just under the limit is a command (unknown, here).
	c = resptest.Dial(t, ts.addr)
	c.SendRaw([]byte("x" + strings.Repeat(" a", 30*1024) + "\r\n"))
	if got := c.ReadReply(); !bytes.HasPrefix(got, []byte("-ERR unknown command 'x'")) {
		t.Fatalf("got %.80q", got)
	}
}

// TestBulkLimit: a bulk over proto-max-bulk-len is refused from its
// header, before its bytes arrive; other clients are served meanwhile.
func TestBulkLimit(t *testing.T) {
	ts := startServer(t, Config{ProtoMaxBulkLen: 1 << 20})
	other := resptest.Dial(t, ts.addr)
	c := resptest.Dial(t, ts.addr)
	// Exactly the limit is fine.
	big := strings.Repeat("x", 1<<20)
	if got := c.Do("SET", "big", big); string(got) != "+OK\r\n" {
		t.Fatalf("SET at the limit: %q", got)
	}
	c.SendRaw([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n"))
	expectClosed(t, c, "-ERR Protocol error: invalid bulk length\r\n")
	if got := other.Do("PING"); string(got) != "+PONG\r\n" {
		t.Fatalf("other: %q", got)
	}
}

// TestHugeDeclaredBulk: a client declaring a 1 GB bulk and sending only a
// little must not make the server allocate for it.
func TestHugeDeclaredBulk(t *testing.T) {
	ts := startServer(t, Config{ProtoMaxBulkLen: 2 << 30, ClientQueryBufferLimit: 4 << 30})
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var conns []*resptest.Conn
	for range 4 {
		c := resptest.Dial(t, ts.addr)
		c.SendRaw([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1000000000\r\nabc"))
		conns = append(conns, c)
	}
	time.Sleep(200 * time.Millisecond)
	other := resptest.Dial(t, ts.addr)
	if got := other.Do("PING"); string(got) != "+PONG\r\n" {
		t.Fatalf("other: %q", got)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 256<<20 {
		t.Fatalf("heap grew by %d MB for 4 declared 1 GB bulks", grew>>20)
	}
	for _, c := range conns {
		c.Close()
	}
}

// TestQueryBufferLimit: a command larger than client-query-buffer-limit
// closes the client (Redis sends nothing).
func TestQueryBufferLimit(t *testing.T) {
	ts := startServer(t, Config{ClientQueryBufferLimit: 64 << 10})
	c := resptest.Dial(t, ts.addr)
	c.SendRaw(resptest.AppendCommand(nil, "SET", "a", strings.Repeat("x", 32<<10)))
	expectReply(t, c, "+OK\r\n")
	c.TrySendRaw(resptest.AppendCommand(nil, "SET", "a", strings.Repeat("x", 128<<10)))
	if got, err := c.TryReadReply(); err == nil {
		t.Fatalf("reply after the query buffer limit: %q", got)
	}
	other := resptest.Dial(t, ts.addr)
	if got := other.Do("GET", "a"); len(got) != 32<<10+len("$32768\r\n\r\n") {
		t.Fatalf("other: %.40q", got)
	}
}

func TestMultibulkCount(t *testing.T) {
	ts := startServer(t, Config{})
	c := resptest.Dial(t, ts.addr)
	c.SendRaw([]byte("*1048577\r\n"))
	expectClosed(t, c, "-ERR Protocol error: invalid multibulk length\r\n")
	// The limit itself is accepted (an unknown command of 1048576 args).
	c = resptest.Dial(t, ts.addr)
	var b bytes.Buffer
	b.WriteString("*1048576\r\n$3\r\nFOO\r\n")
	for range 1048575 {
		b.WriteString("$1\r\na\r\n")
	}
	c.SetTimeout(30 * time.Second)
	go c.TrySendRaw(b.Bytes())
	if got := c.ReadReply(); !bytes.HasPrefix(got, []byte("-ERR unknown command 'FOO'")) {
		t.Fatalf("got %.80q", got)
	}
}

func TestMaxClients(t *testing.T) {
	ts := startServer(t, Config{MaxClients: 2})
	a := resptest.Dial(t, ts.addr)
	b := resptest.Dial(t, ts.addr)
	a.Do("PING")
	b.Do("PING")
	c := resptest.Dial(t, ts.addr)
	expectClosed(t, c, "-ERR max number of clients reached\r\n")
	b.Close()
	// The slot frees once the server sees b go.
	deadline := time.Now().Add(5 * time.Second)
	for {
		nc, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		nc.Write([]byte("PING\r\n"))
		buf := make([]byte, 64)
		nc.SetReadDeadline(time.Now().Add(time.Second))
		n, _ := nc.Read(buf)
		nc.Close()
		if string(buf[:n]) == "+PONG\r\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no slot after a client left: %q", buf[:n])
		}
		time.Sleep(20 * time.Millisecond)
	}
	// CONFIG SET maxclients takes effect for new connections.
	a.Do("CONFIG", "SET", "maxclients", "1")
	c = resptest.Dial(t, ts.addr)
	expectClosed(t, c, "-ERR max number of clients reached\r\n")
	if got := a.Do("INFO", "stats"); !bytes.Contains(got, []byte("rejected_connections:")) || bytes.Contains(got, []byte("rejected_connections:0\r\n")) {
		t.Fatalf("INFO stats: %s", got)
	}
}
