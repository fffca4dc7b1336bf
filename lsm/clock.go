package lsm

import (
	"sync/atomic"
	"time"
)

// maxClockWait is the largest backwards wall-clock step the clock waits out.
// Beyond it the clock holds its last tick until the wall clock catches up.
const maxClockWait = 2 * time.Second

// clock is the engine's monotonic clock in ms since the epoch. It never goes
// backwards, across restarts too: it is seeded from the manifest's clock tick
// and the ticks of replayed WAL objects. Every read and write consults it, so
// it is lock-free.
type clock struct {
	wall func() int64
	last atomic.Int64
}

func newClock(wall func() int64, seed int64) *clock {
	c := &clock{wall: wall}
	c.last.Store(seed)
	return c
}

// Now returns a tick >= every tick returned before. A small backwards step of
// the wall clock is waited out, so ticks stay close to real time.
func (c *clock) Now() int64 {
	for {
		w := c.wall()
		last := c.last.Load()
		if w >= last {
			if w == last || c.last.CompareAndSwap(last, w) {
				return w
			}
			continue
		}
		back := time.Duration(last-w) * time.Millisecond
		if back > maxClockWait {
			return last
		}
		time.Sleep(back)
	}
}

// Last returns the newest tick Now returned (or observe set): a tick at or
// above every one handed out so far, without reading the wall clock.
func (c *clock) Last() int64 { return c.last.Load() }

// observe moves the clock forward to at least t.
func (c *clock) observe(t int64) {
	for {
		last := c.last.Load()
		if t <= last || c.last.CompareAndSwap(last, t) {
			return
		}
	}
}
