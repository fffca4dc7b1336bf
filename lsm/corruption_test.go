package lsm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/wal"
)

func objectNames(t *testing.T, bkt objstore.Bucket, dir string) []string {
	t.Helper()
	var names []string
	if err := bkt.Iter(context.Background(), dir, func(n string) error {
		names = append(names, n)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return names
}

// flipByte rewrites object name with one byte inverted.
func flipByte(t *testing.T, bkt objstore.Bucket, name string, at func(size int) int) {
	t.Helper()
	data := getObject(t, bkt, name)
	data[at(len(data))] ^= 0xff
	if err := bkt.Upload(context.Background(), name, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
}

// getObject returns object name's bytes.
func getObject(t *testing.T, bkt objstore.Bucket, name string) []byte {
	t.Helper()
	rc, err := bkt.Get(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeKeys(t *testing.T, db *DB, n int) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < n; i += 50 {
		var b Batch
		for j := i; j < min(n, i+50); j++ {
			b.Put(fmt.Appendf(nil, "key-%05d", j), fmt.Appendf(nil, "value-%05d-%s", j, strings.Repeat("x", 50)))
		}
		h, err := db.Write(ctx, &b)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Durable(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCorruptSST flips bytes in a flushed SST: every read either returns the
// right value or an error wrapping ErrCorruption, and some read reports it.
func TestCorruptSST(t *testing.T) {
	ctx := context.Background()
	for _, pos := range []struct {
		name string
		at   func(int) int
	}{
		{"data", func(n int) int { return n / 4 }},
		{"footer", func(n int) int { return n - 3 }},
	} {
		t.Run(pos.name, func(t *testing.T) {
			bkt := blob.NewMemBucket()
			db, err := Open(ctx, bkt, Options{Compression: 0})
			if err != nil {
				t.Fatal(err)
			}
			const n = 2000
			writeKeys(t, db, n)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			ssts := objectNames(t, bkt, blob.SSTDir)
			if len(ssts) != 1 {
				t.Fatalf("want 1 sst, have %v", ssts)
			}
			flipByte(t, bkt, ssts[0], pos.at)
			db, err = Open(ctx, bkt, Options{BlockCacheBytes: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			corrupt := 0
			for i := range n {
				v, err := db.Get(ctx, fmt.Appendf(nil, "key-%05d", i))
				switch {
				case errors.Is(err, ErrCorruption):
					corrupt++
				case err != nil:
					t.Fatalf("key %d: %v, want a value or ErrCorruption", i, err)
				case !bytes.HasPrefix(v, fmt.Appendf(nil, "value-%05d-", i)):
					t.Fatalf("key %d: corrupt data returned: %q", i, v)
				}
			}
			if corrupt == 0 {
				t.Fatal("no read reported corruption")
			}
			it := db.NewIter(ctx, IterOptions{})
			for ok := it.First(); ok; ok = it.Next() {
			}
			if err := it.Close(); !errors.Is(err, ErrCorruption) {
				t.Fatalf("scan over corrupt sst: %v, want ErrCorruption", err)
			}
		})
	}
}

// walDataObjects returns the names of the WAL objects holding batches (a
// fence is a header alone), in id order.
func walDataObjects(t *testing.T, bkt objstore.Bucket) []string {
	t.Helper()
	var names []string
	for _, name := range objectNames(t, bkt, blob.WALDir) {
		if attrs, err := bkt.Attributes(context.Background(), name); err == nil && attrs.Size > 100 {
			names = append(names, name)
		}
	}
	return names
}

// TestCorruptWAL flips a byte in an unflushed WAL object more than
// MaxInflight ids below the end of the log, where it was acknowledged:
// Open reports corruption instead of replaying damaged rows.
func TestCorruptWAL(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	db, err := Open(ctx, bkt, Options{})
	if err != nil {
		t.Fatal(err)
	}
	writeKeys(t, db, 50*(wal.MaxInflight+4)) // an object a batch: each waits to be durable
	db.Abandon()
	data := walDataObjects(t, bkt)
	if len(data) < wal.MaxInflight+4 {
		t.Fatalf("%d WAL objects with data, want %d", len(data), wal.MaxInflight+4)
	}
	flipByte(t, bkt, data[0], func(n int) int { return n / 2 })
	if _, err := Open(ctx, bkt, Options{}); !errors.Is(err, ErrCorruption) {
		t.Fatalf("open with corrupt WAL: %v, want ErrCorruption", err)
	}
}

// TestTornWALTail: a power loss can leave the last WAL objects a writer
// stored (on a local bucket: named, their bytes not yet on the disk) torn,
// or holding a recycled file's old bytes. Such objects were never
// acknowledged, so Open skips them, with everything after them up to the
// next writer's fence, and starts; every object before them is replayed.
// A second restart, with the new writer's objects after the tail, skips
// the same objects and keeps the new writes.
func TestTornWALTail(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	db, err := Open(ctx, bkt, Options{})
	if err != nil {
		t.Fatal(err)
	}
	writeKeys(t, db, 500) // keys 0-499, 50 to an object
	db.Abandon()
	data := walDataObjects(t, bkt)
	if len(data) != 10 {
		t.Fatalf("%d WAL objects with data, want 10", len(data))
	}
	// The ninth holds the eighth's bytes (a recycled file never
	// overwritten), the tenth is cut short.
	if err := bkt.Upload(ctx, data[8], bytes.NewReader(getObject(t, bkt, data[7]))); err != nil {
		t.Fatal(err)
	}
	last := getObject(t, bkt, data[9])
	if err := bkt.Upload(ctx, data[9], bytes.NewReader(last[:len(last)/2])); err != nil {
		t.Fatal(err)
	}
	check := func(db *DB, present, absent [2]int) {
		t.Helper()
		for i := present[0]; i < present[1]; i++ {
			if _, err := db.Get(ctx, fmt.Appendf(nil, "key-%05d", i)); err != nil {
				t.Fatalf("key %d, stored before the torn tail: %v", i, err)
			}
		}
		for i := absent[0]; i < absent[1]; i++ {
			if _, err := db.Get(ctx, fmt.Appendf(nil, "key-%05d", i)); !errors.Is(err, ErrNotFound) {
				t.Fatalf("key %d, in the torn tail: %v, want ErrNotFound", i, err)
			}
		}
	}
	db, err = Open(ctx, bkt, Options{})
	if err != nil {
		t.Fatalf("open after a torn tail: %v", err)
	}
	check(db, [2]int{0, 400}, [2]int{400, 500})
	// The new writer's own writes, then another restart.
	var b Batch
	b.Put([]byte("after"), []byte("restart"))
	h, err := db.Write(ctx, &b)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Durable(ctx); err != nil {
		t.Fatal(err)
	}
	db.Abandon()
	db, err = Open(ctx, bkt, Options{})
	if err != nil {
		t.Fatalf("second open after a torn tail: %v", err)
	}
	defer db.Close()
	check(db, [2]int{0, 400}, [2]int{400, 500})
	if v, err := db.Get(ctx, []byte("after")); err != nil || string(v) != "restart" {
		t.Fatalf("write after the first restart: %q, %v", v, err)
	}
}
