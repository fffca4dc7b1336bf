package blob

import (
	"os"
	"sync"
)

// syncRings lends io_uring rings (see syncRing) to the fsyncs of a
// LocalBucket's direct uploads: a temp file of a large object (an SST, a
// second of writes under everysec) and the directory it is published in.
// Made as a system call, such an fsync blocks its thread for milliseconds,
// and the runtime hands the goroutine's processor to another thread only
// when sysmon next looks: on a server whose socket I/O makes no blocking
// system calls, sysmon sleeps up to 10 ms between looks, and every goroutine
// queued on that processor waits as long. Through a ring, the goroutine is
// parked in the poller at once.
//
// A ring runs one request at a time, so each sync borrows its own: an SST's
// long sync does not hold up a WAL object's. Rings are made on demand and
// up to maxIdleRings are kept. Where io_uring is unavailable, syncs are
// plain fdatasync(2).
type syncRings struct {
	mu     sync.Mutex
	idle   []*syncRing
	closed bool
}

const maxIdleRings = 4

// fdatasync makes f's data durable, and its size and allocation, as
// fdatasync(2) does (on a directory, its entries).
func (p *syncRings) fdatasync(f *os.File) error {
	r := p.get()
	if r == nil {
		return fdatasync(f)
	}
	err := r.fdatasync(f)
	p.put(r)
	return err
}

func (p *syncRings) get() *syncRing {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		r := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return r
	}
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil
	}
	r, err := newSyncRing()
	if err != nil {
		return nil
	}
	return r
}

func (p *syncRings) put(r *syncRing) {
	p.mu.Lock()
	if !p.closed && len(p.idle) < maxIdleRings {
		p.idle = append(p.idle, r)
		r = nil
	}
	p.mu.Unlock()
	if r != nil {
		r.close()
	}
}

// close closes the idle rings; syncs after it use the system call.
func (p *syncRings) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, r := range idle {
		r.close()
	}
}
