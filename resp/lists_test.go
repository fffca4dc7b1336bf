package resp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// What the corpus script cannot show for lists: other clients waking
// blocked ones, their order, disconnects, shutdown, restarts.

func listClient(t *testing.T, ts *testServer) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{
		Addr: ts.addr, Protocol: 2, DisableIdentity: true,
		PoolSize: 1, MaxRetries: -1, ReadTimeout: 10 * time.Second,
	})
	t.Cleanup(func() { c.Close() })
	return c
}

// waitBlocked waits until n clients are blocked on the server.
func waitBlocked(t *testing.T, ts *testServer, n int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for ts.srv.blocked.n.Load() != n {
		if time.Now().After(deadline) {
			t.Fatalf("blocked clients: %d, want %d", ts.srv.blocked.n.Load(), n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

type popResult struct {
	vals []string
	err  error
}

// blpop runs BLPOP on its own client in the background.
func blpop(t *testing.T, ts *testServer, timeout time.Duration, keys ...string) <-chan popResult {
	c := listClient(t, ts)
	ch := make(chan popResult, 1)
	go func() {
		v, err := c.BLPop(context.Background(), timeout, keys...).Result()
		ch <- popResult{v, err}
	}()
	return ch
}

func recvPop(t *testing.T, ch <-chan popResult) popResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("blocked client was not served")
		return popResult{}
	}
}

func expectPending(t *testing.T, ch <-chan popResult, d time.Duration) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("client served early: %v %v", r.vals, r.err)
	case <-time.After(d):
	}
}

func TestBLPopWokenByPush(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	ch := blpop(t, ts, 0, "k")
	waitBlocked(t, ts, 1)
	// Timeout 0 blocks until something is pushed.
	expectPending(t, ch, 300*time.Millisecond)
	pusher := listClient(t, ts)
	if err := pusher.RPush(ctx, "k", "v1", "v2").Err(); err != nil {
		t.Fatal(err)
	}
	if r := recvPop(t, ch); r.err != nil || !slices.Equal(r.vals, []string{"k", "v1"}) {
		t.Fatalf("BLPOP = %v, %v", r.vals, r.err)
	}
	waitBlocked(t, ts, 0)
	if got := pusher.LRange(ctx, "k", 0, -1).Val(); !slices.Equal(got, []string{"v2"}) {
		t.Fatalf("left %v", got)
	}
}

func TestBLPopFirstBlockedFirstServed(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	first := blpop(t, ts, 0, "k")
	waitBlocked(t, ts, 1)
	second := blpop(t, ts, 0, "k")
	waitBlocked(t, ts, 2)
	pusher := listClient(t, ts)
	pusher.RPush(ctx, "k", "a")
	if r := recvPop(t, first); !slices.Equal(r.vals, []string{"k", "a"}) {
		t.Fatalf("first = %v, %v", r.vals, r.err)
	}
	expectPending(t, second, 100*time.Millisecond)
	pusher.RPush(ctx, "k", "b")
	if r := recvPop(t, second); !slices.Equal(r.vals, []string{"k", "b"}) {
		t.Fatalf("second = %v, %v", r.vals, r.err)
	}

	// One push of two elements serves both, in order.
	first = blpop(t, ts, 0, "k")
	waitBlocked(t, ts, 1)
	second = blpop(t, ts, 0, "k")
	waitBlocked(t, ts, 2)
	pusher.RPush(ctx, "k", "c", "d")
	r1, r2 := recvPop(t, first), recvPop(t, second)
	if !slices.Equal(r1.vals, []string{"k", "c"}) || !slices.Equal(r2.vals, []string{"k", "d"}) {
		t.Fatalf("served %v and %v", r1.vals, r2.vals)
	}
	if pusher.LLen(ctx, "k").Val() != 0 {
		t.Fatalf("list left behind")
	}
}

func TestBLPopTimeout(t *testing.T) {
	ts := startServer(t, Config{})
	// go-redis rounds timeouts up to a second: a raw connection keeps the
	// fraction.
	for _, cmd := range []string{"BLPOP k 0.2", "BRPOP k1 k2 0.2", "BLMOVE k d LEFT LEFT 0.2", "BRPOPLPUSH k d 0.2"} {
		rc := dialRaw(t, ts)
		start := time.Now()
		rc.send(t, cmd)
		rc.expect(t, "*-1\r\n")
		if el := time.Since(start); el < 195*time.Millisecond || el > 2*time.Second {
			t.Fatalf("%s timed out after %v", cmd, el)
		}
	}
	waitBlocked(t, ts, 0)
}

