package wal

import (
	"testing"
	"time"
)

// TestRejoinWaitEndsAfterQuietGap: after an object released k writers, the
// next flush waits for k batches, but each wait is at most the quiet gap,
// and it goes on only while batches keep arriving and the whole wait's end
// has not passed. A writer that does not come back costs one gap.
func TestRejoinWaitEndsAfterQuietGap(t *testing.T) {
	w := &Writer{}
	w.pendingBatches = 3
	w.rejoinTarget = 10 // 7 of the released writers are not back yet
	w.rejoinBy = time.Now().Add(time.Hour)
	w.rejoinGap = time.Millisecond
	w.rejoinSeen = 3
	if d := w.rejoinWaitLocked(); d != time.Millisecond {
		t.Fatalf("wait %v, want the gap (1ms), not the rest of the whole wait", d)
	}
	// The gap passed with no new batch: the flush leaves.
	if w.rejoinProgressLocked() {
		t.Fatal("the wait went on although no batch arrived in the gap")
	}
	// Batches arrived during the gap: the wait goes on, from the new count.
	w.pendingBatches = 5
	if !w.rejoinProgressLocked() || w.rejoinSeen != 5 {
		t.Fatalf("progress not seen (rejoinSeen %d)", w.rejoinSeen)
	}
	if w.rejoinProgressLocked() {
		t.Fatal("the same batches counted as progress twice")
	}
	// Arrivals do not extend the wait past its end.
	w.pendingBatches = 8
	w.rejoinBy = time.Now().Add(-time.Microsecond)
	if w.rejoinProgressLocked() {
		t.Fatal("the wait went on past its end")
	}
	if d := w.rejoinWaitLocked(); d != 0 {
		t.Fatalf("wait %v after its end, want 0", d)
	}
	// Everyone back: no wait at all.
	w.rejoinBy = time.Now().Add(time.Hour)
	w.pendingBatches = 10
	if d := w.rejoinWaitLocked(); d != 0 {
		t.Fatalf("wait %v with every released writer back, want 0", d)
	}
}

// TestOverlapWaitsForAPutAboutToEnd: a pending batch starts a PUT beside
// the one in flight once it has waited a flush interval, unless that PUT
// is due to end within half an interval of then: it waits for that PUT
// (half an interval after its expected end at most), so the writers the
// PUT releases join the batch instead of making a group of their own.
func TestOverlapWaitsForAPutAboutToEnd(t *testing.T) {
	const iv = 10 * time.Millisecond
	w := &Writer{opts: Options{FlushInterval: iv}}
	now := time.Now()
	near := func(got, want time.Duration) bool { return got > want-time.Millisecond && got <= want }

	// The PUT in flight ends long after the interval: overlap at the interval.
	w.pendingSince = now
	w.putEWMA.Store(int64(100 * time.Millisecond))
	if d := w.overlapWaitLocked(now); !near(d, iv) {
		t.Errorf("PUT ending in 100ms: wait %v, want the interval (%v)", d, iv)
	}
	// It ends 13 ms from now, within half an interval of the 10 ms mark:
	// wait for it, up to half an interval past its end (18 ms).
	w.putEWMA.Store(int64(13 * time.Millisecond))
	if d := w.overlapWaitLocked(now); !near(d, 18*time.Millisecond) {
		t.Errorf("PUT ending in 13ms: wait %v, want 18ms", d)
	}
	// It ends 7 ms from now, 3 ms before the mark: the same.
	w.putEWMA.Store(int64(7 * time.Millisecond))
	if d := w.overlapWaitLocked(now); !near(d, 12*time.Millisecond) {
		t.Errorf("PUT ending in 7ms: wait %v, want 12ms", d)
	}
	// It was due 2 ms ago and has not ended: overlap at the interval.
	w.putEWMA.Store(int64(8 * time.Millisecond))
	if d := w.overlapWaitLocked(now.Add(-10 * time.Millisecond)); !near(d, iv) {
		t.Errorf("PUT overdue: wait %v, want the interval (%v)", d, iv)
	}
	// The batch has already waited an interval: no wait.
	w.pendingSince = now.Add(-20 * time.Millisecond)
	w.putEWMA.Store(int64(100 * time.Millisecond))
	if d := w.overlapWaitLocked(now); d > 0 {
		t.Errorf("batch waited 20ms: wait %v, want none", d)
	}
}

// TestRejoinWaitTellsACrowdFromASteadyLoad: past maxRejoinWait, the wait
// goes on only while batches arrive faster than they did during the PUT
// (twice that rate): a crowd of released writers still coming back. An
// open-loop load, whose batches arrive at one rate whatever the WAL does,
// ends the wait there, instead of adding up to twice a PUT to its writes.
func TestRejoinWaitTellsACrowdFromASteadyLoad(t *testing.T) {
	const took = 20 * time.Millisecond
	w := &Writer{}
	ack := func(released, pending int) {
		w.pendingBatches = pending
		w.finishRejoin(released, took, time.Now())
	}

	// 22 batches came in during the 20 ms PUT: 2.2 per 2 ms gap.
	ack(22, 22)
	if w.rejoinGap != maxRejoinWait || !closeTo(w.rejoinSteady, 2.2) {
		t.Fatalf("gap %v, steady %.2f per gap; want %v, 2.2", w.rejoinGap, w.rejoinSteady, maxRejoinWait)
	}
	if got := w.rejoinBy.Sub(w.rejoinFirm); got != 2*took-maxRejoinWait {
		t.Fatalf("whole wait %v past the firm part, want %v", got, 2*took-maxRejoinWait)
	}
	// Within maxRejoinWait any arrival is progress.
	w.pendingBatches += 2
	if !w.rejoinProgressLocked() {
		t.Fatal("an arrival within maxRejoinWait ended the wait")
	}
	// Past it, the same steady trickle is no crowd.
	w.rejoinFirm = time.Now().Add(-time.Microsecond)
	w.pendingBatches += 4
	if w.rejoinProgressLocked() {
		t.Fatal("4 batches in a gap, at the PUT's own rate of 2.2, kept the wait going")
	}
	// A crowd well above it is waited for.
	w.pendingBatches += 5
	if !w.rejoinProgressLocked() || w.rejoinSeen != w.pendingBatches {
		t.Fatalf("5 batches in a gap, above twice the steady 2.2, ended the wait (seen %d)", w.rejoinSeen)
	}

	// Closed-loop clients: none arrived during the PUT (all were in it), so
	// any arrival is their return, for up to twice the PUT.
	ack(500, 0)
	w.rejoinFirm = time.Now().Add(-time.Microsecond)
	w.pendingBatches = 1
	if !w.rejoinProgressLocked() {
		t.Fatal("a returning writer after maxRejoinWait ended a wait with no steady load")
	}
	if w.rejoinProgressLocked() {
		t.Fatal("a gap with no arrival kept the wait going")
	}
}

func closeTo(a, b float64) bool { return a > b-1e-9 && a < b+1e-9 }
