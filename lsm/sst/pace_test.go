package sst

import (
	"testing"
	"time"
)

// TestYielderPausesOnlyWhileBusy: background work sleeps (so the processor
// polls the network) once per paceEvery while the foreground is busy, and
// never otherwise.
func TestYielderPausesOnlyWhileBusy(t *testing.T) {
	var nilPacer *Pacer
	nilPacer.MarkBusy(time.Now()) // a nil Pacer ignores the foreground
	if nilPacer.Busy(time.Now()) {
		t.Fatal("a nil Pacer is busy")
	}
	y := nilPacer.Yielder()
	y.Yield()
	if y.running != 0 {
		t.Fatalf("a nil Pacer's yielder started pacing: running=%d", y.running)
	}

	p := new(Pacer)
	y = p.Yielder()
	y.Yield()
	if y.running != 0 {
		t.Fatalf("pacing with no foreground activity ever: running=%d", y.running)
	}

	p.MarkBusy(time.Now())
	y.Yield()
	if y.running == 0 {
		t.Fatal("a busy foreground did not start the pacing clock")
	}
	start := y.running
	y.Yield() // well within paceEvery: the cheap way, clock unchanged
	if y.running != start {
		t.Fatalf("yield within paceEvery moved the clock: %d -> %d", start, y.running)
	}

	// paceEvery of running later, the yield sleeps and restarts the clock.
	p.MarkBusy(time.Now())
	y.running -= int64(paceEvery)
	before := y.running
	t0 := time.Now()
	y.Yield()
	if took := time.Since(t0); took < pauseFor {
		t.Fatalf("pause took %v, want at least %v", took, pauseFor)
	}
	if y.running <= before+int64(paceEvery) {
		t.Fatalf("pause did not restart the clock: %d, was %d", y.running, before)
	}

	// Once the foreground has been quiet for busyWindow, pacing stops.
	p.busyAt.Store(int64(time.Since(paceBase)) - int64(busyWindow) - 1)
	y.Yield()
	if y.running != 0 {
		t.Fatalf("still pacing after the foreground went quiet: running=%d", y.running)
	}
}

// TestPacerBusyThrottlesStores: marks closer together than busyWindow/64
// keep the first time, so a busy server does not write the shared word per
// request; later marks move it.
func TestPacerBusyThrottlesStores(t *testing.T) {
	p := new(Pacer)
	t0 := paceBase.Add(time.Hour)
	p.MarkBusy(t0)
	if got := p.busyAt.Load(); got != int64(time.Hour) {
		t.Fatalf("busyAt = %d, want %d", got, int64(time.Hour))
	}
	p.MarkBusy(t0.Add(busyWindow / 128))
	if got := p.busyAt.Load(); got != int64(time.Hour) {
		t.Fatalf("a mark within busyWindow/64 moved busyAt to %d", got)
	}
	p.MarkBusy(t0.Add(busyWindow / 32))
	if got := p.busyAt.Load(); got != int64(time.Hour+busyWindow/32) {
		t.Fatalf("busyAt = %d, want %d", got, int64(time.Hour+busyWindow/32))
	}
	if !p.Busy(t0.Add(busyWindow)) {
		t.Fatal("not busy within busyWindow of the last mark")
	}
	if p.Busy(t0.Add(busyWindow/32 + busyWindow + 1)) {
		t.Fatal("busy past busyWindow after the last mark")
	}
}
