package lsm_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm"
	"github.com/stratakv/strata/lsm/lsmtest"
)

func testFencing(t *testing.T, bkt objstore.Bucket) {
	ctx := context.Background()
	opts := lsm.Options{ManifestPollInterval: 20 * time.Millisecond}
	db1, err := lsm.Open(ctx, bkt, opts)
	if err != nil {
		t.Fatal(err)
	}
	// Writers on db1 record every acknowledged key while db2 opens.
	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
		stop  = make(chan struct{})
	)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := fmt.Sprintf("w%d-%06d", w, i)
				var b lsm.Batch
				b.Put([]byte(k), []byte(k))
				h, err := db1.Write(ctx, &b)
				if err == nil {
					err = h.Durable(ctx)
				}
				if err != nil {
					if !errors.Is(err, lsm.ErrFenced) {
						t.Errorf("db1 write failed with %v, want lsm.ErrFenced", err)
					}
					return
				}
				mu.Lock()
				acked = append(acked, k)
				mu.Unlock()
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	db2, err := lsm.Open(ctx, bkt, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	wg.Wait() // every db1 writer must stop on its own: fenced
	close(stop)

	// After fencing db1 acknowledges nothing.
	var b lsm.Batch
	b.Put([]byte("late"), []byte("x"))
	if h, err := db1.Write(ctx, &b); err == nil {
		if err := h.Durable(ctx); !errors.Is(err, lsm.ErrFenced) {
			t.Fatalf("late db1 write: Durable = %v, want lsm.ErrFenced", err)
		}
	} else if !errors.Is(err, lsm.ErrFenced) {
		t.Fatalf("late db1 write: %v, want lsm.ErrFenced", err)
	}
	if err := db1.Flush(ctx); !errors.Is(err, lsm.ErrFenced) {
		t.Fatalf("db1 flush after fencing = %v, want lsm.ErrFenced", err)
	}
	if len(acked) == 0 {
		t.Fatal("db1 acknowledged nothing before being fenced; the test proves nothing")
	}
	for _, k := range acked {
		v, err := db2.Get(ctx, []byte(k))
		if err != nil || string(v) != k {
			t.Fatalf("db2 lost %s acknowledged by db1: %q %v", k, v, err)
		}
	}
	if _, err := db2.Get(ctx, []byte("late")); !errors.Is(err, lsm.ErrNotFound) {
		t.Fatalf("db2 sees db1's unacknowledged late write: %v", err)
	}
	t.Logf("db1 acknowledged %d writes before being fenced; db2 has all of them", len(acked))
	if err := db1.Close(); !errors.Is(err, lsm.ErrFenced) {
		t.Fatalf("db1 close = %v, want lsm.ErrFenced", err)
	}
}

func TestFencingMem(t *testing.T) { testFencing(t, blob.NewMemBucket()) }

func TestFencingLocal(t *testing.T) {
	bkt, err := blob.NewLocalBucket(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bkt.Close() })
	testFencing(t, bkt)
}

// TestGroupCommit shows that concurrent writers share WAL PUTs.
func TestGroupCommit(t *testing.T) {
	bkt, err := blob.NewLocalBucket(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bkt.Close() })
	ctx := context.Background()
	db, err := lsm.Open(ctx, bkt, lsm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	before := db.Metrics().WAL.Objects
	const writers = 1000
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			var b lsm.Batch
			b.Put(fmt.Appendf(nil, "key-%04d", i), []byte("value"))
			h, err := db.Write(ctx, &b)
			if err == nil {
				err = h.Durable(ctx)
			}
			if err != nil {
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
	puts := db.Metrics().WAL.Objects - before
	t.Logf("%d durable writes used %d WAL PUTs", writers, puts)
	if puts == 0 || puts > writers/10 {
		t.Fatalf("%d writers produced %d WAL PUTs, want between 1 and %d", writers, puts, writers/10)
	}
	for i := range writers {
		if _, err := db.Get(ctx, fmt.Appendf(nil, "key-%04d", i)); err != nil {
			t.Fatalf("key-%04d: %v", i, err)
		}
	}
}

// TestFencingS3 runs the fencing test against a real MinIO.
func TestFencingS3(t *testing.T) {
	if testing.Short() {
		t.Skip("needs MinIO")
	}
	testFencing(t, lsmtest.MinIOBucket(t, "fencing"))
}
