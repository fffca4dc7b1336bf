package wal

import "time"

// A shortTimer is a one-shot timer that fires on time for waits well under
// a millisecond: the writer's rejoin wait, a fraction of a local PUT's
// half millisecond.
//
// A runtime timer does not. When no goroutine is runnable, the thread that
// runs timers sleeps in the network poller (epoll_wait on Linux), whose
// timeout is in whole milliseconds, so a 110 µs timer in an idle process
// fires after about a millisecond (measured here: 0.98 ms late at the
// median, against 24 µs for a timerfd). The rejoin wait ends when nothing
// has happened for a while, exactly when the process is idle, so it ended
// late: every durable write waited for it. On Linux a shortTimer is a
// timerfd the poller watches, whose expiry wakes the poller at once;
// elsewhere, or if timerfd fails, it is a time.Timer.
//
// C receives the time of each expiry; Reset and Stop leave no expiry of an
// earlier arming in it. One caveat: an expiry that was being delivered
// while Reset ran may still arrive early; the writer's waits are hints
// that recheck their deadlines, so it costs at most a PUT started early.
type shortTimer struct {
	C <-chan time.Time
	shortTimerSys
}

// newShortTimer returns a stopped timer. Close releases it.
func newShortTimer() *shortTimer {
	t := &shortTimer{}
	t.init()
	return t
}

// fallbackTimer is the stopped time.Timer a shortTimer uses where it has
// nothing better.
func fallbackTimer() *time.Timer {
	tm := time.NewTimer(time.Hour)
	tm.Stop()
	return tm
}
