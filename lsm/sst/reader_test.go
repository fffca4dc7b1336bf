package sst

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"unsafe"

	"github.com/thanos-io/objstore"
)

func TestRoundTrip(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 3
	}
	for _, comp := range compressions {
		for _, bs := range []int{64, 700, 4096, 64 << 10} {
			for seed := range seeds {
				t.Run(fmt.Sprintf("%v/bs=%d/seed=%d", comp, bs, seed), func(t *testing.T) {
					testRoundTrip(t, comp, bs, uint64(seed))
				})
			}
		}
	}
}

func testRoundTrip(t *testing.T, comp Compression, blockSize int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, uint64(blockSize)^uint64(comp)<<32))
	rows := sortedRows(rng, rng.IntN(800), 5+rng.IntN(400))
	o := BuilderOptions{
		BlockSize:       blockSize,
		RestartInterval: []int{1, 2, 16}[rng.IntN(3)],
		BloomBitsPerKey: []int{0, DefaultBloomBitsPerKey}[rng.IntN(2)],
		Compression:     comp,
	}
	data, st := build(t, rows, o)
	if want := expectedStats(rows, true); !statsEqual(st, want) {
		t.Fatalf("builder stats %+v, want %+v", st, want)
	}
	got, st2, err := DecodeAll(data, "rt.sst")
	if err != nil {
		t.Fatalf("DecodeAll: %v", err)
	}
	if !statsEqual(st, st2) {
		t.Fatalf("DecodeAll stats %+v, want %+v", st2, st)
	}
	if len(got) != len(rows) {
		t.Fatalf("DecodeAll: %d rows, want %d", len(got), len(rows))
	}
	for i := range rows {
		if !rowEqual(got[i], rows[i]) {
			t.Fatalf("DecodeAll row %d: %s, want %s", i, fmtRow(got[i]), fmtRow(rows[i]))
		}
	}
	for _, cache := range []*Cache{nil, NewCache(64 << 20), NewCache(16 << 10)} {
		obj := &countingObject{ObjectReader: BytesObject(data)}
		r, err := OpenReader(context.Background(), obj, "rt.sst", int64(len(data)), cache)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		if !statsEqual(r.Stats(), st) {
			t.Fatalf("reader stats %+v, want %+v", r.Stats(), st)
		}
		checkIterAll(t, r, rows)
		checkGets(t, r, rows, rng)
		checkLookupsHeld(t, r, rows)
		obj.take()
		checkSeeks(t, r, rows, rng, obj, cache == nil)
	}
}

func checkIterAll(t *testing.T, r *Reader, rows []Row) {
	t.Helper()
	it := r.NewIter(context.Background(), IterOptions{})
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		if i >= len(rows) {
			t.Fatalf("iter row %d: %s past the end", i, fmtRow(*it.Row()))
		}
		if !rowEqual(*it.Row(), rows[i]) {
			t.Fatalf("iter row %d: %s, want %s", i, fmtRow(*it.Row()), fmtRow(rows[i]))
		}
		i++
	}
	if err := it.Close(); err != nil || i != len(rows) {
		t.Fatalf("iter: %d rows, err %v; want %d rows", i, err, len(rows))
	}
}

// checkLookupsHeld looks up every key, holding each row Lookup returns
// (whose value shares the block's memory) while the lookups after it run, evict
// blocks from a small cache and reuse the pooled block iterator; then
// checks every held row. The filter never rules out a present key.
func checkLookupsHeld(t *testing.T, r *Reader, rows []Row) {
	t.Helper()
	ctx := context.Background()
	var held, want []Row
	for i, row := range rows {
		if i > 0 && bytes.Equal(row.Key, rows[i-1].Key) {
			continue // an older version: rows go newest first per key
		}
		got, ok, filtered, err := r.Lookup(ctx, bytes.Clone(row.Key))
		if err != nil || !ok || filtered {
			t.Fatalf("Lookup(%q) = %v, filtered %v, %v; want the row", row.Key, ok, filtered, err)
		}
		if got.Key != nil {
			t.Fatalf("Lookup(%q) returned Key %q; want none (the caller has it)", row.Key, got.Key)
		}
		got.Key = row.Key
		held, want = append(held, got), append(want, row)
	}
	for i := range held {
		if !rowEqual(held[i], want[i]) {
			t.Fatalf("held row %d = %s after later lookups, want %s", i, fmtRow(held[i]), fmtRow(want[i]))
		}
	}
}

