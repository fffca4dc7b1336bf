package resp

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/redcon"

	"github.com/stratakv/strata/lsm"
)

// maxPending bounds the pub/sub messages and MONITOR lines queued for one
// client that does not read them (Redis's client-output-buffer-limit for
// pubsub clients is 32 MB); past it the client is closed.
const maxPending = 32 << 20

// writeTimeout bounds one write to a client's socket (a variable for
// tests).
var writeTimeout = 30 * time.Second

// client is one connection. Its goroutine reads a pipeline of commands,
// runs them, and writes their replies; other goroutines only queue
// pub/sub messages and MONITOR lines (pending) and read the info fields.
type client struct {
	s       *Server
	id      uint64
	nc      net.Conn
	sock    io.ReadWriter // nc, or raw I/O on its socket (sockio.go)
	raw     *sockIO       // sock if it is raw I/O, else nil
	rd      *reader
	addr    string
	laddr   string
	created time.Time

	ctx    context.Context // canceled when the client is killed
	cancel context.CancelFunc

	// wmu is held by whoever writes to the socket: the client's goroutine
	// for a whole pipeline, or a publisher that finds it free.
	wmu sync.Mutex
	out []byte // replies of the current pipeline

	pmu     sync.Mutex
	pending []byte // messages queued by other clients

	// Read by CLIENT LIST from other goroutines.
	info struct {
		sync.Mutex
		name  string
		flags string
	}
	lastActive atomic.Int64 // unix nanoseconds
	lastCmd    atomic.Pointer[command]
	infoDB     atomic.Int32
	killed     atomic.Bool

	// Owned by the client's goroutine.
	db      int
	authed  bool
	multi   *multiState
	txErr   string // the first store error of the EXEC running (see call.fail)
	watched []watchedKey
	// watching mirrors len(watched) > 0 for INFO, read by other goroutines.
	watching atomic.Bool
	subs     map[string]bool
	psubs    map[string]bool
	monitor  bool
	quit     bool
	calls    [2]call // the running command, and one inside EXEC
	depth    int
	// unwarmed is how many of the commands that follow are those whose
	// keys warmKeys already asked the store to warm.
	unwarmed int
	// mark is when the pipeline was read or the last command ended: the
	// next command's start, which saves a clock read per command. It is
	// monotonic time since monoBase: reading only the monotonic clock costs
	// half of time.Now, which reads the wall clock too (6% of a pipelined
	// GET's CPU went to time.Now).
	mark time.Duration

	// Durability of the current pipeline: the offset in out of the first
	// reply to a write, and how many replies follow from there.
	wrote     bool
	writeBy   time.Time // the write deadline set; guarded by wmu
	writeMark int
	afterMark int

	// Replies handed to the server's replier (replier.go) wait at the
	// front of out, one segment per pipeline, oldest first; holdSeq is the
	// newest segment's write seq while any is held (0: none). Both are
	// written under wmu; the replier reads holdSeq without it.
	held    []heldSeg
	holdSeq atomic.Uint64
}

// heldSeg is a pipeline's replies held for durability: out[start:end],
// start being the previous segment's end (0 for the first). A pipeline
// that wrote waits for w, the newest write when it ended, and its replies
// from writeMark on (afterMark of them) become the error if w cannot be
// made durable; one that did not write follows the segment before it, with
// that segment's w.
type heldSeg struct {
	end       int
	w         lsm.WriteHandle
	wrote     bool
	writeMark int
	afterMark int
}

// monoBase is the origin of client.mark.
var monoBase = time.Now()

func newClient(s *Server, nc net.Conn, cfg Config) *client {
	c := &client{
		s: s, id: s.nextID.Add(1), nc: nc,
		addr: nc.RemoteAddr().String(), laddr: nc.LocalAddr().String(),
		created: time.Now(), authed: cfg.RequirePass == "",
	}
	c.sock = newSockIO(nc)
	c.raw, _ = c.sock.(*sockIO)
	c.rd = newReader(c.sock, cfg.ProtoMaxBulkLen, cfg.ClientQueryBufferLimit)
	c.ctx, c.cancel = context.WithCancel(s.ctx)
	c.lastActive.Store(time.Now().UnixNano())
	return c
}

