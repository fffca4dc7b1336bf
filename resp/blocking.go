package resp

import (
	"errors"
	"math"
	"os"
	"time"
)

// block runs a blocking command: try serves it (writing the reply) and
// reports whether it could; until it can, the client waits in the queues
// of keys, first come first served, for at most timeoutMs (0: forever),
// and timedOut writes the reply when the time is up. Inside EXEC, and for
// a client that went away, nothing blocks.
//
// While it waits, the replies before it in the pipeline are sent (and made
// durable first), and a watcher reads the socket so that a client that
// disconnects stops waiting and takes nothing.
func (c *call) block(keys [][]byte, timeoutMs int64, try func() bool, timedOut func()) {
	if c.inTx {
		if !try() {
			timedOut()
		}
		return
	}
	s, cl := c.s, c.cl
	w := s.blocked.add(c.db, keys)
	served := false
	defer func() { s.blocked.remove(w) }()
	if try() {
		return
	}
	// The replies so far go out now; this one comes when served.
	if err := cl.flushLocked(); err != nil {
		return
	}
	if c.cmd.flags&flagWrite != 0 {
		// flushLocked settled the durability of the replies before this
		// one; the pop this command will make is a write of its own, and
		// its reply must wait for it too (doc.go, invariant 2).
		cl.wrote = true
		cl.writeMark = len(cl.out)
	}
	stopWatch := cl.watchDisconnect()
	defer stopWatch()
	var timer <-chan time.Time
	// A timeout past what a time.Duration holds (~292 years) would
	// overflow to a negative one and fire at once: it is forever.
	if timeoutMs > 0 && timeoutMs <= math.MaxInt64/int64(time.Millisecond) {
		t := time.NewTimer(time.Duration(timeoutMs) * time.Millisecond)
		defer t.Stop()
		timer = t.C
	}
	for !served {
		select {
		case <-w.wake:
			if cl.ctx.Err() != nil {
				// Gone as well as woken: take nothing.
				c.gone(timedOut)
				return
			}
			served = try()
		case <-timer:
			timedOut()
			return
		case <-cl.ctx.Done():
			c.gone(timedOut)
			return
		}
	}
}

// gone ends a wait cut short by the client's context: a killed or
// disconnected client gets no reply (its connection is closing); on
// shutdown the client gets the timeout reply, as Close documents.
func (c *call) gone(timedOut func()) {
	if c.cl.killed.Load() || c.s.ctx.Err() == nil {
		return
	}
	timedOut()
}

// watchDisconnect reads the socket while the client is blocked, so a
// client that closes its connection is noticed (its context is canceled).
// Bytes it reads (commands pipelined after the blocking one) are put back
// for the client's reader. The returned function stops it.
func (cl *client) watchDisconnect() (stop func()) {
	done := make(chan struct{})
	var got []byte
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := cl.nc.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				if !errors.Is(err, os.ErrDeadlineExceeded) {
					cl.cancel() // the client is gone
				}
				return
			}
			if int64(len(got)) > cl.s.config().ClientQueryBufferLimit {
				cl.kill()
				return
			}
		}
	}()
	return func() {
		cl.nc.SetReadDeadline(time.Unix(1, 0))
		<-done
		if !cl.killed.Load() && cl.ctx.Err() == nil {
			cl.nc.SetReadDeadline(time.Time{})
		}
		cl.rd.unread(got)
	}
}
