package resp

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/stratakv/strata/lsm"
)

// holdMaxBytes bounds the replies a client hands to the replier: larger
// ones are sent by the client's goroutine, which waits for durability
// itself, so the replier's writes nearly always fit the socket's buffer.
const holdMaxBytes = 64 << 10

// A replier sends the replies of pipelines that wait for their writes to
// be durable (appendfsync always), from one goroutine that waits on the
// WAL, in the order the pipelines ended.
//
// Without it, each client's goroutine waits for the WAL object holding its
// writes, and a stored object wakes every one of them only to write its
// reply, before it goes back to reading its socket: a goroutine switch per
// durable write beside the one that delivers the next request, and the
// wait's lock and select. A client that hands its replies over (holdLocked)
// goes straight back to reading; its next pipeline, or its close, sends
// them first if the replier has not yet (sendHeldLocked), so replies keep
// their order and no client runs ahead of its durability.
//
// The replier never blocks on a client: it takes the client's write lock
// only if it is free (a client's goroutine holding it is about to send its
// held replies itself), and it writes only what the socket takes at once;
// the rest of a reply to a client that does not read goes out from a
// goroutine of its own, which holds the client's write lock until done.
type replier struct {
	once  sync.Once
	mu    sync.Mutex
	queue []heldReply
	wake  chan struct{}
	// spilled counts replies the socket did not take at once, finished by
	// a goroutine of their own.
	spilled atomic.Uint64
}

// heldReply is a client's replies waiting for write w to be durable.
type heldReply struct {
	c *client
	w lsm.WriteHandle
}

// add queues c's held replies, starting the replier's goroutine the first
// time.
func (r *replier) add(s *Server, c *client, w lsm.WriteHandle) {
	r.once.Do(func() {
		r.wake = make(chan struct{}, 1)
		go r.run(s.ctx)
	})
	r.mu.Lock()
	r.queue = append(r.queue, heldReply{c, w})
	first := len(r.queue) == 1
	r.mu.Unlock()
	if first {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
}

// run sends held replies until ctx ends (the server closes; its clients
// then send their own, sendHeldLocked in close).
func (r *replier) run(ctx context.Context) {
	var batch, retry []heldReply
	for {
		r.mu.Lock()
		batch = append(batch[:0], r.queue...)
		clear(r.queue)
		r.queue = r.queue[:0]
		r.mu.Unlock()
		if len(batch) == 0 {
			select {
			case <-r.wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		retry = retry[:0]
		for _, e := range batch {
			// Entries come in about the order of their writes: after the
			// first of a WAL object, the rest of it wait no more. An error
			// (the WAL failed) is settled into the replies by send.
			if err := e.w.Durable(ctx); err != nil && ctx.Err() != nil {
				return
			}
			if e.c.holdSeq.Load() != e.w.Seq() {
				continue // sent by the client's goroutine
			}
			if !e.c.wmu.TryLock() {
				retry = append(retry, e)
				continue
			}
			e.c.sendHeldBy(e.w)
		}
		if len(retry) > 0 {
			// A publisher holds the lock for a moment, or the client's
			// goroutine took it and is sending the replies itself (it
			// clears holdSeq first thing, so the next pass drops those):
			// try again after the others had a turn.
			r.mu.Lock()
			r.queue = append(r.queue, retry...)
			r.mu.Unlock()
			clear(retry)
			runtime.Gosched()
		}
		clear(batch)
	}
}

// holdLocked hands the pipeline's replies, which wait for the WAL, to the
// replier, to be sent once its writes are durable, instead of waiting
// here, if it may: they are small, go to a plain socket, and the
// connection stays open. It reports whether it did.
// REQUIRES: c.wmu held, c.waitsForWAL().
func (c *client) holdLocked() bool {
	if c.raw == nil || len(c.out) == 0 || len(c.out) > holdMaxBytes ||
		c.quit || c.killed.Load() {
		return false
	}
	w := c.s.db.LastWrite()
	if w.Seq() == 0 {
		return false // nothing to wait for
	}
	c.held = w
	c.holdSeq.Store(w.Seq())
	c.s.replier.add(c.s, c, w)
	return true
}

// sendHeldLocked sends replies held for durability that the replier has
// not sent yet, waiting for their writes if need be.
// REQUIRES: c.wmu held.
func (c *client) sendHeldLocked() error {
	if c.holdSeq.Load() == 0 {
		return nil
	}
	c.holdSeq.Store(0)
	return c.sendLocked(c.held)
}

// sendHeldBy is the replier's send of c's replies held for write w, which
// is durable (or failed). It releases c.wmu, now or, if the socket is
// full, from the goroutine that finishes the write.
// REQUIRES: c.wmu held.
func (c *client) sendHeldBy(w lsm.WriteHandle) {
	if c.holdSeq.Load() != w.Seq() {
		// Sent by the client's goroutine (which may have held newer ones).
		c.wmu.Unlock()
		return
	}
	c.holdSeq.Store(0)
	c.settleLocked(c.held)
	c.armWrite() // a deadline the client's goroutine set would expire
	n, err := c.raw.tryWrite(c.out)
	c.s.stats.netOut.Add(uint64(n))
	if err == nil && n < len(c.out) {
		rest := c.out[n:]
		c.s.replier.spilled.Add(1)
		go func() {
			_, err := c.sock.Write(rest)
			c.s.stats.netOut.Add(uint64(len(rest)))
			c.heldSentLocked(err)
		}()
		return
	}
	c.heldSentLocked(err)
}

// heldSentLocked ends the replier's send of held replies: it releases
// c.wmu, then closes the client if the write failed, or sends what
// publishers queued meanwhile.
// REQUIRES: c.wmu held.
func (c *client) heldSentLocked(err error) {
	c.resetOutLocked()
	c.wmu.Unlock()
	if err != nil {
		c.kill()
		return
	}
	c.drainPending()
}
