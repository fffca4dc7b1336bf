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
	ctx := context.Background()
	rc, err := bkt.Get(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	data[at(len(data))] ^= 0xff
	if err := bkt.Upload(ctx, name, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
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

// TestCorruptWAL flips a byte in an unflushed WAL object: Open reports
// corruption instead of replaying damaged rows.
func TestCorruptWAL(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	db, err := Open(ctx, bkt, Options{})
	if err != nil {
		t.Fatal(err)
	}
	writeKeys(t, db, 100)
	db.Abandon()
	var target string
	for _, name := range objectNames(t, bkt, blob.WALDir) {
		if attrs, err := bkt.Attributes(ctx, name); err == nil && attrs.Size > 100 {
			target = name
		}
	}
	if target == "" {
		t.Fatal("no WAL object with data")
	}
	flipByte(t, bkt, target, func(n int) int { return n / 2 })
	if _, err := Open(ctx, bkt, Options{}); !errors.Is(err, ErrCorruption) {
		t.Fatalf("open with corrupt WAL: %v, want ErrCorruption", err)
	}
}