func checkGets(t *testing.T, r *Reader, rows []Row, rng *rand.Rand) {
	t.Helper()
	ctx := context.Background()
	newest := map[string]Row{}
	for _, row := range rows {
		if _, ok := newest[string(row.Key)]; !ok {
			newest[string(row.Key)] = row
		}
	}
	for k, want := range newest {
		got, ok, err := r.Get(ctx, []byte(k))
		if err != nil || !ok || !rowEqual(got, want) {
			t.Fatalf("Get(%q) = %s, %v, %v; want %s", k, fmtRow(got), ok, err, fmtRow(want))
		}
	}
	for range 200 {
		k := randKey(rng, 1000)
		k = append(k, byte(rng.IntN(3))) // mostly absent, between present keys
		if rng.IntN(2) == 0 {
			k = k[:len(k)-1]
		}
		got, ok, err := r.Get(ctx, k)
		want, wantOK := newest[string(k)]
		if err != nil || ok != wantOK || (ok && !rowEqual(got, want)) {
			t.Fatalf("Get(%q) = %s, %v, %v; want %s, %v", k, fmtRow(got), ok, err, fmtRow(want), wantOK)
		}
	}
}

func checkSeeks(t *testing.T, r *Reader, rows []Row, rng *rand.Rand, obj *countingObject, noCache bool) {
	t.Helper()
	ctx := context.Background()
	pick := func() []byte {
		if len(rows) > 0 && rng.IntN(2) == 0 {
			return rows[rng.IntN(len(rows))].Key
		}
		return randKey(rng, 1000)
	}
	for range 100 {
		var lower, upper []byte
		if rng.IntN(2) == 0 {
			lower = pick()
		}
		if rng.IntN(2) == 0 {
			upper = pick()
		}
		key := pick()
		it := r.NewIter(ctx, IterOptions{LowerBound: lower, UpperBound: upper})
		from, to := modelSeek(rows, key, lower, upper)
		ok := it.SeekGE(key)
		if rng.IntN(4) == 0 {
			from, to = modelSeek(rows, nil, lower, upper)
			ok = it.First()
		}
		for i := from; i < min(to, from+40); i++ {
			if !ok || !rowEqual(*it.Row(), rows[i]) {
				t.Fatalf("seek %q [%q,%q) step %d: valid=%v row %s, want %s (err %v)",
					key, lower, upper, i-from, ok, fmtRow(*it.Row()), fmtRow(rows[i]), it.Error())
			}
			ok = it.Next()
		}
		if from+40 >= to && ok {
			t.Fatalf("seek %q [%q,%q): extra row %s", key, lower, upper, fmtRow(*it.Row()))
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if reads := obj.take(); noCache && upper != nil {
			checkReadsBelow(t, r, reads, upper)
		}
	}
}

// checkReadsBelow asserts that no data block read holds only keys >= upper.
func checkReadsBelow(t *testing.T, r *Reader, reads [][2]int64, upper []byte) {
	t.Helper()
	x, err := r.indexBlock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, rd := range reads {
		for i := 0; i < x.n; i++ {
			e := x.entry(i)
			if int64(e.handle.offset) >= rd[0] && int64(e.handle.offset) < rd[0]+rd[1] && e.compareFirstKey(upper) >= 0 {
				t.Fatalf("read block %d (first key %q) at or past upper bound %q", i, e.appendFirstKey(nil), upper)
			}
		}
	}
}

func TestEmptyObject(t *testing.T) {
	for _, o := range []BuilderOptions{{}, {BloomBitsPerKey: 10}, {Unordered: true}} {
		data, st := build(t, nil, o)
		rows, st2, err := DecodeAll(data, "empty")
		if err != nil || len(rows) != 0 || st.Entries != 0 || !statsEqual(st, st2) {
			t.Fatalf("DecodeAll(empty) = %v, %+v, %v", rows, st2, err)
		}
		if o.Unordered {
			continue
		}
		r := openBytes(t, data, nil)
		if _, ok, err := r.Get(context.Background(), []byte("a")); ok || err != nil {
			t.Fatalf("Get on empty: %v %v", ok, err)
		}
		it := r.NewIter(context.Background(), IterOptions{})
		if it.First() || it.SeekGE([]byte("a")) || it.Close() != nil {
			t.Fatal("iterator over empty object is not empty")
		}
	}
}

func TestUnorderedWAL(t *testing.T) {
	for _, comp := range compressions {
		for seed := range 10 {
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			var rows []Row
			seq := uint64(rng.IntN(100))
			for range rng.IntN(500) {
				seq += uint64(rng.IntN(2)) // batches share a seq
				rows = append(rows, randRow(rng, randKey(rng, 50), seq))
			}
			o := BuilderOptions{Unordered: true, Compression: comp, BlockSize: 512, BloomBitsPerKey: 10}
			data, st := build(t, rows, o)
			if want := expectedStats(rows, false); !statsEqual(st, want) {
				t.Fatalf("stats %+v, want %+v", st, want)
			}
			got, st2, err := DecodeAll(data, "wal/1.sst")
			if err != nil || len(got) != len(rows) || !statsEqual(st, st2) {
				t.Fatalf("DecodeAll: %d rows, %v", len(got), err)
			}
			for i := range rows {
				if !rowEqual(got[i], rows[i]) {
					t.Fatalf("row %d: %s, want %s", i, fmtRow(got[i]), fmtRow(rows[i]))
				}
			}
			if _, err := OpenReader(context.Background(), BytesObject(data), "wal", int64(len(data)), nil); err == nil {
				t.Fatal("OpenReader accepted an unordered object")
			}
		}
	}
}

func TestDecodeAllRowsOwnMemory(t *testing.T) {
	rows := []Row{{Key: []byte("a"), Seq: 2, Kind: KindPut, Value: []byte("v1")}, {Key: []byte("b"), Seq: 1, Kind: KindPut, Value: []byte("v2")}}
	data, _ := build(t, rows, BuilderOptions{})
	got, _, err := DecodeAll(data, "x")
	if err != nil {
		t.Fatal(err)
	}
	clear(data)
	got[0].Key = append(got[0].Key, 'z') // must not clobber got[0].Value
	if !bytes.Equal(got[0].Value, []byte("v1")) || !bytes.Equal(got[1].Key, []byte("b")) {
		t.Fatalf("rows alias the object or each other: %s %s", fmtRow(got[0]), fmtRow(got[1]))
	}
}

// TestBuilderOrderMatchesCompare: the builder's order check, made from the
// bytes the two keys share, accepts a row after another exactly when
// Compare puts it after: across words and within them, for keys that are
// prefixes of each other, bytes above 0x7f, and versions of one key.
func TestBuilderOrderMatchesCompare(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	key := func() []byte {
		k := make([]byte, rng.IntN(20))
		for i := range k {
			k[i] = "ab\x00\xff"[rng.IntN(4)]
		}
		return k
	}
	for range 20000 {
		a := Row{Key: key(), Seq: uint64(rng.IntN(3)), Kind: KindPut}
		b := Row{Key: a.Key[:rng.IntN(len(a.Key)+1)], Seq: uint64(rng.IntN(3)), Kind: KindPut}
		if rng.IntN(2) == 0 {
			b.Key = append(bytes.Clone(b.Key), key()...)
		}
		w := NewBuilder(BuilderOptions{})
		if err := w.Add(a); err != nil {
			t.Fatal(err)
		}
		want := Compare(b.Key, b.Seq, a.Key, a.Seq) > 0
		if err := w.Add(b); (err == nil) != want {
			t.Fatalf("%s after %s: accepted %v, Compare says %v", fmtRow(b), fmtRow(a), err == nil, want)
		}
	}
}

func TestBuilderRejectsOutOfOrder(t *testing.T) {
	put := func(k string, seq uint64) Row { return Row{Key: []byte(k), Seq: seq, Kind: KindPut} }
	cases := []struct {
		name string
		prev Row
		next Row
	}{
		{"same key and seq", put("b", 5), put("b", 5)},
		{"same key newer seq", put("b", 5), put("b", 6)},
		{"smaller key", put("b", 5), put("a", 9)},
		{"smaller key prefix", put("ba", 5), put("b", 1)},
	}
	for _, c := range cases {
		b := NewBuilder(BuilderOptions{})
		if err := b.Add(c.prev); err != nil {
			t.Fatal(err)
		}
		if err := b.Add(c.next); err == nil {
			t.Fatalf("%s: Add accepted %s after %s", c.name, fmtRow(c.next), fmtRow(c.prev))
		}
		// The rejected row is not added and the builder stays usable.
		if err := b.Add(put("c", 1)); err != nil {
			t.Fatalf("%s: valid row after a rejected one: %v", c.name, err)
		}
		data, st, err := b.Finish()
		if err != nil || st.Entries != 2 {
			t.Fatalf("%s: finish: %+v %v", c.name, st, err)
		}
		if _, _, err := DecodeAll(data, "x"); err != nil {
			t.Fatal(err)
		}
	}
	w := NewBuilder(BuilderOptions{Unordered: true})
	if err := w.Add(put("z", 5)); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(put("a", 5)); err != nil {
		t.Fatalf("unordered: equal seq rejected: %v", err)
	}
	if err := w.Add(put("a", 4)); err == nil {
		t.Fatal("unordered: decreasing seq accepted")
	}
	if err := w.Add(Row{Key: []byte("k"), Seq: 9, Kind: 7}); err == nil {
		t.Fatal("invalid kind accepted")
	}
	if _, _, err := NewBuilder(BuilderOptions{Compression: 9}).Finish(); err == nil {
		t.Fatal("invalid compression accepted")
	}
	// Bad sizes are refused by Add and Finish, not a panic in NewBuilder.
	for _, o := range []BuilderOptions{{BlockSize: -1000}, {BlockSize: -1000, SizeHint: 10}, {BlockSize: 1 << 30}} {
		if err := NewBuilder(o).Add(put("a", 1)); err == nil {
			t.Fatalf("block size %d accepted", o.BlockSize)
		}
	}
	b := NewBuilder(BuilderOptions{})
	if _, _, err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(put("a", 1)); err == nil {
		t.Fatal("Add after Finish accepted")
	}
}

func TestReaderRefetchesEvictedMeta(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rows := sortedRows(rng, 500, 300)
	data, _ := build(t, rows, BuilderOptions{BlockSize: 256, BloomBitsPerKey: 10, Compression: CompressionS2})
	cache := NewCache(1 << 20)
	r := openBytes(t, data, cache)
	if r.indexPinned || r.filterPinned {
		t.Fatal("index/filter pinned although the cache can hold them")
	}
	// Flood every shard with high-priority entries of another reader: the
	// index and filter must go, and be read again on demand.
	for off := range uint64(4096) {
		cache.set(1<<40, off, make([]byte, 1024), true)
	}
	if _, ok := r.residentFilter(); ok {
		t.Fatal("filter still cached after the flood")
	}
	if r.indexRef.Load() != nil || r.filterRef.Load() != nil {
		t.Fatal("the Reader still references an evicted index or filter")
	}
	checkGets(t, r, rows, rng)
	checkIterAll(t, r, rows)
	if _, ok := r.residentFilter(); !ok {
		t.Fatal("filter not re-cached by Get")
	}
	if r.indexRef.Load() == nil || r.filterRef.Load() == nil {
		t.Fatal("index or filter re-cached without the Reader's reference")
	}
}

// TestCacheCountsDataBlocks pins what the block cache's hits and misses
// count: data blocks. A point read also checks the filter and searches the
// index, which the Reader reaches without counting.
func TestCacheCountsDataBlocks(t *testing.T) {
	rows := []Row{{Key: []byte("a"), Seq: 1, Kind: KindPut}, {Key: []byte("b"), Seq: 1, Kind: KindPut}}
	data, _ := build(t, rows, BuilderOptions{BloomBitsPerKey: 10})
	cache := NewCache(1 << 20)
	r := openBytes(t, data, cache)
	ctx := context.Background()
	for i, want := range []CacheMetrics{{Misses: 1}, {Hits: 1, Misses: 1}, {Hits: 2, Misses: 1}} {
		if _, ok, _, err := r.Lookup(ctx, []byte("a")); !ok || err != nil {
			t.Fatal(ok, err)
		}
		if m := cache.Metrics(); m.Hits != want.Hits || m.Misses != want.Misses {
			t.Fatalf("after %d lookups: hits %d, misses %d; want %d, %d", i+1, m.Hits, m.Misses, want.Hits, want.Misses)
		}
	}
}

func TestBucketObject(t *testing.T) {
	ctx := context.Background()
	rows := sortedRows(rand.New(rand.NewPCG(3, 3)), 100, 50)
	data, _ := build(t, rows, BuilderOptions{BlockSize: 256})
	bkt := objstore.NewInMemBucket()
	if err := bkt.Upload(ctx, "sst/x.sst", bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	r, err := OpenReader(ctx, BucketObject(bkt, "sst/x.sst"), "sst/x.sst", int64(len(data)), NewCache(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	checkIterAll(t, r, rows)
	if _, err := OpenReader(ctx, BucketObject(bkt, "sst/missing.sst"), "sst/missing.sst", 1000, nil); err == nil || errors.Is(err, ErrCorruption) || !bkt.IsObjNotFoundErr(errors.Unwrap(err)) {
		t.Fatalf("open of a missing object: %v", err)
	}
	_, err = OpenReader(ctx, BucketObject(bkt, "sst/x.sst"), "sst/x.sst", int64(len(data))+10, nil)
	if !errors.Is(err, ErrCorruption) {
		t.Fatalf("bucket object shorter than its size: %v", err)
	}
	// Claim a larger size than the object has: the reads come back short.
	_, err = OpenReader(context.Background(), BytesObject(data), "short", int64(len(data))+10, nil)
	if !errors.Is(err, ErrCorruption) {
		t.Fatalf("open with wrong size: %v", err)
	}
	_, err = OpenReader(context.Background(), BytesObject(data[:len(data)-1]), "short", int64(len(data))-1, nil)
	if !errors.Is(err, ErrCorruption) {
		t.Fatalf("open of truncated object: %v", err)
	}
}

// TestReaderConcurrent shares one Reader and a small cache between
// goroutines doing Gets and scans, so blocks, index and filter are evicted
// and re-read while others use them (run with -race).
func TestReaderConcurrent(t *testing.T) {
	rows := sortedRows(rand.New(rand.NewPCG(4, 4)), 2000, 800)
	data, _ := build(t, rows, BuilderOptions{BlockSize: 512, BloomBitsPerKey: 10, Compression: CompressionS2})
	cache := NewCache(64 << 10)
	r := openBytes(t, data, cache)
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 50 {
				if g%2 == 0 {
					row := rows[rng.IntN(len(rows))]
					if _, ok, err := r.Get(context.Background(), row.Key); !ok || err != nil {
						errc <- fmt.Errorf("Get(%q): %v %v", row.Key, ok, err)
						return
					}
					continue
				}
				lo := rng.IntN(len(rows))
				for lo > 0 && bytes.Equal(rows[lo-1].Key, rows[lo].Key) {
					lo-- // the scan starts at the newest version
				}
				it := r.NewIter(context.Background(), IterOptions{LowerBound: rows[lo].Key})
				for i, ok := lo, it.First(); i < min(lo+100, len(rows)); i, ok = i+1, it.Next() {
					if !ok || !rowEqual(*it.Row(), rows[i]) {
						errc <- fmt.Errorf("scan from %d: row %d wrong (err %v)", lo, i, it.Error())
						return
					}
				}
				it.Close()
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if m := cache.Metrics(); m.Bytes > 64<<10 || m.Hits == 0 {
		t.Fatalf("cache metrics %+v", m)
	}
}

func TestEstimatedSize(t *testing.T) {
	rows := sortedRows(rand.New(rand.NewPCG(9, 9)), 3000, 2000)
	for _, comp := range compressions {
		b := NewBuilder(BuilderOptions{BloomBitsPerKey: 10, Compression: comp})
		for _, r := range rows {
			if err := b.Add(r); err != nil {
				t.Fatal(err)
			}
		}
		est := b.EstimatedSize()
		data, _, err := b.Finish()
		if err != nil {
			t.Fatal(err)
		}
		// The open block is counted uncompressed, so allow one block of slack.
		if est < len(data) || est > len(data)+2*DefaultBlockSize+20000 {
			t.Fatalf("%v: estimated %d bytes, finished %d", comp, est, len(data))
		}
	}
}

// TestBuilderPrefixAndSizeHint: a Prefix comes out in front of the very
// object built without it, and the object after it reads back; a SizeHint,
// too small or too large, changes no byte. EstimatedSize ignores the prefix.
func TestBuilderPrefixAndSizeHint(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	ordered := sortedRows(rng, 2000, 1500)
	var unordered []Row
	for i := range 300 {
		unordered = append(unordered, randRow(rng, randKey(rng, 100), uint64(i/3+1)))
	}
	prefix := []byte("a header of 21 bytes!")
	for _, comp := range compressions {
		for _, o := range []BuilderOptions{{BloomBitsPerKey: 10, Compression: comp}, {Unordered: true, Compression: comp}} {
			rows := ordered
			if o.Unordered {
				rows = unordered
			}
			plain, stats := build(t, rows, o)
			for _, hint := range []int{0, 1, len(plain) / 2, 4 * len(plain)} {
				p := o
				p.Prefix, p.SizeHint = prefix, hint
				b := NewBuilder(p)
				for _, r := range rows {
					if err := b.Add(r); err != nil {
						t.Fatal(err)
					}
				}
				if est := b.EstimatedSize(); est > len(plain)+2*DefaultBlockSize+20000 {
					t.Fatalf("%v hint %d: estimated %d bytes for an object of %d", comp, hint, est, len(plain))
				}
				b.SetClockTick(42)
				data, st, err := b.Finish()
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(data, prefix) || !bytes.Equal(data[len(prefix):], plain) {
					t.Fatalf("%v unordered=%v hint %d: prefix+object differs from the object built without them", comp, o.Unordered, hint)
				}
				if !statsEqual(st, stats) {
					t.Fatalf("stats differ: %+v vs %+v", st, stats)
				}
				if o.Unordered {
					got, _, err := DecodeAll(data[len(prefix):], "prefixed")
					if err != nil || len(got) != len(rows) {
						t.Fatalf("decode after prefix: %d rows, %v", len(got), err)
					}
				} else {
					checkIterAll(t, openBytes(t, data[len(prefix):], nil), rows)
				}
			}
		}
	}
}

// TestTableIterReuse: a closed TableIter refers to no table or block and
// refuses to move; InitIter makes it an iterator over another table that
// yields exactly that table's rows, reusing its key buffer.
func TestTableIterReuse(t *testing.T) {
	ctx := context.Background()
	var tables [2][]Row
	for i := range 300 {
		tables[i%2] = append(tables[i%2], Row{Key: fmt.Appendf(nil, "key-%04d", i), Seq: uint64(i + 1), Kind: KindPut, Value: fmt.Appendf(nil, "v%d", i)})
	}
	var it TableIter
	var keyBuf *byte
	for round := range 4 {
		rows := tables[round%2]
		data, _ := build(t, rows, BuilderOptions{BlockSize: 256})
		r := openBytes(t, data, nil)
		r.InitIter(&it, ctx, IterOptions{})
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			if !rowEqual(*it.Row(), rows[n]) {
				t.Fatalf("round %d row %d: %s, want %s", round, n, fmtRow(*it.Row()), fmtRow(rows[n]))
			}
			n++
		}
		if err := it.Close(); err != nil || n != len(rows) {
			t.Fatalf("round %d: %d of %d rows, %v", round, n, len(rows), err)
		}
		if it.r != nil || it.ctx != nil || it.bi.data != nil || it.span != nil || it.index.n != 0 || it.bi.cur.Value != nil {
			t.Fatalf("round %d: a closed TableIter still refers to its table or a block", round)
		}
		if it.First() || !errors.Is(it.Error(), errIterClosed) {
			t.Fatalf("round %d: a closed TableIter moved (err %v)", round, it.Error())
		}
		if p := unsafe.SliceData(it.bi.key[:1]); round > 0 && p != keyBuf {
			t.Errorf("round %d: the key buffer was not reused", round)
		} else {
			keyBuf = p
		}
	}
}
