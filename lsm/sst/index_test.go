package sst

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// indexOf builds a validated index block whose blocks' last keys are keys
// (sorted, distinct), each block's first key its last.
func indexOf(t *testing.T, keys [][]byte) indexBlock {
	t.Helper()
	var entries []byte
	var offs []uint32
	var off uint64
	for _, k := range keys {
		offs = append(offs, uint32(len(entries)))
		h := blockHandle{offset: off, length: 10}
		entries = appendIndexEntry(entries, k, k, h)
		off = h.end()
	}
	b := entries
	for _, o := range offs {
		b = binary.LittleEndian.AppendUint32(b, o)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(offs)))
	x, err := parseIndex(b, off, true)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestIndexHeadsSearch checks that an index search through heads finds the
// block a search comparing whole keys finds, for keys that make the
// integer comparison hard: equal past the shared prefix for more than 8
// bytes, shorter than 8 bytes past it (zero padding: "ab" and "ab\x00" have
// the same word), made of 0x00 and 0xff bytes (the largest word), not
// sharing the prefix at all, and each last key's neighbours.
func TestIndexHeadsSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 8))
	alphabet := []byte{0x00, 0x01, 'a', 'b', 0xfe, 0xff}
	randKey := func(prefix []byte, maxLen int) []byte {
		k := bytes.Clone(prefix)
		for range rng.IntN(maxLen + 1) {
			k = append(k, alphabet[rng.IntN(len(alphabet))])
		}
		return k
	}
	for round := range 300 {
		prefix := randKey(nil, 6)
		maxLen := 1 + rng.IntN(14)
		seen := map[string]bool{}
		var keys [][]byte
		for range minHeadsBlocks + rng.IntN(200) {
			k := randKey(prefix, maxLen)
			if round%3 == 0 {
				// Long runs of blocks whose words tie: a shared middle
				// longer than a word.
				k = append(append(bytes.Clone(prefix), "0123456789abcdef"...), randKey(nil, 3)...)
			}
			if !seen[string(k)] {
				seen[string(k)] = true
				keys = append(keys, k)
			}
		}
		if len(keys) < minHeadsBlocks {
			continue
		}
		slices.SortFunc(keys, bytes.Compare)
		x := indexOf(t, keys)
		heads := newIndexHeads(x)
		if heads == nil {
			t.Fatalf("no heads for %d blocks", x.n)
		}
		withHeads := x
		withHeads.heads = heads
		var probes [][]byte
		for _, k := range keys {
			probes = append(probes, k, append(bytes.Clone(k), 0), append(bytes.Clone(k), 0xff))
			if len(k) > 0 {
				probes = append(probes, k[:len(k)-1])
			}
		}
		for range 200 {
			probes = append(probes, randKey(prefix, maxLen+2), randKey(nil, maxLen+8))
		}
		probes = append(probes, nil, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
		for _, p := range probes {
			want := x.search(p)
			if got := withHeads.search(p); got != want {
				t.Fatalf("round %d: search(%q) with heads = %d, without = %d (prefix %q)", round, p, got, want, heads.prefix)
			}
		}
	}
}

// TestLookupWithHeads reads every row of an SST of many blocks, and keys
// around them, through Lookup and an iterator's SeekGE (both search the
// index through its heads), with and without a cache.
func TestLookupWithHeads(t *testing.T) {
	var rows []Row
	for i := range 20_000 {
		// Keys shaped like a hash's fields: one long shared prefix, then a
		// field that is sometimes a prefix of the next.
		k := fmt.Appendf(nil, "h\x00user:0000000042\x00field:%d", i)
		rows = append(rows, Row{Key: k, Seq: 1, Kind: KindPut, Value: fmt.Appendf(nil, "v%d", i)})
	}
	slices.SortFunc(rows, func(a, b Row) int { return bytes.Compare(a.Key, b.Key) })
	data, _ := build(t, rows, BuilderOptions{BlockSize: 256, BloomBitsPerKey: 10})
	ctx := context.Background()
	for _, cache := range []*Cache{nil, NewCache(64 << 20)} {
		r := openBytes(t, data, cache)
		if r.heads == nil {
			t.Fatal("a reader of many blocks made no heads")
		}
		for _, row := range rows {
			got, ok, _, err := r.Lookup(ctx, row.Key)
			if err != nil || !ok || !bytes.Equal(got.Value, row.Value) {
				t.Fatalf("Lookup(%q) = %q, %v, %v; want %q", row.Key, got.Value, ok, err, row.Value)
			}
			absent := append(bytes.Clone(row.Key), 0)
			if _, ok, _, err := r.Lookup(ctx, absent); ok || err != nil {
				t.Fatalf("Lookup of absent %q: %v, %v", absent, ok, err)
			}
		}
		it := r.NewIter(ctx, IterOptions{})
		for i, row := range rows {
			probe := row.Key
			if i > 0 {
				probe = append(bytes.Clone(rows[i-1].Key), 0) // just after the previous key
			}
			if !it.SeekGE(probe) || !bytes.Equal(it.Row().Key, row.Key) {
				t.Fatalf("SeekGE(%q) did not land on %q", probe, row.Key)
			}
		}
		if it.SeekGE(append(bytes.Clone(rows[len(rows)-1].Key), 0)) {
			t.Fatalf("SeekGE past the last key found %q", it.Row().Key)
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
