//go:build !linux

package wal

import "time"

// shortTimerSys is a time.Timer where there is no timerfd.
type shortTimerSys struct {
	tm *time.Timer
}

func (t *shortTimer) init() {
	t.tm = fallbackTimer()
	t.C = t.tm.C
}

// Reset arms the timer to fire once, d from now.
func (t *shortTimer) Reset(d time.Duration) { t.tm.Reset(d) }

// Stop disarms the timer.
func (t *shortTimer) Stop() { t.tm.Stop() }

// Close stops the timer for good.
func (t *shortTimer) Close() { t.tm.Stop() }
