package compactor_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/compactor"
	"github.com/stratakv/strata/lsm"
	"github.com/stratakv/strata/lsm/sst"
)

// compactAll runs compactions until none is left to do.
func compactAll(t *testing.T, c *compactor.Compactor) int {
	t.Helper()
	n := 0
	for {
		did, err := c.RunOnce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !did {
			return n
		}
		n++
	}
}

// sstObjects returns every SST object in the bucket with its bytes.
func sstObjects(t *testing.T, bkt objstore.Bucket) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	out := map[string][]byte{}
	err := bkt.Iter(ctx, blob.SSTDir, func(name string) error {
		rc, err := bkt.Get(ctx, name)
		if err != nil {
			return err
		}
		defer rc.Close()
		data, err := io.ReadAll(rc)
		out[name] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func totalBytes(objs map[string][]byte) (n int) {
	for _, d := range objs {
		n += len(d)
	}
	return n
}

// gcClock is a GC clock the test moves forward, past the minimum age.
type gcClock struct{ offset atomic.Int64 }

func (g *gcClock) now() time.Time { return time.Now().Add(time.Duration(g.offset.Load())) }

// collect runs GC passes an hour apart on the GC's clock, so unreferenced
// SSTs are collected.
func collect(t *testing.T, c *compactor.Compactor, clk *gcClock) {
	t.Helper()
	for range 2 {
		clk.offset.Add(int64(time.Hour))
		if _, err := c.CollectGarbage(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestExpiredRowsPhysicallyGone writes 100k keys with a 1 s expiry, waits,
// compacts into the bottom run, and shows the SST bytes drop by more than
// 90% and no raw SST holds any of those keys.
func TestExpiredRowsPhysicallyGone(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	db, err := lsm.Open(ctx, bkt, lsm.Options{MemtableSize: 2 << 20, ManifestPollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	value := bytes.Repeat([]byte("v"), 100)
	expireAt := db.Now() + 1000
	for i := 0; i < 100_000; i += 1000 {
		var b lsm.Batch
		for j := i; j < i+1000; j++ {
			b.PutWithExpiry(fmt.Appendf(nil, "ttl-%06d", j), value, expireAt)
		}
		h, err := db.Write(ctx, &b)
		if err == nil {
			err = h.Durable(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var live lsm.Batch // a few live keys, so the bottom run is not empty
	for j := range 1000 {
		live.Put(fmt.Appendf(nil, "live-%04d", j), value)
	}
	if _, err := db.Write(ctx, &live); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	before := totalBytes(sstObjects(t, bkt))
	time.Sleep(time.Until(time.UnixMilli(expireAt)) + 50*time.Millisecond)
	if err := db.Flush(ctx); err != nil { // publishes the clock: the compaction clock passes expireAt
		t.Fatal(err)
	}
	opts := testOptions()
	opts.Scheduler.L0Trigger = 1
	clk := &gcClock{}
	opts.GC.Now = clk.now
	c, err := compactor.Open(ctx, bkt, opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := compactAll(t, c); n == 0 {
		t.Fatal("nothing compacted")
	}
	collect(t, c, clk)
	objs := sstObjects(t, bkt)
	after := totalBytes(objs)
	t.Logf("SST bytes %d before, %d after compaction (%.1f%% dropped); expired rows dropped: %d",
		before, after, 100*(1-float64(after)/float64(before)), c.Stats().Expired)
	if after*10 >= before {
		t.Fatalf("SST bytes went from %d to %d: less than 90%% dropped", before, after)
	}
	rows := 0
	for name, data := range objs {
		got, _, err := sst.DecodeAll(data, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			rows++
			if strings.HasPrefix(string(r.Key), "ttl-") {
				t.Fatalf("expired key %s (kind %v) still in %s", r.Key, r.Kind, name)
			}
		}
	}
	if rows != 1000 {
		t.Fatalf("raw SSTs hold %d rows, want the 1000 live ones", rows)
	}
	time.Sleep(50 * time.Millisecond) // the engine picks up the compacted manifest
	v, err := db.Get(ctx, []byte("live-0999"))
	if err != nil || !bytes.Equal(v, value) {
		t.Fatalf("live key after compaction: %q %v", v, err)
	}
}

// TestExpiredRowNeverResurrects: a row that expired above an older live row
// of the same key, compacted into a run that is not the bottom one, becomes
// a tombstone; the older row never reads again.
func TestExpiredRowNeverResurrects(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	db, err := lsm.Open(ctx, bkt, lsm.Options{ManifestPollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	put := func(key, value string, expireAt int64) {
		t.Helper()
		var b lsm.Batch
		b.PutWithExpiry([]byte(key), []byte(value), expireAt)
		if _, err := db.Write(ctx, &b); err != nil {
			t.Fatal(err)
		}
		if err := db.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	opts := testOptions()
	opts.Scheduler.L0Trigger = 1
	c, err := compactor.Open(ctx, bkt, opts)
	if err != nil {
		t.Fatal(err)
	}
	put("k", "old", 0)
	compactAll(t, c) // "old" now lives in the bottom run
	expireAt := db.Now() + 200
	put("k", "new", expireAt)
	time.Sleep(time.Until(time.UnixMilli(expireAt)) + 20*time.Millisecond)
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RunOnce(ctx); err != nil { // L0 → a new run above the bottom one
		t.Fatal(err)
	}
	reopened, err := lsm.Open(ctx, bkt, lsm.Options{}) // fresh caches, the compacted manifest
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	if v, err := reopened.Get(ctx, []byte("k")); !errors.Is(err, lsm.ErrNotFound) {
		t.Fatalf("k = %q, %v after its newest row expired: an older row resurrected", v, err)
	}
	compactAll(t, c)
	if v, err := reopened.Get(ctx, []byte("k")); !errors.Is(err, lsm.ErrNotFound) {
		t.Fatalf("k = %q, %v after full compaction", v, err)
	}
}

// TestCompactorClockInTheFuture: the compactor expires rows by the
// manifest's clock, never its own, so one whose clock is ten years ahead
// drops nothing the writer still serves.
func TestCompactorClockInTheFuture(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	db, err := lsm.Open(ctx, bkt, lsm.Options{ManifestPollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	hour := db.Now() + 3600_000
	for round := range 6 {
		var b lsm.Batch
		for i := range 500 {
			k := fmt.Appendf(nil, "key-%04d", i)
			v := fmt.Appendf(nil, "round-%d", round)
			if i%2 == 0 {
				b.PutWithExpiry(k, v, hour)
			} else {
				b.Put(k, v)
			}
		}
		if _, err := db.Write(ctx, &b); err != nil {
			t.Fatal(err)
		}
		if err := db.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	clk := &gcClock{}
	clk.offset.Store(int64(10 * 365 * 24 * time.Hour))
	opts := testOptions()
	opts.GC.Now = clk.now
	c, err := compactor.Open(ctx, bkt, opts)
	if err != nil {
		t.Fatal(err)
	}
	if compactAll(t, c) == 0 {
		t.Fatal("nothing compacted")
	}
	collect(t, c, clk)
	time.Sleep(50 * time.Millisecond) // the writer picks up the new manifest
	if st := c.Stats(); st.Expired != 0 {
		t.Fatalf("the compactor expired %d rows that expire in an hour", st.Expired)
	}
	for i := range 500 {
		v, err := db.Get(ctx, fmt.Appendf(nil, "key-%04d", i))
		if err != nil || string(v) != "round-5" {
			t.Fatalf("key-%04d = %q, %v; want round-5", i, v, err)
		}
	}
	checkReferenced(t, bkt)
}
