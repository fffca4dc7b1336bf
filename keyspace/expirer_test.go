package keyspace

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm"
)

// TestActiveExpiry: 100k keys with short TTLs that nobody reads are
// removed by the expirer within a bounded time, their bytes leave the
// bucket after compaction, and keys whose TTL was extended or removed stay.
func TestActiveExpiry(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	// The engine's clock is the test's: loading 100k keys (slow under the
	// race detector) must not let them expire before the test says so.
	var clock atomic.Int64
	clock.Store(time.Now().UnixMilli())
	db, err := lsm.Open(ctx, bkt, lsm.Options{ManifestPollInterval: 10 * time.Millisecond, MemtableSize: 4 << 20, WallClock: clock.Load})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := Open(ctx, db, Options{Async: true})
	if err != nil {
		t.Fatal(err)
	}
	n := 100_000
	if raceEnabled {
		n = 10_000
	}
	t.Logf("%d keys", n)
	at := db.Now() + 500
	for i := range n {
		k := fmt.Appendf(nil, "tmp:%06d", i)
		if _, _, _, err := s.Set(ctx, 0, k, []byte("some value to reclaim"), SetOptions{ExpireAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	extended, persisted := []byte("tmp:000010"), []byte("tmp:000020")
	if ok, err := s.Expire(ctx, 0, extended, db.Now()+3600_000, ExpireCond{}); err != nil || !ok {
		t.Fatalf("expire = %v %v", ok, err)
	}
	if ok, err := s.Persist(ctx, 0, persisted); err != nil || !ok {
		t.Fatalf("persist = %v %v", ok, err)
	}
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	_, bytesBefore := rawRows(t, bkt)
	clock.Add(1000) // every TTL but the extended one has passed

	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.RunExpirer(runCtx, ExpirerOptions{Interval: 10 * time.Millisecond, Batch: 2000}) }()
	start := time.Now()
	for s.Expired() < uint64(n-2) && time.Since(start) < 60*time.Second {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := s.Expired(); got != uint64(n-2) {
		t.Fatalf("expirer removed %d keys in %v, want %d", got, time.Since(start), n-2)
	}
	t.Logf("expirer removed %d keys in %v", s.Expired(), time.Since(start))
	for _, k := range [][]byte{extended, persisted} {
		if v, ok, err := s.Get(ctx, 0, k); err != nil || !ok {
			t.Fatalf("%s removed early: %q %v %v", k, v, ok, err)
		}
	}
	if size, err := s.DBSize(ctx, 0); err != nil || size != 2 {
		t.Fatalf("dbsize = %d, %v; want 2", size, err)
	}
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	compactFully(t, bkt, db)
	rows, bytesAfter := rawRows(t, bkt)
	t.Logf("SST bytes %d → %d after compaction; rows left: meta %d, expiry index %d", bytesBefore, bytesAfter, rows[kindMeta], rows[kindExpiry])
	if rows[kindMeta] != 2 || rows[kindExpiry] != 1 {
		t.Fatalf("after compaction %d meta rows and %d expiry rows remain, want 2 and 1", rows[kindMeta], rows[kindExpiry])
	}
	if bytesAfter*20 > bytesBefore {
		t.Fatalf("SST bytes %d → %d: expired keys' bytes not reclaimed", bytesBefore, bytesAfter)
	}
}