func TestBLPopSeveralKeys(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	ch := blpop(t, ts, 0, "k1", "k2", "k3")
	waitBlocked(t, ts, 1)
	listClient(t, ts).LPush(ctx, "k2", "x")
	if r := recvPop(t, ch); !slices.Equal(r.vals, []string{"k2", "x"}) {
		t.Fatalf("BLPOP = %v, %v", r.vals, r.err)
	}
	// A client blocked on several keys, woken through each, is served once.
	c := listClient(t, ts)
	ch2 := make(chan popResult, 1)
	go func() {
		v, err := c.BRPop(ctx, 0, "a", "b").Result()
		ch2 <- popResult{v, err}
	}()
	waitBlocked(t, ts, 1)
	pusher := listClient(t, ts)
	pipe := pusher.Pipeline()
	pipe.RPush(ctx, "b", "1")
	pipe.RPush(ctx, "a", "2")
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if r := recvPop(t, ch2); !slices.Equal(r.vals, []string{"b", "1"}) && !slices.Equal(r.vals, []string{"a", "2"}) {
		t.Fatalf("BRPOP = %v, %v", r.vals, r.err)
	}
	if n := pusher.LLen(ctx, "a").Val() + pusher.LLen(ctx, "b").Val(); n != 1 {
		t.Fatalf("%d elements left, want 1", n)
	}
}

func TestBLMoveWokenByPush(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	c := listClient(t, ts)
	got := make(chan string, 1)
	go func() { got <- c.BLMove(ctx, "src", "dst", "LEFT", "RIGHT", 0).Val() }()
	waitBlocked(t, ts, 1)
	// A client blocked on dst: BLMOVE's push into dst must wake it (dst is
	// one of BLMOVE's keys).
	ch := blpop(t, ts, 0, "dst")
	waitBlocked(t, ts, 2)
	pusher := listClient(t, ts)
	pusher.RPush(ctx, "src", "v")
	select {
	case v := <-got:
		if v != "v" {
			t.Fatalf("BLMOVE = %q", v)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("BLMOVE not served")
	}
	if r := recvPop(t, ch); !slices.Equal(r.vals, []string{"dst", "v"}) {
		t.Fatalf("BLPOP dst = %v, %v", r.vals, r.err)
	}

	// LMOVE into a key wakes its waiters too; so does BRPOPLPUSH's.
	ch = blpop(t, ts, 0, "d2")
	waitBlocked(t, ts, 1)
	pusher.RPush(ctx, "s2", "w")
	if v := pusher.LMove(ctx, "s2", "d2", "LEFT", "LEFT").Val(); v != "w" {
		t.Fatalf("LMOVE = %q", v)
	}
	if r := recvPop(t, ch); !slices.Equal(r.vals, []string{"d2", "w"}) {
		t.Fatalf("BLPOP d2 = %v, %v", r.vals, r.err)
	}
	go func() { got <- c.BRPopLPush(ctx, "s3", "d3", 0).Val() }()
	waitBlocked(t, ts, 1)
	pusher.LPush(ctx, "s3", "x", "y")
	if v := <-got; v != "x" {
		t.Fatalf("BRPOPLPUSH = %q", v)
	}
	if got := pusher.LRange(ctx, "d3", 0, -1).Val(); !slices.Equal(got, []string{"x"}) {
		t.Fatalf("d3 = %v", got)
	}
}

// A blocked BLMOVE whose destination turned into another type is ended with
// WRONGTYPE when served, and the source keeps its element.
func TestBLMoveWrongTypeDestination(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	c := listClient(t, ts)
	errc := make(chan error, 1)
	go func() { errc <- c.BLMove(ctx, "src", "dst", "LEFT", "RIGHT", 0).Err() }()
	waitBlocked(t, ts, 1)
	pusher := listClient(t, ts)
	pusher.Set(ctx, "dst", "str", 0)
	pusher.RPush(ctx, "src", "v")
	if err := <-errc; err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
		t.Fatalf("BLMOVE err = %v", err)
	}
	if n := pusher.LLen(ctx, "src").Val(); n != 1 {
		t.Fatalf("src has %d elements", n)
	}
}

