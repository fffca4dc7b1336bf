package sst

import (
	"runtime"
	"sync/atomic"
	"time"
)

// A Pacer lets background work (memtable flushes, WAL objects, compactions)
// step aside for clients while clients are active.
//
// Background work yields the processor every yieldRows rows. The cheap way,
// runtime.Gosched, puts the goroutine on the scheduler's global run queue,
// which a processor looks at before it polls the network: on one processor,
// a long build that keeps yielding is found again at once, and clients whose
// requests have arrived wait for sysmon's network poll, every 10 ms. That
// was the ~10 ms p99 of pipelined writes under everysec on one core. A
// goroutine that sleeps instead leaves the run queues empty, so the
// processor polls the network and runs the clients before the timer brings
// the work back. But a sleep on an idle processor lasts a whole millisecond
// (the network poll waits in milliseconds), which made a lone build 45-60%
// slower. So the work sleeps only while the foreground is busy, which the
// server tells the Pacer (MarkBusy) as requests arrive, and then only once per
// paceEvery of running.
//
// A nil *Pacer is valid: its work always yields the cheap way.
type Pacer struct {
	busyAt atomic.Int64 // when the foreground last marked itself busy, in ns since paceBase; 0: never
}

// paceBase is the origin of the Pacer's monotonic times.
var paceBase = time.Now()

const (
	// busyWindow: foreground activity this recent makes background work
	// pause. It must outlast sysmon's 10 ms: while work that yields the
	// cheap way holds the processor, no request is read, so none marks the
	// foreground busy either (a 1 ms window never saw the clients it was
	// starving). Work keeps pausing for 50 ms after the clients go quiet,
	// at worst a millisecond in every paceEvery.
	busyWindow = 50 * time.Millisecond
	// paceEvery is how long background work runs between two pauses while
	// the foreground is busy, and pauseFor how long it asks to sleep. Side
	// by side on one core (server on CPU 0, -P 16, 1M requests), pausing
	// every 2 ms halved the p99 of SET and INCR at the same throughput;
	// pausing every 0.5 ms did not shorten it further.
	paceEvery = 2 * time.Millisecond
	pauseFor  = 20 * time.Microsecond
)

// MarkBusy tells the Pacer the foreground was busy at now (a request
// arrived). It is meant for every request and costs a load, and a store only
// once per busyWindow/64.
func (p *Pacer) MarkBusy(now time.Time) {
	if p == nil {
		return
	}
	t := int64(now.Sub(paceBase))
	if t-p.busyAt.Load() >= int64(busyWindow/64) {
		p.busyAt.Store(t)
	}
}

// Busy reports whether background work pacing itself at now would pause:
// the foreground marked itself busy within busyWindow. False for a nil
// Pacer.
func (p *Pacer) Busy(now time.Time) bool {
	return p != nil && p.busyNear(int64(now.Sub(paceBase)))
}

// busyNear is Busy at t, in ns since paceBase.
func (p *Pacer) busyNear(t int64) bool {
	b := p.busyAt.Load()
	return b != 0 && t-b <= int64(busyWindow)
}

// Yielder paces one background task; its zero value (or that of a nil
// Pacer) always yields the cheap way. Not safe for concurrent use: each
// goroutine doing background work takes its own.
type Yielder struct {
	p       *Pacer
	running int64 // when the task last paused, or began running while the foreground was busy; 0: not busy
}

// Yielder returns a Yielder for one background task.
func (p *Pacer) Yielder() Yielder { return Yielder{p: p} }

// Yield gives the processor away for a moment: to whatever is runnable, and
// while the foreground is busy, once every paceEvery, long enough for the
// processor to poll the network.
func (y *Yielder) Yield() {
	if y.p == nil {
		runtime.Gosched()
		return
	}
	now := int64(time.Since(paceBase))
	if !y.p.busyNear(now) {
		y.running = 0
		runtime.Gosched()
		return
	}
	if y.running == 0 {
		y.running = now
	}
	if now-y.running < int64(paceEvery) {
		runtime.Gosched()
		return
	}
	time.Sleep(pauseFor)
	y.running = int64(time.Since(paceBase))
}
