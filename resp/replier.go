package resp

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/tidwall/redcon"

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
// goes straight back to reading. Its next pipeline sends those whose
// writes are durable already (sendStoredLocked) and runs without waiting
// for the rest, its replies held behind them in the client's buffer, one
// segment per pipeline: a client that sends without waiting for replies
// has its writes join the WAL's next object, not the one after the object
// in flight. Its close, or a pipeline whose replies cannot be held, sends
// them all first (sendHeldLocked). Replies keep their order, and none
// leaves before the writes it follows are durable.
//
// The replier never blocks on a client: it takes the client's write lock
// only if it is free (else it tries again after the other clients: the
// client's goroutine holds it while it runs a pipeline or sends held
// replies itself), and it writes only what the socket takes at once;
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
			if e.c.holdSeq.Load() == 0 {
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

// maxHeld bounds the pipelines whose replies a client holds at once: a
// client that keeps sending while its writes wait for the WAL then waits
// for them before it runs more.
const maxHeld = 16

// holdLocked hands the pipeline's replies, which follow any held before
// them in c.out, to the replier, to be sent once its writes (and those of
// the pipelines before it) are durable, instead of waiting here, if it
// may: they are small, go to a plain socket, and the connection stays
// open. A pipeline that did not write is held only behind one that did.
// It reports whether it did.
// REQUIRES: c.wmu held, c.waitsForWAL() or held replies.
func (c *client) holdLocked() bool {
	if c.raw == nil || len(c.out) == c.heldEnd() || len(c.out) > holdMaxBytes ||
		len(c.held) == maxHeld || c.quit || c.killed.Load() {
		return false
	}
	seg := c.segmentLocked()
	if seg.w.Seq() == 0 {
		return false // nothing to wait for
	}
	c.pushLocked(seg)
	if seg.wrote {
		// A segment that did not write goes with the one before it.
		c.s.replier.add(c.s, c, seg.w)
	}
	return true
}

// segmentLocked makes the running pipeline's replies, c.out past the held
// ones, a segment: one that wrote under appendfsync always waits for the
// newest write; any other for what the segment before it waits for, or
// for nothing.
// REQUIRES: c.wmu held.
func (c *client) segmentLocked() heldSeg {
	seg := heldSeg{end: len(c.out), wrote: c.waitsForWAL(), writeMark: c.writeMark, afterMark: c.afterMark}
	if seg.wrote {
		seg.w = c.s.db.LastWrite()
	} else if len(c.held) > 0 {
		seg.w = c.held[len(c.held)-1].w
	}
	return seg
}

// pushLocked holds seg after the held segments; the next pipeline starts
// afresh.
// REQUIRES: c.wmu held.
func (c *client) pushLocked(seg heldSeg) {
	c.held = append(c.held, seg)
	c.wrote, c.afterMark = false, 0
	c.holdSeq.Store(seg.w.Seq())
}

// heldEnd is where the held replies end in c.out.
// REQUIRES: c.wmu held.
func (c *client) heldEnd() int {
	if len(c.held) == 0 {
		return 0
	}
	return c.held[len(c.held)-1].end
}

// sendStoredLocked starts a pipeline: it sends the held replies whose
// writes are durable already, without waiting for the rest, so that the
// pipeline's writes join the WAL's next object rather than the one after
// it. A client holding maxHeld pipelines waits for them all first.
// REQUIRES: c.wmu held.
func (c *client) sendStoredLocked() error {
	if len(c.held) == maxHeld {
		return c.sendHeldLocked()
	}
	n := 0
	for n < len(c.held) && c.held[n].w.Stored() {
		n++
	}
	if n == 0 {
		return nil
	}
	return c.sendFirstLocked(n, nil)
}

// sendHeldLocked sends every held reply, waiting for their writes if need
// be.
// REQUIRES: c.wmu held.
func (c *client) sendHeldLocked() error {
	if len(c.held) == 0 {
		return nil
	}
	n := len(c.held)
	return c.sendFirstLocked(n, c.held[n-1].w.Durable(c.s.ctxForDurable()))
}

// sendFirstLocked sends the first n held segments, whose wait ended with
// err (nil: durable).
// REQUIRES: c.wmu held.
func (c *client) sendFirstLocked(n int, err error) error {
	end := c.settleHeldLocked(n, err)
	werr := c.writeOutLocked(end)
	c.dropSentLocked(n, end)
	return werr
}

// writeOutLocked writes the first n bytes of c.out.
// REQUIRES: c.wmu held.
func (c *client) writeOutLocked(n int) error {
	if n == 0 {
		return nil
	}
	c.armWrite()
	_, err := c.sock.Write(c.out[:n])
	c.s.stats.netOut.Add(uint64(n))
	return err
}

// settleHeldLocked settles the first n held segments with their wait's
// outcome err and returns the length of their replies at the front of
// c.out: if err is not nil, the replies of each one whose writes are not
// stored, from its first write on, become the error: nothing not durable
// is acknowledged. (The WAL stores in order: those stored come first.)
// REQUIRES: c.wmu held.
func (c *client) settleHeldLocked(n int, err error) int {
	end := c.held[n-1].end
	if err == nil {
		return end
	}
	msg := errorText(err)
	out := make([]byte, 0, len(c.out))
	start := 0
	for _, sg := range c.held[:n] {
		if sg.wrote && !sg.w.Stored() {
			out = append(out, c.out[start:sg.writeMark]...)
			for range sg.afterMark {
				out = redcon.AppendError(out, msg)
			}
		} else {
			out = append(out, c.out[start:sg.end]...)
		}
		start = sg.end
	}
	settled := len(out)
	c.shiftHeldLocked(n, settled-end)
	c.out = append(out, c.out[end:]...)
	return settled
}

// shiftHeldLocked moves the offsets of the held segments from the n-th
// on, and the running pipeline's, by delta bytes.
// REQUIRES: c.wmu held.
func (c *client) shiftHeldLocked(n, delta int) {
	for i := n; i < len(c.held); i++ {
		c.held[i].end += delta
		c.held[i].writeMark += delta
	}
	if c.wrote {
		c.writeMark += delta
	}
}

// dropSentLocked removes the first n held segments, whose replies, the
// first sent bytes of c.out, went out.
// REQUIRES: c.wmu held.
func (c *client) dropSentLocked(n, sent int) {
	c.out = c.out[:copy(c.out, c.out[sent:])]
	c.shiftHeldLocked(n, -sent)
	c.held = append(c.held[:0], c.held[n:]...)
	var seq uint64
	if len(c.held) > 0 {
		seq = c.held[len(c.held)-1].w.Seq()
	}
	c.holdSeq.Store(seq)
	if len(c.out) == 0 {
		c.resetOutLocked()
	}
}

// sendHeldBy is the replier's send of c's replies held for write w, which
// is durable (or failed), and of those held before them. It releases
// c.wmu, now or, if the socket is full, from the goroutine that finishes
// the write.
// REQUIRES: c.wmu held.
func (c *client) sendHeldBy(w lsm.WriteHandle) {
	n := 0
	for n < len(c.held) && c.held[n].w.Seq() <= w.Seq() {
		n++
	}
	if n == 0 {
		// Sent by the client's goroutine.
		c.wmu.Unlock()
		return
	}
	end := c.settleHeldLocked(n, w.Durable(c.s.ctxForDurable()))
	c.armWrite() // a deadline the client's goroutine set would expire
	k, err := c.raw.tryWrite(c.out[:end])
	c.s.stats.netOut.Add(uint64(k))
	if err == nil && k < end {
		rest := c.out[k:end]
		c.s.replier.spilled.Add(1)
		go func() {
			_, err := c.sock.Write(rest)
			c.s.stats.netOut.Add(uint64(len(rest)))
			c.heldSentLocked(n, end, err)
		}()
		return
	}
	c.heldSentLocked(n, end, err)
}

// heldSentLocked ends the replier's send of the first n held segments,
// sent bytes of c.out: it releases c.wmu, then closes the client if the
// write failed, or sends what publishers queued meanwhile.
// REQUIRES: c.wmu held.
func (c *client) heldSentLocked(n, sent int, err error) {
	c.dropSentLocked(n, sent)
	c.wmu.Unlock()
	if err != nil {
		c.kill()
		return
	}
	c.drainPending()
}