// Once blocked, a key that becomes another type does not end the wait
// (Redis wakes blocked clients for lists only).
func TestBLPopIgnoresOtherTypesOnceBlocked(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	ch := blpop(t, ts, 0, "s", "l")
	waitBlocked(t, ts, 1)
	pusher := listClient(t, ts)
	pusher.Set(ctx, "s", "str", 0)
	expectPending(t, ch, 100*time.Millisecond)
	pusher.RPush(ctx, "l", "v")
	if r := recvPop(t, ch); r.err != nil || !slices.Equal(r.vals, []string{"l", "v"}) {
		t.Fatalf("BLPOP = %v, %v", r.vals, r.err)
	}
}

// rawConn is a bare connection, to disconnect while blocked or read the
// replies of a pipeline one at a time.
type rawConn struct {
	net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, ts *testServer) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{nc, bufio.NewReader(nc)}
}

func (rc *rawConn) send(t *testing.T, cmds ...string) {
	t.Helper()
	var b strings.Builder
	for _, c := range cmds {
		b.WriteString(c + "\r\n") // inline commands
	}
	if _, err := rc.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
}

// expect reads exactly want from the connection.
func (rc *rawConn) expect(t *testing.T, want string) {
	t.Helper()
	rc.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, len(want))
	if _, err := io.ReadFull(rc.r, got); err != nil || string(got) != want {
		t.Fatalf("read %q, %v; want %q", got, err, want)
	}
}

func TestBLPopDisconnectedClientTakesNothing(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	rc := dialRaw(t, ts)
	rc.send(t, "BLPOP k 0")
	waitBlocked(t, ts, 1)
	rc.Close()
	waitBlocked(t, ts, 0) // the server noticed
	pusher := listClient(t, ts)
	pusher.RPush(ctx, "k", "v")
	time.Sleep(50 * time.Millisecond)
	if got := pusher.LRange(ctx, "k", 0, -1).Val(); !slices.Equal(got, []string{"v"}) {
		t.Fatalf("list = %v, want [v]", got)
	}

	// A disconnected client in front of the queue does not hold up the
	// next one.
	rc = dialRaw(t, ts)
	rc.send(t, "BLPOP q 0")
	waitBlocked(t, ts, 1)
	ch := blpop(t, ts, 0, "q")
	waitBlocked(t, ts, 2)
	rc.Close()
	waitBlocked(t, ts, 1)
	pusher.RPush(ctx, "q", "x")
	if r := recvPop(t, ch); !slices.Equal(r.vals, []string{"q", "x"}) {
		t.Fatalf("BLPOP = %v, %v", r.vals, r.err)
	}
}

// The replies before a blocking command in a pipeline are sent before it
// blocks; the commands after it run once it is served.
func TestBLPopInPipeline(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	rc := dialRaw(t, ts)
	rc.send(t, "RPUSH other 1", "BLPOP k 0", "PING", "LLEN other")
	rc.expect(t, ":1\r\n")
	waitBlocked(t, ts, 1)
	listClient(t, ts).RPush(ctx, "k", "v")
	rc.expect(t, "*2\r\n$1\r\nk\r\n$1\r\nv\r\n+PONG\r\n:1\r\n")
	// Commands sent while blocked run after it, in order.
	rc.send(t, "BRPOP k 0")
	waitBlocked(t, ts, 1)
	rc.send(t, "PING", "ECHO hi")
	time.Sleep(50 * time.Millisecond)
	listClient(t, ts).RPush(ctx, "k", "w")
	rc.expect(t, "*2\r\n$1\r\nk\r\n$1\r\nw\r\n+PONG\r\n$2\r\nhi\r\n")
}

func TestBlockingInMulti(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	c := listClient(t, ts)
	start := time.Now()
	var blp *redis.StringSliceCmd
	var blm *redis.StringCmd
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		blp = p.BLPop(ctx, 0, "missing")
		blm = p.BLMove(ctx, "missing", "dst", "LEFT", "RIGHT", 0)
		return nil
	})
	if !errors.Is(err, redis.Nil) || !errors.Is(blp.Err(), redis.Nil) || !errors.Is(blm.Err(), redis.Nil) {
		t.Fatalf("EXEC err %v, BLPOP %v, BLMOVE %v", err, blp.Err(), blm.Err())
	}
	if el := time.Since(start); el > time.Second {
		t.Fatalf("MULTI blocked for %v", el)
	}
	// And a push in EXEC wakes a blocked client.
	ch := blpop(t, ts, 0, "k")
	waitBlocked(t, ts, 1)
	if _, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.RPush(ctx, "k", "a", "b")
		p.LPop(ctx, "k")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if r := recvPop(t, ch); !slices.Equal(r.vals, []string{"k", "b"}) {
		t.Fatalf("BLPOP = %v, %v", r.vals, r.err)
	}
}

