package wal

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
)

// stuckBucket makes the first Upload of every name hang until its context
// ends; with land set, that first Upload stores the object before hanging
// (a PUT whose response is lost in a slow network). Later Uploads of the
// name go straight through.
type stuckBucket struct {
	objstore.Bucket
	land bool
	firstUploads
}

// firstUploads tells a test bucket whether an Upload is the first of its
// name.
type firstUploads struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (f *firstUploads) first(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen == nil {
		f.seen = map[string]bool{}
	}
	first := !f.seen[name]
	f.seen[name] = true
	return first
}

func (b *stuckBucket) Upload(ctx context.Context, name string, r io.Reader, opts ...objstore.ObjectUploadOption) error {
	if !b.first(name) {
		return b.Bucket.Upload(ctx, name, r, opts...)
	}
	if b.land {
		if err := b.Bucket.Upload(ctx, name, r, opts...); err != nil {
			return err
		}
	}
	<-ctx.Done()
	return ctx.Err()
}

// TestHedgedPut: a PUT that hangs is hedged by a second one and the write
// becomes durable; without hedging it would wait forever. With the hung
// PUT having landed, the hedge meets condition-not-met, reads the object
// back, finds its own bytes and succeeds. With another writer's object
// under the name (a fence), the hedge reports the fence.
func TestHedgedPut(t *testing.T) {
	for _, tc := range []struct {
		name  string
		land  bool
		fence bool
	}{{"hung", false, false}, {"landed, response lost", true, false}, {"fenced", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			inner := blob.NewMemBucket()
			if tc.fence {
				if err := inner.Upload(context.Background(), blob.WALName(1), bytes.NewReader([]byte("fence"))); err != nil {
					t.Fatal(err)
				}
			}
			bkt := &stuckBucket{Bucket: inner, land: tc.land}
			w := NewWriter(bkt, 1, 0, nil, Options{Hedge: 10 * time.Millisecond})
			defer w.Close()
			if err := w.Append(batch(1, "k"), 1); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := w.WaitDurable(ctx, 1)
			if tc.fence {
				if !errors.Is(err, ErrFenced) {
					t.Fatalf("WaitDurable over a fence: %v, want ErrFenced", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("WaitDurable: %v (the hung PUT was not hedged)", err)
			}
			if st := w.Stats(); st.PutHedges != 1 || st.PutRetries != 0 {
				t.Errorf("hedges %d, retries %d; want 1 and 0", st.PutHedges, st.PutRetries)
			}
			var rows int
			if err := Replay(context.Background(), inner, []uint64{1}, func(o Object) error { rows += len(o.Rows); return nil }); err != nil || rows != 1 {
				t.Errorf("replaying the hedged object: %d rows, %v", rows, err)
			}
		})
	}
}

// TestHedgeDelayAdapts: the adaptive delay is four times the usual PUT
// time, never below the floor; a negative option turns hedging off.
func TestHedgeDelayAdapts(t *testing.T) {
	w := &Writer{}
	if d := w.hedgeDelay(); d != minHedgeDelay {
		t.Errorf("no PUTs yet: %v, want %v", d, minHedgeDelay)
	}
	for range 100 {
		w.observePut(40 * time.Millisecond)
	}
	if d := w.hedgeDelay(); d < 150*time.Millisecond || d > 170*time.Millisecond {
		t.Errorf("after 40ms PUTs: %v, want about 160ms", d)
	}
	w.opts.Hedge = -1
	if d := w.hedgeDelay(); d >= 0 {
		t.Errorf("Hedge -1: %v, want negative (never)", d)
	}
}

// slowBucket delays every Upload by d, counting them and the most in
// flight at once.
type slowBucket struct {
	objstore.Bucket
	d        time.Duration
	inflight atomic.Int32
	most     atomic.Int32
	uploads  atomic.Int32
}

func (b *slowBucket) Upload(ctx context.Context, name string, r io.Reader, opts ...objstore.ObjectUploadOption) error {
	b.uploads.Add(1)
	n := b.inflight.Add(1)
	defer b.inflight.Add(-1)
	for m := b.most.Load(); n > m && !b.most.CompareAndSwap(m, n); m = b.most.Load() {
	}
	select {
	case <-time.After(b.d):
	case <-ctx.Done():
		return ctx.Err()
	}
	return b.Bucket.Upload(ctx, name, r, opts...)
}

// TestHedgeLearnsSlowStore: on a store whose every PUT takes longer than
// the hedge delay's floor, the hedged PUTs' times teach the delay, and
// hedging stops after a few objects instead of doubling every PUT.
func TestHedgeLearnsSlowStore(t *testing.T) {
	ctx := context.Background()
	w := NewWriter(&slowBucket{Bucket: blob.NewMemBucket(), d: 80 * time.Millisecond}, 1, 0, nil, Options{})
	defer w.Close()
	for seq := uint64(1); seq <= 20; seq++ {
		if err := w.Append(batch(seq, "k"), 1); err != nil {
			t.Fatal(err)
		}
		if err := w.WaitDurable(ctx, seq); err != nil {
			t.Fatal(err)
		}
	}
	if st := w.Stats(); st.PutHedges > 3 {
		t.Errorf("%d of %d PUTs hedged on a store where all take 80ms; want the delay to learn it", st.PutHedges, st.Objects)
	}
}

// TestPutTimeLearnedWithoutHedging: with hedging off, the PUT times still
// feed the moving average, which the overlap wait of a flush interval
// reads to tell when the PUT in flight is due to end.
func TestPutTimeLearnedWithoutHedging(t *testing.T) {
	w := NewWriter(&slowBucket{Bucket: blob.NewMemBucket(), d: 20 * time.Millisecond}, 1, 0, nil, Options{Hedge: -1})
	defer w.Close()
	if err := w.Append(batch(1, "k"), 1); err != nil {
		t.Fatal(err)
	}
	if err := w.WaitDurable(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if avg := time.Duration(w.putEWMA.Load()); avg < 20*time.Millisecond {
		t.Fatalf("PUT time average %v after a 20ms PUT with hedging off", avg)
	}
}
