package keyspace

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/compactor"
	"github.com/stratakv/strata/lsm"
	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/manifest"
)

// rawRows counts the rows of each keyspace in every SST object of bkt.
func rawRows(t *testing.T, bkt objstore.Bucket) (map[byte]int, int64) {
	t.Helper()
	ctx := context.Background()
	counts := map[byte]int{}
	var bytes int64
	err := bkt.Iter(ctx, blob.SSTDir, func(name string) error {
		rc, err := bkt.Get(ctx, name)
		if err != nil {
			return err
		}
		defer rc.Close()
		data, err := io.ReadAll(rc)
		if err != nil {
			return err
		}
		bytes += int64(len(data))
		rows, _, err := sst.DecodeAll(data, name)
		for _, r := range rows {
			counts[r.Key[0]]++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return counts, bytes
}

// compactFully runs a compactor with the Redis filter until it is idle and
// collects the garbage.
// compactFully compacts bkt until there is nothing left to do, waits until
// db (the engine writing it) has picked up the result, then collects
// garbage as if hours had passed: objects only older manifests name are
// deleted, which is safe only once db no longer reads through them.
func compactFully(t *testing.T, bkt objstore.Bucket, db *lsm.DB) {
	t.Helper()
	ctx := context.Background()
	var offset time.Duration
	c, err := compactor.Open(ctx, bkt, compactor.Options{
		Scheduler: compactor.SchedulerOptions{L0Trigger: 1, MinMergeWidth: 2, MaxRuns: 1},
		Filter:    NewFilterFactory(),
		GC:        compactor.GCOptions{MinAge: time.Minute, Now: func() time.Time { return time.Now().Add(offset) }},
	})
	if err != nil {
		t.Fatal(err)
	}
	for {
		did, err := c.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !did {
			break
		}
	}
	latest, err := manifest.NewStore(bkt).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); db.Metrics().ManifestID < latest.ID; {
		if time.Now().After(deadline) {
			t.Fatalf("engine still on manifest %d, compacted one is %d", db.Metrics().ManifestID, latest.ID)
		}
		time.Sleep(5 * time.Millisecond)
	}
	for range 2 {
		offset += time.Hour
		if _, err := c.CollectGarbage(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFilterDropsDeletedHash: DEL of a large hash writes one row; after
// compaction its field rows are physically gone, and a re-created hash of
// the same name shows none of them.
func TestFilterDropsDeletedHash(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	db, err := lsm.Open(ctx, bkt, lsm.Options{ManifestPollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := Open(ctx, db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const fields = 20_000
	k := []byte("big")
	for i := 0; i < fields; i += 1000 {
		pairs := make([][2][]byte, 0, 1000)
		for j := i; j < i+1000; j++ {
			pairs = append(pairs, [2][]byte{fmt.Appendf(nil, "field-%06d", j), []byte("some value of the field")})
		}
		if _, err := s.HSet(ctx, 0, k, pairs...); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, _, err := s.Set(ctx, 0, []byte("keep"), []byte("me"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	before, bytesBefore := rawRows(t, bkt)
	writes := db.Metrics().Writes
	if n, err := s.Del(ctx, 0, k); err != nil || n != 1 {
		t.Fatalf("del = %d, %v", n, err)
	}
	if w := db.Metrics().Writes - writes; w != 1 {
		t.Fatalf("DEL of a %d-field hash took %d engine writes, want 1", fields, w)
	}
	if _, err := s.HSet(ctx, 0, k, [2][]byte{[]byte("fresh"), []byte("v")}); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	compactFully(t, bkt, db)
	after, bytesAfter := rawRows(t, bkt)
	t.Logf("hash rows %d → %d, SST bytes %d → %d", before[kindHash], after[kindHash], bytesBefore, bytesAfter)
	if after[kindHash] != 1 {
		t.Fatalf("%d hash rows survive compaction, want only the re-created hash's 1", after[kindHash])
	}
	if bytesAfter*10 > bytesBefore {
		t.Fatalf("SST bytes %d → %d: the deleted hash's bytes are not gone", bytesBefore, bytesAfter)
	}
	time.Sleep(50 * time.Millisecond) // the engine picks up the compacted manifest
	all, err := s.HGetAll(ctx, 0, k)
	if err != nil || len(all) != 1 || string(all[0][0]) != "fresh" {
		t.Fatalf("re-created hash after compaction = %q, %v", all, err)
	}
	if v, ok, err := s.Get(ctx, 0, []byte("keep")); err != nil || !ok || string(v) != "me" {
		t.Fatalf("unrelated key after compaction = %q %v %v", v, ok, err)
	}
}

// TestFilterDropsFlushedDB: FLUSHDB is one batch; compaction then drops
// every row of the old generation.
func TestFilterDropsFlushedDB(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	db, err := lsm.Open(ctx, bkt, lsm.Options{ManifestPollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := Open(ctx, db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		k := fmt.Appendf(nil, "k%d", i)
		if _, err := s.SAdd(ctx, 3, k, []byte("a"), []byte("b")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Expire(ctx, 3, k, db.Now()+3600_000, ExpireCond{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, _, err := s.Set(ctx, 4, []byte("other-db"), []byte("v"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.FlushDB(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	compactFully(t, bkt, db)
	rows, _ := rawRows(t, bkt)
	if rows[kindSet] != 0 || rows[kindExpiry] != 0 || rows[kindMeta] != 1 {
		t.Fatalf("after FLUSHDB and compaction: %d set rows, %d expiry rows, %d meta rows; want 0, 0, 1",
			rows[kindSet], rows[kindExpiry], rows[kindMeta])
	}
	if n, err := s.DBSize(ctx, 3); err != nil || n != 0 {
		t.Fatalf("dbsize 3 = %d, %v", n, err)
	}
	if v, ok, err := s.Get(ctx, 4, []byte("other-db")); err != nil || !ok || string(v) != "v" {
		t.Fatalf("db 4 lost its key: %q %v %v", v, ok, err)
	}
}
