package lsm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
)

func TestOptionsDefaultsAndValidate(t *testing.T) {
	var o Options
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	for name, edit := range map[string]func(*Options){
		"negative flush interval": func(o *Options) { o.WALFlushInterval = -1 },
		"tiny memtable":           func(o *Options) { o.MemtableSize = 10 },
		"unflushed below 2 mem":   func(o *Options) { o.MaxUnflushedBytes = o.MemtableSize },
		"slowdown above stop":     func(o *Options) { o.L0SlowdownSSTs, o.L0StopSSTs = 10, 5 },
		"block size":              func(o *Options) { o.BlockSize = 10 },
		"compression":             func(o *Options) { o.Compression = 9 },
		"bloom bits":              func(o *Options) { o.BloomBitsPerKey = 100 },
	} {
		o := Options{}
		o.EnsureDefaults()
		edit(&o)
		if err := o.Validate(); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%s: Validate = %v, want ErrInvalidOptions", name, err)
		}
		if _, err := Open(context.Background(), blob.NewMemBucket(), o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%s: Open = %v, want ErrInvalidOptions", name, err)
		}
	}
}

// TestClockMonotonic: the clock waits out a small backwards step, holds
// through a large one, and resumes from its persisted tick after reopen.
func TestClockMonotonic(t *testing.T) {
	var wall atomic.Int64
	wall.Store(10_000)
	c := newClock(wall.Load, 0)
	if got := c.Now(); got != 10_000 {
		t.Fatalf("Now = %d, want 10000", got)
	}
	wall.Store(9_990) // a 10 ms step back is waited out
	go func() { time.Sleep(5 * time.Millisecond); wall.Store(10_001) }()
	if got := c.Now(); got < 10_000 {
		t.Fatalf("Now went backwards to %d", got)
	}
	wall.Store(1_000) // a huge step back: hold the last tick
	if got := c.Now(); got < 10_000 {
		t.Fatalf("Now went backwards to %d", got)
	}

	// Across a reopen the clock never goes back behind a tick it handed
	// out before a write, even if the wall clock did: a write records the
	// clock's last tick (the one a TTL or a collection version in it was
	// computed from), without reading the wall clock itself.
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	wall.Store(50_000)
	db, err := Open(ctx, bkt, Options{WallClock: wall.Load})
	if err != nil {
		t.Fatal(err)
	}
	if got := db.Now(); got != 50_000 {
		t.Fatalf("Now = %d, want the wall clock's 50000", got)
	}
	var b Batch
	b.Put([]byte("k"), []byte("v"))
	h, err := db.Write(ctx, &b)
	if err == nil {
		err = h.Durable(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	db.Abandon() // the tick must come back from the WAL, not the manifest
	wall.Store(100)
	db, err = Open(ctx, bkt, Options{WallClock: wall.Load})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := db.Now(); got < 50_000 {
		t.Fatalf("after reopen Now = %d, behind the tick 50000 handed out before the last write", got)
	}
}

// gatedBucket blocks SST uploads until the gate opens, like a slow store.
type gatedBucket struct {
	objstore.Bucket
	gate chan struct{}
}

func (g *gatedBucket) Upload(ctx context.Context, name string, r io.Reader, opts ...objstore.ObjectUploadOption) error {
	if strings.HasPrefix(name, blob.SSTDir) {
		<-g.gate
	}
	return g.Bucket.Upload(ctx, name, r, opts...)
}

// TestBackpressure: while memtable flushes cannot finish, writes stop once
// MaxUnflushedBytes is reached instead of growing memory, and resume when
// flushes land.
func TestBackpressure(t *testing.T) {
	ctx := context.Background()
	g := &gatedBucket{Bucket: blob.NewMemBucket(), gate: make(chan struct{})}
	opts := Options{MemtableSize: 64 << 10, MaxUnflushedBytes: 256 << 10}
	db, err := Open(ctx, g, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var written atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		val := bytes.Repeat([]byte("v"), 1000)
		for i := range 1000 { // ~1 MB, four times the limit
			var b Batch
			b.Put(fmt.Appendf(nil, "key-%04d", i), val)
			if _, err := db.Write(ctx, &b); err != nil {
				t.Error(err)
				return
			}
			written.Add(1)
		}
	}()
	// Wait until the writer is stalled: its count stops moving.
	var last int64 = -1
	for range 200 {
		time.Sleep(10 * time.Millisecond)
		if n := written.Load(); n == last && db.Metrics().WriteStalls > 0 {
			break
		} else {
			last = n
		}
	}
	m := db.Metrics()
	if m.WriteStalls == 0 || written.Load() >= 1000 {
		t.Fatalf("writer never stalled: %d written, %d stalls", written.Load(), m.WriteStalls)
	}
	if limit := opts.MaxUnflushedBytes + 2<<10; m.UnflushedBytes > limit {
		t.Fatalf("unflushed bytes %d exceed the limit %d", m.UnflushedBytes, limit)
	}
	t.Logf("stalled after %d writes with %d unflushed bytes", written.Load(), m.UnflushedBytes)
	close(g.gate) // flushes land; the writer must finish
	wg.Wait()
	if n := written.Load(); n != 1000 {
		t.Fatalf("writer finished %d of 1000 writes", n)
	}
}

// TestCloseAtL0Limit: with L0 at its stop limit and no compactor, Close
// still returns, and the data is there after reopening.
func TestCloseAtL0Limit(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	opts := Options{L0SlowdownSSTs: 2, L0StopSSTs: 2}
	db, err := Open(ctx, bkt, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		var b Batch
		b.Put(fmt.Appendf(nil, "k%d", i), []byte("v"))
		h, err := db.Write(ctx, &b)
		if err == nil {
			err = h.Durable(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			if err := db.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	done := make(chan error, 1)
	go func() { done <- db.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close hung waiting for L0 to drain")
	}
	db, err = Open(ctx, bkt, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 3 {
		if _, err := db.Get(ctx, fmt.Appendf(nil, "k%d", i)); err != nil {
			t.Fatalf("k%d: %v", i, err)
		}
	}
}
