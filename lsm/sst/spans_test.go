package sst

import (
	"context"
	"fmt"
	"testing"
)

// TestMissingSpans: the data blocks a batch of lookups lacks are read as
// few ranged reads (one for a run of neighbouring blocks), after which every
// lookup finds its block cached and returns what Get does; blocks already
// cached, keys the filter rules out and keys past the table need nothing;
// the cache counts each fetched block's miss once.
func TestMissingSpans(t *testing.T) {
	ctx := context.Background()
	key := func(i int) []byte { return fmt.Appendf(nil, "key%06d", i) }
	var rows []Row
	for i := range 2000 {
		rows = append(rows, Row{Key: key(2 * i), Seq: uint64(i + 1), Kind: KindPut, Value: fmt.Appendf(nil, "value-%d-%0100d", i, i)})
	}
	for _, c := range compressions {
		t.Run(c.String(), func(t *testing.T) {
			data, _ := build(t, rows, BuilderOptions{BlockSize: 512, BloomBitsPerKey: 10, Compression: c})
			obj := &countingObject{ObjectReader: BytesObject(data)}
			cache := NewCache(64 << 20)
			r, err := OpenReader(ctx, obj, "t.sst", int64(len(data)), cache)
			if err != nil {
				t.Fatal(err)
			}
			obj.take()

			// 100 consecutive present keys span several blocks: one read.
			var keys [][]byte
			for i := 500; i < 600; i++ {
				keys = append(keys, key(2*i))
			}
			spans, err := r.MissingSpans(ctx, keys)
			if err != nil {
				t.Fatal(err)
			}
			blocks := 0
			for _, s := range spans {
				blocks += s.Blocks()
			}
			if len(spans) != 1 || blocks < 10 {
				t.Fatalf("%d spans of %d blocks for 100 neighbouring keys, want 1 span of >= 10", len(spans), blocks)
			}
			start := cache.Metrics()
			for _, k := range keys {
				if _, _, _, uncached, err := r.LookupCached(ctx, k); err != nil || !uncached {
					t.Fatalf("LookupCached(%s) before Load: uncached %v, %v", k, uncached, err)
				}
			}
			before := cache.Metrics()
			if err := spans[0].Load(ctx); err != nil {
				t.Fatal(err)
			}
			if reads := obj.take(); len(reads) != 1 || reads[0][1] != spans[0].Bytes() {
				t.Fatalf("Load read %v, want one read of %d bytes", reads, spans[0].Bytes())
			}
			loaded := cache.Metrics()
			// Now cached: nothing is missing, LookupCached and Lookup find
			// every key and read nothing.
			if spans, err := r.MissingSpans(ctx, keys); err != nil || len(spans) != 0 {
				t.Fatalf("MissingSpans after Load = %d spans, %v", len(spans), err)
			}
			for i, k := range keys {
				got, ok, _, uncached, err := r.LookupCached(ctx, k)
				if err != nil || !ok || uncached || !sameRow(got, rows[500+i]) {
					t.Fatalf("LookupCached(%s) after Load = %s, %v, uncached %v, %v", k, fmtRow(got), ok, uncached, err)
				}
				got, ok, _, err = r.Lookup(ctx, k)
				if err != nil || !ok || !sameRow(got, rows[500+i]) {
					t.Fatalf("Lookup(%s) after Load = %s, %v, %v", k, fmtRow(got), ok, err)
				}
			}
			if reads := obj.take(); len(reads) != 0 {
				t.Fatalf("lookups after Load read %v", reads)
			}
			// The block cache counts one miss per block fetched, none for the
			// lookups that found it missing first.
			after := cache.Metrics()
			if before.Misses != start.Misses || loaded.Misses-before.Misses != uint64(blocks) || after.Misses != loaded.Misses {
				t.Fatalf("cache misses: %d before the lookups, %d before Load, %d after Load (%d blocks), %d after the lookups",
					start.Misses, before.Misses, loaded.Misses, blocks, after.Misses)
			}

			// Absent keys between present ones, past the end, and keys far
			// apart: the filter rules most absent keys out, and blocks
			// further apart than maxSpanGap get spans of their own.
			absent := [][]byte{key(1201), key(1203), []byte("zzz")}
			spans, err = r.MissingSpans(ctx, absent)
			if err != nil {
				t.Fatal(err)
			}
			if len(spans) > 1 {
				t.Fatalf("%d spans for 2 absent keys in one block and one past the end", len(spans))
			}
			far := [][]byte{key(0), key(2 * 1999)}
			spans, err = r.MissingSpans(ctx, far)
			if err != nil {
				t.Fatal(err)
			}
			if len(spans) != 2 {
				t.Fatalf("%d spans for the first and last key, want 2", len(spans))
			}
			for _, s := range spans {
				if s.Bytes() > maxSpanBytes {
					t.Fatalf("span of %d bytes", s.Bytes())
				}
			}

			// Every key of the table: spans stay within maxSpanBytes and
			// cover every block, and the lookups agree with Get.
			keys = keys[:0]
			for _, row := range rows {
				keys = append(keys, row.Key)
			}
			r2, err := OpenReader(ctx, BytesObject(data), "t2.sst", int64(len(data)), NewCache(64<<20))
			if err != nil {
				t.Fatal(err)
			}
			spans, err = r2.MissingSpans(ctx, keys)
			if err != nil {
				t.Fatal(err)
			}
			for i := range spans {
				if spans[i].Bytes() > maxSpanBytes {
					t.Fatalf("span of %d bytes", spans[i].Bytes())
				}
				if err := spans[i].Load(ctx); err != nil {
					t.Fatal(err)
				}
			}
			for i, k := range keys {
				got, ok, _, uncached, err := r2.LookupCached(ctx, k)
				if err != nil || !ok || uncached || !sameRow(got, rows[i]) {
					t.Fatalf("LookupCached(%s) = %s, %v, uncached %v, %v", k, fmtRow(got), ok, uncached, err)
				}
			}
		})
	}
}

// TestMissingSpansNoCache: without a block cache there is nowhere to load
// blocks into, so no spans; LookupCached then reads as Lookup does.
func TestMissingSpansNoCache(t *testing.T) {
	ctx := context.Background()
	rows := []Row{{Key: []byte("a"), Seq: 1, Kind: KindPut, Value: []byte("1")}, {Key: []byte("b"), Seq: 2, Kind: KindPut, Value: []byte("2")}}
	data, _ := build(t, rows, BuilderOptions{BlockSize: 512, BloomBitsPerKey: 10})
	r := openBytes(t, data, nil)
	spans, err := r.MissingSpans(ctx, [][]byte{[]byte("a"), []byte("b")})
	if err != nil || len(spans) != 0 {
		t.Fatalf("MissingSpans without a cache = %d spans, %v", len(spans), err)
	}
	got, ok, _, uncached, err := r.LookupCached(ctx, []byte("b"))
	if err != nil || !ok || uncached || string(got.Value) != "2" {
		t.Fatalf("LookupCached without a cache = %s, %v, uncached %v, %v", fmtRow(got), ok, uncached, err)
	}
}

// sameRow compares a Lookup's row, which has no key, with the row stored.
func sameRow(got, want Row) bool {
	got.Key = want.Key
	return rowEqual(got, want)
}
