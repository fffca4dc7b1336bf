package lsm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stratakv/strata/blob"
)

// TestGetMulti: GetMulti agrees with Get key by key, whether a key's newest
// row is in the memtable, a frozen one or an SST, deleted, expired, empty or
// absent, and a batch is never seen in part while writers keep changing it.
func TestGetMulti(t *testing.T) {
	ctx := context.Background()
	// A block cache of one byte holds no block, so the lookups that waited
	// for their blocks to be loaded read them again one by one; one of 1 MiB
	// holds them all.
	for _, cacheBytes := range []int64{1, 1 << 20} {
		bkt := blob.NewMemBucket()
		db, err := Open(ctx, bkt, Options{MemtableSize: 64 << 10, BlockSize: 512, BlockCacheBytes: cacheBytes})
		if err != nil {
			t.Fatal(err)
		}
		key := func(i int) []byte { return fmt.Appendf(nil, "k%05d", i) }
		const n = 3000
		for i := range n {
			var b Batch
			switch i % 7 {
			case 0:
				b.Delete(key(i))
			case 1:
				b.PutWithExpiry(key(i), []byte("gone"), db.Now()-1)
			case 2:
				b.Put(key(i), nil)
			default:
				b.Put(key(i), bytes.Repeat([]byte{byte(i)}, 1+i%200))
			}
			if i%5 == 0 { // older versions below, in other SSTs
				b.Put(key(i+1), []byte("old"))
			}
			if _, err := db.Write(ctx, &b); err != nil {
				t.Fatal(err)
			}
			if i == n/2 {
				if err := db.Flush(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		var keys [][]byte
		for i := n + 10; i >= -10; i -= 3 { // descending, some absent
			keys = append(keys, key(i))
		}
		for i := 1000; i < 1200; i++ { // and a run of neighbours
			keys = append(keys, key(i))
		}
		got, err := db.GetMulti(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range keys {
			want, err := db.Get(ctx, k)
			if errors.Is(err, ErrNotFound) {
				want = nil
			} else if err != nil {
				t.Fatal(err)
			} else if want == nil {
				want = []byte{}
			}
			if !bytes.Equal(got[i], want) || (got[i] == nil) != (want == nil) {
				t.Fatalf("cache %d: GetMulti %s = %q, Get = %q", cacheBytes, k, got[i], want)
			}
		}
		db.Close()
	}

	// A writer sets all of 200 keys to one value per batch; every GetMulti
	// meanwhile must see one value across all of them.
	db2, err := Open(ctx, blob.NewMemBucket(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	group := make([][]byte, 200)
	for i := range group {
		group[i] = fmt.Appendf(nil, "g%03d", i)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for v := range 3000 {
			var b Batch
			for _, k := range group {
				b.Put(k, fmt.Appendf(nil, "v%d", v))
			}
			if _, err := db2.Write(ctx, &b); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for reads, writing := 0, true; writing; reads++ {
		select {
		case <-done:
			writing = false
		default:
		}
		vals, err := db2.GetMulti(ctx, group)
		if err != nil {
			t.Fatal(err)
		}
		for i := range vals {
			if !bytes.Equal(vals[i], vals[0]) {
				t.Fatalf("read %d saw part of a batch: %s=%q but %s=%q", reads, group[0], vals[0], group[i], vals[i])
			}
		}
	}
}

// TestGetMultiSpans: GetMulti of neighbouring keys whose blocks are not
// cached reads them in one ranged read of the SST (sst.Reader.MissingSpans),
// where Gets one by one read each block.
func TestGetMultiSpans(t *testing.T) {
	ctx := context.Background()
	counting := blob.NewCountingBucket(blob.NewMemBucket())
	opts := Options{MemtableSize: 16 << 20, BlockSize: 512, BlockCacheBytes: 8 << 20, ManifestPollInterval: time.Hour}
	db, err := Open(ctx, counting, opts)
	if err != nil {
		t.Fatal(err)
	}
	key := func(i int) []byte { return fmt.Appendf(nil, "k%05d", i) }
	val := func(i int) []byte { return fmt.Appendf(nil, "%0100d", i) }
	for i := range 4000 {
		var b Batch
		b.Put(key(i), val(i))
		if _, err := db.Write(ctx, &b); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil { // flushes one L0 SST
		t.Fatal(err)
	}
	db, err = Open(ctx, counting, opts) // an empty block cache
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Get(ctx, key(3999)); err != nil { // opens the SST: footer, index, filter
		t.Fatal(err)
	}
	measure := func(what string, read func() error) uint64 {
		before := bucketReads(counting)
		if err := read(); err != nil {
			t.Fatal(err)
		}
		n := bucketReads(counting) - before
		t.Logf("%s: %d bucket reads", what, n)
		return n
	}
	var keys [][]byte
	for i := 1000; i < 1100; i++ {
		keys = append(keys, key(i))
	}
	var got [][]byte
	multi := measure("GetMulti of 100 neighbours", func() (err error) { got, err = db.GetMulti(ctx, keys); return err })
	for i, v := range got {
		if !bytes.Equal(v, val(1000+i)) {
			t.Fatalf("GetMulti %s = %q", keys[i], v)
		}
	}
	single := measure("Get of 100 other neighbours", func() error {
		for i := 2000; i < 2100; i++ {
			if v, err := db.Get(ctx, key(i)); err != nil || !bytes.Equal(v, val(i)) {
				return fmt.Errorf("Get %s = %q, %v", key(i), v, err)
			}
		}
		return nil
	})
	if multi != 1 || single < 10 {
		t.Fatalf("GetMulti made %d bucket reads, want 1; Gets one by one made %d, want >= 10", multi, single)
	}
	if again := measure("GetMulti again", func() (err error) { _, err = db.GetMulti(ctx, keys); return err }); again != 0 {
		t.Fatalf("GetMulti of cached blocks made %d bucket reads", again)
	}
}