// serve is the client's goroutine. It runs the commands the buffer holds
// (a pipeline) before it sends their replies in one write.
func (c *client) serve() {
	defer c.close()
	for {
		args, err := c.rd.next()
		c.s.stats.netIn.Add(c.rd.takeRead())
		if c.killed.Load() {
			// The read can win against kill's deadline: the poller checks
			// it before the read system call, which finds the command a
			// client sent after CLIENT KILL answered. It is not run.
			return
		}
		if err != nil {
			c.readFailed(err)
			return
		}
		now := time.Now()
		c.lastActive.Store(now.UnixNano())
		c.s.pacer.MarkBusy(now)
		c.mark = now.Sub(monoBase)
		c.wmu.Lock()
		if err := c.sendStoredLocked(); err != nil {
			c.wmu.Unlock()
			return
		}
		for {
			c.execute(args)
			if c.quit || c.killed.Load() {
				break
			}
			var more bool
			if args, more, err = c.rd.buffered(); !more {
				break
			}
		}
		durable := c.waitsForWAL()
		if len(c.out) > 0 && !durable && len(c.held) == 0 {
			c.yieldBeforeReply()
		}
		if (durable || len(c.held) > 0) && err == nil && c.holdLocked() {
			c.wmu.Unlock()
			continue
		}
		ferr := c.flushLocked()
		c.wmu.Unlock()
		c.drainPending()
		if ferr != nil || c.quit || c.killed.Load() {
			return
		}
		if err != nil {
			c.readFailed(err) // after the replies of the commands before it
			return
		}
	}
}

// yieldBeforeReply lets the other clients the network poller found ready
// with this one run their commands before this one's replies are written,
// so the replies of one such pass go out together, as redis-server writes
// a pass's replies only at its end. Go's poller queues the goroutines it
// finds ready in the reverse of the kernel's order; a client served early
// in one pass, replying at once, is ready early for the next and served
// late in it, so its waits alternate short and long and the tail is two
// passes. Yielding (to the global run queue, which is taken once the
// ready goroutines have run) keeps the clients in step: side by side with
// the server on one core, 50 clients of GET -P 16 saw p99 1.18-1.30 ms
// against 1.49-1.98 (redis-server 1.10-1.23), and SET, INCR, LPUSH and
// HSET at -P 16 ran 11-37% faster. A durable pipeline skips it: its wait
// for the WAL already parks it.
func (c *client) yieldBeforeReply() { runtime.Gosched() }

