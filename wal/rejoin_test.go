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
