package resp

import (
	"errors"
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
	stopWatch := cl.watchDisconnect()
	defer stopWatch()
	var timer <-chan time.Time
	if timeoutMs > 0 {
		t := time.NewTimer(time.Duration(timeoutMs) * time.Millisecond)
		defer t.Stop()
		timer = t.C
	}
	for !served {
		select {
		case <-w.wake:
			served = try()
		case <-timer:
			timedOut()
			return
		case <-cl.ctx.Done():
			// Killed, disconnected or shutting down: Redis answers a
			// shutdown with the timeout reply; a gone client gets nothing.
			timedOut()
			return
		}
	}
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
		cl.lr.unread(got)
	}
}
