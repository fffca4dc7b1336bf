package lsm

import (
	"sync"
	"time"
)

// maxClockWait is the largest backwards wall-clock step the clock waits out.
// Beyond it the clock holds its last tick until the wall clock catches up.
const maxClockWait = 2 * time.Second

// clock is the engine's monotonic clock in ms since the epoch. It never goes
// backwards, across restarts too: it is seeded from the manifest's clock tick
// and the ticks of replayed WAL objects.
type clock struct {
	wall func() int64
	mu   sync.Mutex
	last int64
}

func newClock(wall func() int64, seed int64) *clock {
	return &clock{wall: wall, last: seed}
}

// Now returns a tick >= every tick returned before. A small backwards step of
// the wall clock is waited out, so ticks stay close to real time.
func (c *clock) Now() int64 {
	for {
		w := c.wall()
		c.mu.Lock()
		last := c.last
		if w >= last {
			c.last = w
			c.mu.Unlock()
			return w
		}
		c.mu.Unlock()
		if back := time.Duration(last-w) * time.Millisecond; back > maxClockWait {
			return last
		} else {
			time.Sleep(back)
		}
	}
}

// observe moves the clock forward to at least t.
func (c *clock) observe(t int64) {
	c.mu.Lock()
	c.last = max(c.last, t)
	c.mu.Unlock()
}
