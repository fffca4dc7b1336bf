package resp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm"
	"github.com/stratakv/strata/resp/resptest"
)

// TestHeldRepliesKeepOrder: under appendfsync always, a client's replies
// come in the order of its commands whether the replier sends them or the
// client's goroutine does (a client that sends its next pipeline before
// reading the last one's replies makes its goroutine send them), and every
// write acknowledged is there to read.
func TestHeldRepliesKeepOrder(t *testing.T) {
	ts := startServer(t, Config{})
	const clients, rounds = 16, 60
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := resptest.Dial(t, ts.addr)
			key := fmt.Sprintf("n%d", w)
			n := 0
			for i := range rounds {
				// One pipeline, or two sent back to back before any reply
				// is read: INCRs with a GET between them.
				var req []byte
				want := 0
				for p := range 1 + i%2 {
					for range 1 + (i+p)%4 {
						req = resptest.AppendCommand(req, "INCR", key)
						want++
					}
					req = resptest.AppendCommand(req, "GET", key)
					want++
					if p == 0 && i%2 == 1 {
						c.SendRaw(req)
						req = nil
					}
				}
				c.SendRaw(req)
				for range want {
					got, err := c.TryReadReply()
					if err != nil {
						errs <- fmt.Errorf("client %d: %v", w, err)
						return
					}
					s := string(got)
					if strings.HasPrefix(s, ":") {
						n++
						if s != fmt.Sprintf(":%d\r\n", n) {
							errs <- fmt.Errorf("client %d: INCR = %q, want %d", w, s, n)
							return
						}
					} else if v := fmt.Sprint(n); s != fmt.Sprintf("$%d\r\n%s\r\n", len(v), v) {
						errs <- fmt.Errorf("client %d: GET = %q after %d INCRs", w, s, n)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// What was acknowledged survives a restart: the replies were sent
	// only once durable.
	addr := ts.addr
	ts.close()
	ts.open(addr)
	c := resptest.Dial(t, ts.addr)
	for w := range clients {
		got := string(c.Do("GET", fmt.Sprintf("n%d", w)))
		// rounds rounds of 1-4 INCRs per pipeline, two pipelines in odd rounds.
		want := 0
		for i := range rounds {
			for p := range 1 + i%2 {
				want += 1 + (i+p)%4
			}
		}
		if v := fmt.Sprint(want); got != fmt.Sprintf("$%d\r\n%s\r\n", len(v), v) {
			t.Fatalf("after restart n%d = %q, want %d", w, got, want)
		}
	}
}

// TestHeldRepliesSlowReader: a client that sends durable writes and never
// reads its replies fills its socket; the replier leaves what the socket
// does not take to a goroutine of its own, so other clients' durable
// replies keep coming.
func TestHeldRepliesSlowReader(t *testing.T) {
	ts := startServer(t, Config{})
	c := resptest.Dial(t, ts.addr)
	big := strings.Repeat("v", 60<<10) // a reply under holdMaxBytes
	do(t, c, "+OK\r\n", "SET", "big", big)

	slow := resptest.Dial(t, ts.addr)
	slow.SetTimeout(time.Minute)
	stop := make(chan struct{})
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			req := resptest.AppendCommand(nil, "SET", fmt.Sprintf("s%d", i), "x")
			req = resptest.AppendCommand(req, "GET", "big")
			if slow.TrySendRaw(req) != nil {
				return
			}
			// Time for the replier to send the replies before the next
			// pipeline comes, so that it is the replier (not the client's
			// goroutine, which sends held replies first) that finds the
			// socket full.
			time.Sleep(5 * time.Millisecond)
		}
	}()
	// 60 KB every 5 ms fills the socket's buffers (a few MB) within a
	// second or two.
	deadline := time.Now().Add(3 * time.Second)
	for ts.srv.replier.spilled.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	// Well under writeTimeout (30 s), which a blocked replier would make
	// every durable reply wait.
	c.SetTimeout(3 * time.Second)
	for i := range 50 {
		do(t, c, "+OK\r\n", "SET", fmt.Sprintf("k%d", i), "v")
	}
	if ts.srv.replier.spilled.Load() == 0 {
		t.Fatal("the slow client's replies never filled its socket")
	}
	close(stop)
	slow.Close()
	<-sent
	do(t, c, "$1\r\nv\r\n", "GET", "k49")
}

// TestHeldRepliesKeepWriteDeadline: the replier's writes renew the
// connection's write deadline as the client's own writes do. A deadline
// set by a reply the client's goroutine sent (a read's) once expired under
// a client whose later replies all went through the replier, and the
// replier's write failed and closed the connection (found by the soak
// test: every client dropped 30 s into the load).
func TestHeldRepliesKeepWriteDeadline(t *testing.T) {
	was := writeTimeout
	writeTimeout = 200 * time.Millisecond
	// A cleanup, not a defer: cleanups run last-in first-out, so this one
	// runs after the server's has stopped every goroutine that reads it.
	t.Cleanup(func() { writeTimeout = was })
	ts := startServer(t, Config{})
	c := resptest.Dial(t, ts.addr)
	do(t, c, "$-1\r\n", "GET", "k") // sets the deadline, from the client's goroutine
	for end := time.Now().Add(5 * writeTimeout); time.Now().Before(end); {
		do(t, c, "+OK\r\n", "SET", "k", "v")
	}
}

// TestHeldRepliesBeforeProtocolError: a protocol error that arrives while
// a durable write's reply is held (the WAL's PUT takes 200 ms here) is
// answered after that reply, never before it, and the write it follows is
// durable: the held reply's order is kept on the error's path too.
func TestHeldRepliesBeforeProtocolError(t *testing.T) {
	bkt := blob.NewFaultBucket(blob.NewMemBucket(), blob.FaultConfig{
		Latency: map[string]time.Duration{objstore.OpUpload: 200 * time.Millisecond},
	})
	ts := startServer(t, Config{}, bkt)
	c := resptest.Dial(t, ts.addr)
	c.SendRaw(resptest.AppendCommand(nil, "SET", "k", "v"))
	time.Sleep(50 * time.Millisecond) // the SET's pipeline has ended; its reply waits for the WAL
	c.SendRaw([]byte("*x\r\n"))
	expectReply(t, c, "+OK\r\n")
	expectClosed(t, c, "-ERR Protocol error: invalid multibulk length\r\n")
	other := resptest.Dial(t, ts.addr)
	do(t, other, "$1\r\nv\r\n", "GET", "k")
}

// TestHeldPipelineRunsBeforeTheLastIsDurable: a client that sends its next
// pipeline while the last one's replies wait for the WAL has it run at
// once, so its writes join the WAL's next object instead of waiting for
// the one in flight first (as a multiplexing client, which never waits for
// replies before sending, needs on a slow store). Its replies still leave
// only once durable, after the earlier ones.
func TestHeldPipelineRunsBeforeTheLastIsDurable(t *testing.T) {
	ts, gate, c := startHeldWrite(t)
	time.Sleep(50 * time.Millisecond) // its reply is held, its PUT stuck at the gate
	c.SendRaw(append(resptest.AppendCommand(nil, "SET", "b", "2"), resptest.AppendCommand(nil, "GET", "b")...))
	r := resptest.Dial(t, ts.addr)
	deadline := time.Now().Add(5 * time.Second)
	for string(r.Do("GET", "b")) != "$1\r\n2\r\n" {
		if time.Now().After(deadline) {
			t.Fatal("the second pipeline did not run while the first one's write waited for the WAL")
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.SetTimeout(200 * time.Millisecond)
	if got, err := c.TryReadReply(); err == nil {
		t.Fatalf("reply before the WAL upload: %q", got)
	}
	gate.release()
	c.SetTimeout(5 * time.Second)
	expectReply(t, c, "+OK\r\n")
	expectReply(t, c, "+OK\r\n")
	expectReply(t, c, "$1\r\n2\r\n")
	// Acknowledged means durable: both writes survive a restart.
	addr := ts.addr
	ts.close()
	ts.open(addr)
	r = resptest.Dial(t, ts.addr)
	do(t, r, "$1\r\n1\r\n", "GET", "a")
	do(t, r, "$1\r\n2\r\n", "GET", "b")
}

// TestHeldPipelinesFailInOrder: when the WAL is fenced while a client
// holds the replies of two pipelines, each one's replies from its first
// write on become the error, and the replies before (a PING) and the order
// are kept.
func TestHeldPipelinesFailInOrder(t *testing.T) {
	inner := blob.NewMemBucket()
	gate := &gateBucket{Bucket: inner}
	ts := startServer(t, Config{}, gate)
	defer gate.release()
	c := resptest.Dial(t, ts.addr)
	do(t, c, "+OK\r\n", "SET", "a", "1")
	gate.hold()
	c.SendRaw(append(resptest.AppendCommand(nil, "SET", "a", "2"), resptest.AppendCommand(nil, "GET", "a")...))
	time.Sleep(50 * time.Millisecond)
	c.SendRaw(append(resptest.AppendCommand(nil, "PING"), resptest.AppendCommand(nil, "SET", "a", "3")...))
	time.Sleep(50 * time.Millisecond)
	ctx := context.Background()
	db2, err := lsm.Open(ctx, inner, lsm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	gate.release()
	c.SetTimeout(5 * time.Second)
	for i, want := range []string{"-ERR strata: fenced", "-ERR strata: fenced", "+PONG\r\n", "-ERR strata: fenced"} {
		if got := c.ReadReply(); !bytes.HasPrefix(got, []byte(want)) {
			t.Fatalf("reply %d: %q, want %q", i, got, want)
		}
	}
	expectFencedOwnerSees(t, ts, db2, "a", "1")
}

// TestHeldFailureSparesStoredSegments: a failed wait turns into the error
// only the replies of held pipelines whose writes are not stored: one the
// WAL stored before the failure keeps its replies, as do the replies
// before a pipeline's first write and those of a pipeline without writes.
func TestHeldFailureSparesStoredSegments(t *testing.T) {
	gate := &gateBucket{Bucket: blob.NewMemBucket()}
	ts := startServer(t, Config{}, gate)
	t.Cleanup(gate.release)
	c := resptest.Dial(t, ts.addr)
	do(t, c, "+OK\r\n", "SET", "warm", "up") // acknowledged, so stored
	stored := ts.db.LastWrite()
	gate.hold()
	c.SendRaw(resptest.AppendCommand(nil, "SET", "a", "1"))
	deadline := time.Now().Add(5 * time.Second)
	for ts.db.LastWrite().Seq() == stored.Seq() {
		if time.Now().After(deadline) {
			t.Fatal("SET a 1 was not applied")
		}
		time.Sleep(time.Millisecond)
	}
	held := ts.db.LastWrite() // its upload waits at the gate
	if !stored.Stored() || held.Stored() {
		t.Fatalf("stored %v, held %v; want true, false", stored.Stored(), held.Stored())
	}
	// Three pipelines: SET; PING then SET; GET.
	cl := &client{out: []byte("+OK\r\n+PONG\r\n+OK\r\n$1\r\n1\r\n")}
	cl.held = []heldSeg{
		{end: 5, w: stored, wrote: true, writeMark: 0, afterMark: 1},
		{end: 17, w: held, wrote: true, writeMark: 12, afterMark: 1},
		{end: 24, w: held},
	}
	end := cl.settleHeldLocked(3, errors.New("boom"))
	if got, want := string(cl.out[:end]), "+OK\r\n+PONG\r\n-ERR boom\r\n$1\r\n1\r\n"; got != want {
		t.Fatalf("settled %q, want %q", got, want)
	}
	gate.release()
	expectReply(t, c, "+OK\r\n")
}
