package compactor_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/compactor"
	"github.com/stratakv/strata/lsm"
)

// TestBackpressureWaitsForCompaction: with no compactor, L0 fills to its
// stop limit and writes wait; a compactor catching up lets them resume, and
// L0 never exceeds the limit.
func TestBackpressureWaitsForCompaction(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	opts := lsm.Options{
		MemtableSize:         64 << 10,
		MaxUnflushedBytes:    256 << 10,
		L0SlowdownSSTs:       2,
		L0StopSSTs:           4,
		ManifestPollInterval: 10 * time.Millisecond,
	}
	db, err := lsm.Open(ctx, bkt, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const total = 4000 // ~4 MB: far beyond L0StopSSTs memtables
	var written atomic.Int64
	var maxL0 atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		val := bytes.Repeat([]byte("v"), 1000)
		for i := range total {
			var b lsm.Batch
			b.Put(fmt.Appendf(nil, "key-%05d", i), val)
			if _, err := db.Write(ctx, &b); err != nil {
				t.Error(err)
				return
			}
			written.Add(1)
		}
	}()
	stopSampling := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if n := int64(db.Metrics().L0SSTs); n > maxL0.Load() {
				maxL0.Store(n)
			}
			select {
			case <-stopSampling:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	// Without a compactor the writer must come to a stop: L0 at its limit
	// and no write done for a while.
	last := int64(-1)
	for range 200 {
		time.Sleep(50 * time.Millisecond)
		n := written.Load()
		if n == last && db.Metrics().L0SSTs >= opts.L0StopSSTs {
			break
		}
		last = n
	}
	m := db.Metrics()
	if written.Load() >= total || m.L0SSTs < opts.L0StopSSTs {
		t.Fatalf("writer did not stop at the L0 limit: %d of %d written, L0 %d", written.Load(), total, m.L0SSTs)
	}
	t.Logf("stalled at %d writes with L0 = %d, %d slowdowns", written.Load(), m.L0SSTs, m.WriteSlowdowns)

	copts := testOptions()
	copts.Scheduler.L0Trigger = 2
	c, err := compactor.Open(ctx, bkt, copts)
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cdone := make(chan error, 1)
	go func() { cdone <- c.Run(cctx) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("writes did not resume: %d of %d written", written.Load(), total)
	}
	cancel()
	if err := <-cdone; err != nil {
		t.Fatal(err)
	}
	close(stopSampling)
	wg.Wait()
	if got := maxL0.Load(); got > int64(opts.L0StopSSTs) {
		t.Fatalf("L0 reached %d SSTs, above the stop limit %d", got, opts.L0StopSSTs)
	}
	t.Logf("all %d writes done after the compactor ran %d jobs; L0 peaked at %d", total, c.Stats().Jobs, maxL0.Load())
	for i := range total {
		if _, err := db.Get(ctx, fmt.Appendf(nil, "key-%05d", i)); err != nil {
			t.Fatalf("key-%05d: %v", i, err)
		}
	}
}

// TestReadsOutliveCompaction: an iterator opened before a compaction keeps
// reading the compacted-away SSTs, because the GC keeps them for its
// minimum age; once that age has passed on the GC's clock they are gone.
func TestReadsOutliveCompaction(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	db, err := lsm.Open(ctx, bkt, lsm.Options{ManifestPollInterval: 10 * time.Millisecond, BlockSize: 256, BlockCacheBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const n = 2000
	for f := range 4 {
		var b lsm.Batch
		for i := f; i < n; i += 4 {
			b.Put(fmt.Appendf(nil, "key-%05d", i), bytes.Repeat([]byte("v"), 100))
		}
		if _, err := db.Write(ctx, &b); err != nil {
			t.Fatal(err)
		}
		if err := db.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	it := db.NewIter(ctx, lsm.IterOptions{})
	defer it.Close()
	count := 0
	ok := it.First()
	for ; ok && count < 10; ok = it.Next() {
		count++
	}
	opts := testOptions()
	clk := &gcClock{}
	opts.GC.Now = clk.now
	c, err := compactor.Open(ctx, bkt, opts)
	if err != nil {
		t.Fatal(err)
	}
	if compactAll(t, c) == 0 {
		t.Fatal("nothing compacted")
	}
	if _, err := c.CollectGarbage(ctx); err != nil { // within the minimum age: inputs stay
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the engine installs the compacted manifest
	for ; ok; ok = it.Next() {
		count++
	}
	if err := it.Error(); err != nil || count != n {
		t.Fatalf("iterator opened before compaction read %d of %d keys: %v", count, n, err)
	}
	// Past the minimum age the inputs are collected; new reads use the
	// compacted SSTs.
	collect(t, c, clk)
	if st := c.Stats().GC; st.SSTsDeleted < 4 {
		t.Fatalf("GC deleted %d SSTs after the minimum age, want the 4 compacted inputs", st.SSTsDeleted)
	}
	fresh := db.NewIter(ctx, lsm.IterOptions{})
	got := 0
	for ok := fresh.First(); ok; ok = fresh.Next() {
		got++
	}
	if err := fresh.Close(); err != nil || got != n {
		t.Fatalf("new iterator after GC read %d of %d keys: %v", got, n, err)
	}
}