func TestCloseWakesBlockedClients(t *testing.T) {
	ts := startServer(t, Config{})
	rc := dialRaw(t, ts)
	rc.send(t, "BLPOP k 0")
	rc2 := dialRaw(t, ts)
	rc2.send(t, "BLMOVE a b LEFT RIGHT 0")
	waitBlocked(t, ts, 2)
	done := make(chan struct{})
	go func() { ts.close(); close(done) }()
	rc.expect(t, "*-1\r\n")
	rc2.expect(t, "*-1\r\n")
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
}

func TestListsRestart(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	c := listClient(t, ts)
	pipe := c.Pipeline()
	pipe.RPush(ctx, "l", "a", "b", "c", "d")
	pipe.LPush(ctx, "l", "z")
	pipe.LSet(ctx, "l", 1, "A")
	pipe.LInsert(ctx, "l", "AFTER", "b", "b2")
	pipe.LRem(ctx, "l", 1, "c")
	pipe.RPopLPush(ctx, "l", "m")
	pipe.LMove(ctx, "l", "m", "LEFT", "RIGHT")
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// A pop served to a blocked client is durable too.
	ch := blpop(t, ts, 0, "w")
	waitBlocked(t, ts, 1)
	c.RPush(ctx, "w", "1", "2")
	if r := recvPop(t, ch); !slices.Equal(r.vals, []string{"w", "1"}) {
		t.Fatalf("BLPOP = %v, %v", r.vals, r.err)
	}
	ts.restart()
	c = listClient(t, ts)
	for key, want := range map[string][]string{"l": {"A", "b", "b2"}, "m": {"d", "z"}, "w": {"2"}} {
		if got, err := c.LRange(ctx, key, 0, -1).Result(); err != nil || !slices.Equal(got, want) {
			t.Errorf("%s = %v, %v; want %v", key, got, err, want)
		}
	}
	if v, _ := c.LPos(ctx, "l", "b2", redis.LPosArgs{}).Result(); v != 2 {
		t.Errorf("LPOS = %d", v)
	}
}

// TestRecountArray: an array reply whose header announced more elements
// than followed it is rewritten to the count that did, its elements intact,
// and what was in the buffer before it untouched.
func TestRecountArray(t *testing.T) {
	out := []byte("+OK\r\n")
	mark := len(out)
	out = append(out, "*12\r\n$1\r\na\r\n$2\r\nbc\r\n"...)
	if got, want := string(recountArray(out, mark, 12, 2)), "+OK\r\n*2\r\n$1\r\na\r\n$2\r\nbc\r\n"; got != want {
		t.Errorf("recount 12 -> 2: %q, want %q", got, want)
	}
	out = append(out[:mark], "*3\r\n"...)
	if got, want := string(recountArray(out, mark, 3, 0)), "+OK\r\n*0\r\n"; got != want {
		t.Errorf("recount 3 -> 0: %q, want %q", got, want)
	}
}

// TestLRangeWhileShortened: LRANGE writes a list's elements straight into
// its reply after a count taken from the list's length, so a client that
// pops elements meanwhile makes it send fewer than it announced. Every
// reply must still parse (go-redis reads the announced count of bulks,
// and a wrong header desynchronizes the connection) and hold a run of
// consecutive elements ending at the list's last.
func TestLRangeWhileShortened(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	reader, popper := listClient(t, ts), listClient(t, ts)
	const n = 3000
	vals := make([]any, n)
	for i := range vals {
		vals[i] = i
	}
	if err := popper.RPush(ctx, "l", vals...).Err(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		for range n - 1 {
			if err := popper.LPop(ctx, "l").Err(); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for popping := true; popping; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			popping = false
		default:
		}
		got, err := reader.LRange(ctx, "l", 0, -1).Result()
		if err != nil {
			t.Fatalf("LRANGE while popping: %v", err)
		}
		if len(got) == 0 || got[len(got)-1] != "2999" {
			t.Fatalf("LRANGE while popping: %d elements ending %v, want a run ending 2999", len(got), got[max(len(got)-1, 0):])
		}
		for i := 1; i < len(got); i++ {
			if a, b := got[i-1], got[i]; atoi(t, b) != atoi(t, a)+1 {
				t.Fatalf("LRANGE while popping: %s then %s", a, b)
			}
		}
	}
	if got := reader.LRange(ctx, "l", 0, -1).Val(); !slices.Equal(got, []string{"2999"}) {
		t.Fatalf("left %v", got)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("element %q: %v", s, err)
	}
	return n
}
