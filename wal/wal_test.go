package wal

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
)

func batch(seq uint64, keys ...string) []sst.Row {
	rows := make([]sst.Row, len(keys))
	for i, k := range keys {
		rows[i] = sst.Row{Key: []byte(k), Seq: seq, Kind: sst.KindPut, Value: []byte("v" + k)}
	}
	return rows
}

// TestWriteReplay appends batches, waits for them, and replays them in order.
func TestWriteReplay(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	w := NewWriter(bkt, 1, 0, nil, Options{})
	for seq := uint64(1); seq <= 50; seq++ {
		if err := w.Append(batch(seq, fmt.Sprintf("a%d", seq), fmt.Sprintf("b%d", seq)), int64(seq)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WaitDurable(ctx, 50); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var got []sst.Row
	var tick int64
	if err := Replay(ctx, bkt, 0, 1<<62, func(o Object) error {
		got = append(got, o.Rows...)
		tick = max(tick, o.Stats.ClockTick)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 100 || tick != 50 {
		t.Fatalf("replayed %d rows with tick %d, want 100 rows and tick 50", len(got), tick)
	}
	for i, r := range got {
		if want := uint64(i/2 + 1); r.Seq != want {
			t.Fatalf("row %d has seq %d, want %d: replay out of order", i, r.Seq, want)
		}
	}
}

// TestFlushIntervalBoundsPuts writes at a steady rate with a 50ms flush
// interval: the PUT count follows time, not the write count.
func TestFlushIntervalBoundsPuts(t *testing.T) {
	ctx := context.Background()
	w := NewWriter(blob.NewMemBucket(), 1, 0, nil, Options{FlushInterval: 50 * time.Millisecond})
	defer w.Close()
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	seq := uint64(0)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Since(start) < time.Second; i++ {
				mu.Lock()
				seq++
				s := seq
				err := w.Append(batch(s, fmt.Sprintf("g%d-%d", g, i)), 1)
				mu.Unlock()
				if err != nil {
					t.Error(err)
					return
				}
				if err := w.WaitDurable(ctx, s); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	st := w.Stats()
	maxPuts := uint64(elapsed/(50*time.Millisecond)) + 2
	t.Logf("%d batches in %v took %d PUTs (at most %d allowed)", st.Batches, elapsed, st.Objects, maxPuts)
	if st.Objects > maxPuts {
		t.Fatalf("%d PUTs in %v exceed one per 50ms", st.Objects, elapsed)
	}
	if st.Batches < 4*st.Objects {
		t.Fatalf("only %d batches for %d PUTs: waiters were not grouped", st.Batches, st.Objects)
	}
}

// TestFencedWriter: a fence on the writer's next id stops it; what it had
// not stored is never acknowledged.
func TestFencedWriter(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	w := NewWriter(bkt, 1, 0, nil, Options{})
	if err := w.Append(batch(1, "a"), 1); err != nil {
		t.Fatal(err)
	}
	if err := w.WaitDurable(ctx, 1); err != nil {
		t.Fatal(err)
	}
	fence, err := Fence(ctx, bkt, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if fence != 2 {
		t.Fatalf("fence at %d, want 2", fence)
	}
	if err := w.Append(batch(2, "b"), 2); err != nil {
		t.Fatal(err)
	}
	if err := w.WaitDurable(ctx, 2); !errors.Is(err, ErrFenced) {
		t.Fatalf("WaitDurable after fence = %v, want ErrFenced", err)
	}
	if err := w.Append(batch(3, "c"), 3); !errors.Is(err, ErrFenced) {
		t.Fatalf("Append after fence = %v, want ErrFenced", err)
	}
	var seqs []uint64
	if err := Replay(ctx, bkt, 0, 1<<62, func(o Object) error {
		for _, r := range o.Rows {
			seqs = append(seqs, r.Seq)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seqs) != "[1]" {
		t.Fatalf("replay after fence has seqs %v, want [1]", seqs)
	}
}

// TestLostResponseIsNotAFence: a PUT that landed but reported an error is
// retried; the retry's conflict is recognised as our own object.
func TestLostResponseIsNotAFence(t *testing.T) {
	ctx := context.Background()
	fb := blob.NewFaultBucket(blob.NewMemBucket(), blob.FaultConfig{
		Seed:                     1,
		ErrorRate:                map[string]float64{objstore.OpUpload: 0.5},
		UploadAfterWriteFraction: 1,
	})
	w := NewWriter(fb, 1, 0, nil, Options{RetryDelay: time.Millisecond})
	defer w.Close()
	for seq := uint64(1); seq <= 20; seq++ {
		if err := w.Append(batch(seq, fmt.Sprint(seq)), 1); err != nil {
			t.Fatal(err)
		}
		if err := w.WaitDurable(ctx, seq); err != nil {
			t.Fatalf("seq %d: %v", seq, err)
		}
	}
	if fb.Injected() == 0 {
		t.Fatal("no lost response injected")
	}
	t.Logf("%d lost responses, %d retries", fb.Injected(), w.Stats().PutRetries)
}
