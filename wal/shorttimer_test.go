package wal

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestShortTimer: a shortTimer fires once per arming, never before its
// time; a Stop or a Reset leaves nothing of the arming before it in C.
func TestShortTimer(t *testing.T) {
	tm := newShortTimer()
	defer tm.Close()
	noFire := func(within time.Duration, when string) {
		t.Helper()
		select {
		case <-tm.C:
			t.Fatalf("fired %s", when)
		case <-time.After(within):
		}
	}

	for _, d := range []time.Duration{0, 50 * time.Microsecond, 300 * time.Microsecond, 3 * time.Millisecond} {
		start := time.Now()
		tm.Reset(d)
		select {
		case <-tm.C:
			if took := time.Since(start); took < d {
				t.Fatalf("armed for %v, fired after %v", d, took)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("armed for %v, never fired", d)
		}
		noFire(2*d+time.Millisecond, fmt.Sprintf("twice for one arming of %v", d))
	}

	tm.Reset(time.Millisecond)
	tm.Stop()
	noFire(10*time.Millisecond, "after Stop")

	// A Reset replaces the arming before it: one expiry, at the later time.
	tm.Reset(time.Millisecond)
	start := time.Now()
	tm.Reset(20 * time.Millisecond)
	<-tm.C
	if took := time.Since(start); took < 20*time.Millisecond {
		t.Fatalf("re-armed for 20ms, fired after %v", took)
	}
	noFire(10*time.Millisecond, "for the replaced arming")

	// An expiry nobody received is gone after Reset.
	tm.Reset(0)
	time.Sleep(5 * time.Millisecond)
	start = time.Now()
	tm.Reset(20 * time.Millisecond)
	<-tm.C
	if took := time.Since(start); took < 20*time.Millisecond {
		t.Fatalf("an old expiry was left in C: fired %v after the Reset", took)
	}
}

// BenchmarkShortTimerLate: how late a 110 µs wait (a quarter of a local
// WAL PUT, the writer's rejoin wait) ends in an otherwise idle process,
// through a shortTimer and through a time.Timer.
//
//	go test -run '^$' -bench ShortTimerLate ./wal
func BenchmarkShortTimerLate(b *testing.B) {
	const d = 110 * time.Microsecond
	run := func(b *testing.B, reset func(time.Duration), c func() <-chan time.Time) {
		late := make([]time.Duration, 0, b.N)
		for b.Loop() {
			start := time.Now()
			reset(d)
			<-c()
			late = append(late, time.Since(start)-d)
		}
		slices.Sort(late)
		b.ReportMetric(float64(late[len(late)/2].Microseconds()), "µs-late-p50")
		b.ReportMetric(float64(late[len(late)*9/10].Microseconds()), "µs-late-p90")
	}
	b.Run("shortTimer", func(b *testing.B) {
		tm := newShortTimer()
		defer tm.Close()
		run(b, tm.Reset, func() <-chan time.Time { return tm.C })
	})
	b.Run("time.Timer", func(b *testing.B) {
		tm := fallbackTimer()
		run(b, func(d time.Duration) { tm.Reset(d) }, func() <-chan time.Time { return tm.C })
	})
}
