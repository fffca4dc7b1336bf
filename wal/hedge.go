package wal

import (
	"bytes"
	"context"
	"time"

	"github.com/thanos-io/objstore"
)

// Hedged PUTs. Object stores have a long latency tail: a PUT that usually
// takes 20 ms now and then takes seconds. WAL objects are acknowledged in id
// order, so one slow PUT holds every durable write behind it. When a PUT has
// not returned after the hedge delay, a second identical create-if-absent
// PUT of the same object is started and the first success wins. Both write
// the same bytes under the same name, so whichever lands is the object; the
// other sees condition-not-met, which put resolves by reading the object
// back (as after a failed attempt), so a hedge can never hide a fence.

const (
	// minHedgeDelay keeps hedges for real outliers: a local disk's fsync
	// hiccups stay below it.
	minHedgeDelay = 50 * time.Millisecond
	// hedgeFactor times the typical PUT time is the adaptive hedge delay.
	hedgeFactor = 4
)

// hedgeDelay is how long an attempt runs before it is hedged: Options.Hedge
// when set (negative: never), else hedgeFactor times the moving average of
// PUT times, at least minHedgeDelay.
func (w *Writer) hedgeDelay() time.Duration {
	if w.opts.Hedge != 0 {
		return w.opts.Hedge
	}
	return max(minHedgeDelay, hedgeFactor*time.Duration(w.putEWMA.Load()))
}

// observePut folds one successful attempt's time (hedged or not, from its
// first PUT's start) into the moving average (weight 1/8).
func (w *Writer) observePut(d time.Duration) {
	for {
		old := w.putEWMA.Load()
		next := int64(d)
		if old != 0 {
			next = old + (int64(d)-old)/8
		}
		if w.putEWMA.CompareAndSwap(old, next) {
			return
		}
	}
}

// attempt makes one create-if-absent PUT of name, hedged after the hedge
// delay. It returns the first success or condition-not-met (the caller
// reads back to tell our object from a fence); when both PUTs fail
// otherwise, the first error. hedged reports whether a second PUT started.
//
// The first PUT runs on the caller's goroutine and a hedge, if the delay
// passes, on its own; a hedge that settles the object (success or
// condition-not-met) cancels the first PUT. An upload goroutine for every
// PUT would put one more hand-off between the disk and the acknowledgement
// of every durable write, on the path each of them waits on.
func (w *Writer) attempt(name string, data []byte) (hedged bool, err error) {
	upload := func(ctx context.Context) error {
		return w.bkt.Upload(ctx, name, bytes.NewReader(data), objstore.WithIfNotExists())
	}
	delay := w.hedgeDelay()
	start := time.Now()
	if delay < 0 {
		err := upload(context.Background())
		if err == nil {
			w.observePut(time.Since(start)) // the overlap rule reads it too
		}
		return false, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // the loser of a race stops; the object is already whole
	settles := func(err error) bool { return err == nil || w.bkt.IsConditionNotMetErr(err) }
	hedge := make(chan error, 1)
	timer := time.AfterFunc(delay, func() {
		w.stats.hedges.Add(1)
		err := upload(ctx)
		if settles(err) {
			cancel()
		}
		hedge <- err
	})
	first := upload(ctx)
	if timer.Stop() {
		if first == nil {
			w.observePut(time.Since(start))
		}
		return false, first
	}
	// A hedge started. A hedged PUT's time counts too, from the first
	// PUT's start: otherwise, on a store whose every PUT outlasts the
	// delay's floor, the average never learns it and every PUT is doubled.
	if settles(first) {
		if first == nil {
			w.observePut(time.Since(start))
		}
		// A conflict is settled by reading the object back, whatever the
		// other PUT would say.
		return true, first
	}
	second := <-hedge
	if settles(second) {
		if second == nil {
			w.observePut(time.Since(start))
		}
		return true, second
	}
	return true, first
}
