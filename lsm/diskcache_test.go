package lsm

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
)

// diskCacheOptions keep the manifest poll out of the request counts and the
// block cache small, so reads reach the bucket (or the disk cache) the way
// they do when the data is larger than memory.
func diskCacheOptions() Options {
	return Options{MemtableSize: 128 << 10, BlockCacheBytes: 64 << 10, ManifestPollInterval: time.Hour}
}

func bucketReads(b *blob.CountingBucket) uint64 { n := b.Counts(); return n.Get + n.GetRange }

// fillDB writes n keys through bkt in several L0 SSTs and closes the DB.
func fillDB(t *testing.T, bkt objstore.Bucket, n int) {
	t.Helper()
	db, err := Open(context.Background(), bkt, diskCacheOptions())
	if err != nil {
		t.Fatal(err)
	}
	writeKeys(t, db, n)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func openDiskCache(t *testing.T, bkt objstore.Bucket, dir string) *blob.DiskCache {
	t.Helper()
	c, err := blob.NewDiskCache(bkt, blob.DiskCacheOptions{Dir: dir, MaxBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// readKeys gets count random keys of the n fillDB wrote, checking each.
func readKeys(t *testing.T, db *DB, n, count int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0))
	for range count {
		i := rng.IntN(n)
		v, err := db.Get(context.Background(), fmt.Appendf(nil, "key-%05d", i))
		if err != nil {
			t.Fatalf("get key-%05d: %v", i, err)
		}
		if want := fmt.Appendf(nil, "value-%05d-%s", i, strings.Repeat("x", 50)); !bytes.Equal(v, want) {
			t.Fatalf("get key-%05d = %q", i, v)
		}
	}
}

// TestDiskCacheWarmReopen: a DB reopened over a warm disk cache (a new
// DiskCache on the same directory, as after a server restart) answers Gets
// with no bucket reads; without the cache the same Gets read the bucket.
func TestDiskCacheWarmReopen(t *testing.T) {
	const n = 3000
	ctx := context.Background()
	counting := blob.NewCountingBucket(blob.NewMemBucket())
	dir := t.TempDir()
	fillDB(t, openDiskCache(t, counting, dir), n) // flushes write through

	for _, cached := range []bool{true, false} {
		var bkt objstore.Bucket = counting
		if cached {
			bkt = openDiskCache(t, counting, dir)
		}
		db, err := Open(ctx, bkt, diskCacheOptions())
		if err != nil {
			t.Fatal(err)
		}
		before := bucketReads(counting)
		readKeys(t, db, n, 300, 1)
		got := bucketReads(counting) - before
		db.Abandon()
		if cached && got != 0 {
			t.Errorf("300 Gets over a warm disk cache made %d bucket reads, want 0", got)
		}
		if !cached && got == 0 {
			t.Error("300 Gets without the disk cache made no bucket reads: the test measures nothing")
		}
	}
}

// TestDiskCacheGETsPerRead measures bucket reads per random point read
// with and without the disk cache, cold and warm, and logs them.
func TestDiskCacheGETsPerRead(t *testing.T) {
	const n, count = 20000, 2000
	ctx := context.Background()
	counting := blob.NewCountingBucket(blob.NewMemBucket())
	fillDB(t, counting, n)
	// pass opens a DB over bkt and returns the bucket reads per Get of two
	// passes of random point reads.
	pass := func(bkt objstore.Bucket) [2]float64 {
		db, err := Open(ctx, bkt, diskCacheOptions())
		if err != nil {
			t.Fatal(err)
		}
		defer db.Abandon()
		var out [2]float64
		for i := range out {
			before := bucketReads(counting)
			readKeys(t, db, n, count, uint64(i)+10)
			out[i] = float64(bucketReads(counting)-before) / count
		}
		return out
	}
	none := pass(counting)
	dir := t.TempDir()
	cold := pass(openDiskCache(t, counting, dir))
	restarted := pass(openDiskCache(t, counting, dir))
	t.Logf("GETs per read (%d random point reads of %d keys, 64 KiB block cache): "+
		"no disk cache %.3f cold, %.3f second pass; disk cache %.3f cold, %.3f second pass, %.3f after a restart",
		count, n, none[0], none[1], cold[0], cold[1], restarted[0])
	if none[1] < 0.2 {
		t.Errorf("without the disk cache the second pass made %.3f GETs per read: the block cache holds the data, the test measures nothing", none[1])
	}
	if cold[0] >= none[0] || cold[1] != 0 || restarted[0] != 0 {
		t.Errorf("disk cache: %.3f cold (no cache %.3f), %.3f warm, %.3f after restart; want fewer cold, 0 warm",
			cold[0], none[0], cold[1], restarted[0])
	}
}