// readFailed answers a protocol error with Redis's text before the
// connection closes; a closed connection needs no answer.
func (c *client) readFailed(err error) {
	msg := ""
	var pe *protocolError
	switch {
	case errors.As(err, &pe):
		msg = pe.msg
	case strings.HasPrefix(err.Error(), "Protocol error"):
		msg = "ERR " + err.Error()
	}
	if msg == "" {
		if tc, ok := c.nc.(*tls.Conn); ok && !tc.ConnectionState().HandshakeComplete {
			// Redis logs these at verbose: a client that does not speak
			// TLS, or lacks a valid certificate, is not the server's fault.
			c.s.log.Debug("TLS handshake failed", "addr", c.addr, "err", err)
		}
		return
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.sendHeldLocked() != nil {
		return
	}
	c.out = redcon.AppendError(c.out, msg)
	c.flushLocked()
}

// flushLocked sends the pipeline's replies: under appendfsync always, only
// after every write the client made is durable. If that fails, the replies
// from the first write on become the error: nothing not durable is
// acknowledged.
// REQUIRES: c.wmu held.
func (c *client) flushLocked() error {
	if len(c.held) == 0 && !c.waitsForWAL() {
		// Nothing to wait for: the replies of every pipeline outside
		// appendfsync always.
		c.wrote, c.afterMark = false, 0
		err := c.writeOutLocked(len(c.out))
		c.resetOutLocked()
		return err
	}
	if len(c.out) > c.heldEnd() || c.wrote {
		c.pushLocked(c.segmentLocked())
	}
	return c.sendHeldLocked()
}

// resetOutLocked empties the reply buffer, dropping a large one.
// REQUIRES: c.wmu held.
func (c *client) resetOutLocked() {
	if cap(c.out) > 1<<20 {
		c.out = nil
	} else {
		c.out = c.out[:0]
	}
}

// waitsForWAL reports whether the pipeline's replies must wait for its
// writes to be durable: it made a write, under appendfsync always.
func (c *client) waitsForWAL() bool { return c.wrote && c.s.config().AppendFsync == "always" }

// armWrite makes sure the next write has at least writeTimeout/2 before
// its deadline. Setting a deadline updates a runtime timer, so it is reset
// only once half of it has passed, not before every reply.
// REQUIRES: c.wmu held.
func (c *client) armWrite() {
	now := time.Now()
	if now.Add(writeTimeout / 2).Before(c.writeBy) {
		return
	}
	c.writeBy = now.Add(writeTimeout)
	c.nc.SetWriteDeadline(c.writeBy)
}

// ctxForDurable is the context of durability waits: not canceled by
// shutdown, which flushes the WAL before closing the engine.
func (s *Server) ctxForDurable() context.Context { return context.Background() }

// push queues a message for the client (pub/sub, MONITOR) and sends it
// now unless the client's goroutine is writing, in which case that
// goroutine sends it after its replies.
func (c *client) push(msg []byte) {
	c.pmu.Lock()
	if len(c.pending)+len(msg) > maxPending {
		c.pmu.Unlock()
		c.s.log.Warn("closing client over its pub/sub output limit", "id", c.id, "addr", c.addr)
		c.kill()
		return
	}
	c.pending = append(c.pending, msg...)
	c.pmu.Unlock()
	c.drainPending()
}

// drainPending writes queued messages whenever nobody else is writing.
// Both the client's goroutine and publishers call it after releasing
// wmu, so a message queued while wmu was held is never left behind.
func (c *client) drainPending() {
	for {
		c.pmu.Lock()
		empty := len(c.pending) == 0
		c.pmu.Unlock()
		if empty || !c.wmu.TryLock() {
			return
		}
		if c.holdSeq.Load() != 0 {
			// Replies held for durability go first; whoever sends them
			// drains after.
			c.wmu.Unlock()
			return
		}
		c.writePendingLocked()
		c.wmu.Unlock()
	}
}

// REQUIRES: c.wmu held.
func (c *client) writePendingLocked() {
	c.pmu.Lock()
	msg := c.pending
	c.pending = nil
	c.pmu.Unlock()
	if len(msg) == 0 || c.killed.Load() {
		return
	}
	c.armWrite()
	if _, err := c.sock.Write(msg); err != nil {
		c.kill()
	}
	c.s.stats.netOut.Add(uint64(len(msg)))
}

// kill closes the client from any goroutine (CLIENT KILL, limits).
func (c *client) kill() {
	c.killed.Store(true)
	c.cancel()
	c.stopReading()
}

// stopReading makes the client's goroutine stop after the pipeline it is
// running.
func (c *client) stopReading() {
	c.nc.SetReadDeadline(time.Unix(1, 0))
}

func (c *client) close() {
	c.wmu.Lock()
	c.sendHeldLocked()
	c.wmu.Unlock()
	c.cancel()
	c.unwatchAll()
	c.s.pubsub.unsubscribeAll(c)
	if c.monitor {
		c.s.monitors.remove(c)
	}
	c.nc.Close()
	c.s.removeClient(c)
}

// setInfo updates the fields CLIENT LIST shows, without a lock: it runs
// for every command.
func (c *client) setInfo(cmd *command) {
	c.lastCmd.Store(cmd)
	c.infoDB.Store(int32(c.db))
}
