package sst

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// fuzzSeedObjects are small valid objects of every kind the builder makes.
func fuzzSeedObjects(f *testing.F) [][]byte {
	var objs [][]byte
	rng := rand.New(rand.NewPCG(11, 11))
	for _, comp := range compressions {
		for _, unordered := range []bool{false, true} {
			rows := sortedRows(rng, 20, 15)
			for i := range rows {
				rows[i].Value = rows[i].Value[:min(len(rows[i].Value), 40)]
				if unordered {
					rows[i].Seq = uint64(i)
				}
			}
			o := BuilderOptions{BlockSize: 128, RestartInterval: 3, BloomBitsPerKey: 10, Compression: comp, Unordered: unordered}
			data, _ := build(f, rows, o)
			objs = append(objs, data)
		}
	}
	empty, _ := build(f, nil, BuilderOptions{})
	return append(objs, empty)
}

// FuzzDecodeBlock feeds arbitrary bytes to the block-level decoders: the
// trailer check, the decompressors and the data-block row decoder.
func FuzzDecodeBlock(f *testing.F) {
	for _, obj := range fuzzSeedObjects(f) {
		fo, _ := decodeObjectFooter(obj, "seed")
		idx, _, _ := decodeBlock(obj[fo.index.offset:], fo.index.length, maxBlockLen)
		x, _ := indexView(idx)
		for i := 0; i < x.n; i++ {
			h := x.entry(i).handle
			f.Add(obj[h.offset:h.end()], uint8(obj[h.offset+h.length]))
			contents, _, _ := decodeBlock(obj[h.offset:], h.length, maxBlockLen)
			f.Add(contents, uint8(CompressionNone))
		}
		f.Add(idx, uint8(CompressionNone))
	}
	f.Fuzz(func(t *testing.T, b []byte, typ uint8) {
		const limit = 1 << 20
		if len(b) >= trailerLen {
			n := uint64(len(b) - trailerLen)
			if contents, _, err := decodeBlock(b, n, limit); err == nil {
				walkBlock(t, contents)
			}
		}
		if contents, err := decompress(Compression(typ), b, limit); err == nil {
			if len(contents) > limit {
				t.Fatalf("decompressed %d bytes past the limit", len(contents))
			}
			walkBlock(t, contents)
		}
		walkBlock(t, b)
		if x, err := parseIndex(b, 1<<40, true); err == nil {
			for i := 0; i < x.n; i++ {
				e := x.entry(i)
				if e.compareFirstKey(e.lastKey) > 0 {
					t.Fatalf("validated index entry %d has first key > last key", i)
				}
				_ = x.search(e.lastKey)
			}
		}
		if fl, err := parseBloomFilter(b); err == nil {
			fl.mayContain(bloomHash(b))
		}
		_, _, _ = decodeStats(b)
	})
}

// walkBlock decodes every row of a data block and seeks in it; it must not
// panic, every row must be what refDecodeEntry reads at its offset, and a
// seek must land on a key >= its target.
func walkBlock(t *testing.T, b []byte) {
	var it blockIter
	if it.init(b) != nil {
		return
	}
	var keys [][]byte
	var prev []byte
	off := 0
	ok := it.first()
	for ; ok && len(keys) < 64; ok = it.nextRow() {
		want, next, good := refDecodeEntry(b[:it.restarts], off, prev)
		if !good || next != it.next || !rowEqual(*it.row(), want) {
			t.Fatalf("row at %d: decoded %s (next %d), the reference reads %s (next %d, ok %v)",
				off, fmtRow(*it.row()), it.next, fmtRow(want), next, good)
		}
		prev = bytes.Clone(it.key)
		keys = append(keys, prev)
		off = it.next
	}
	if !ok && it.err != nil && len(keys) < 64 {
		if _, _, good := refDecodeEntry(b[:it.restarts], off, prev); good {
			t.Fatalf("row at %d: the decoder failed (%v) where the reference reads a row", off, it.err)
		}
	}
	for _, k := range keys {
		if it.seekGE(k) && bytes.Compare(it.key, k) < 0 {
			t.Fatalf("seekGE(%q) landed on smaller key %q", k, it.key)
		}
	}
}

func FuzzDecodeFooter(f *testing.F) {
	for _, obj := range fuzzSeedObjects(f) {
		f.Add(obj[len(obj)-footerLen:], int64(len(obj)))
	}
	f.Fuzz(func(t *testing.T, b []byte, size int64) {
		ft, rest, err := decodeFooter(b)
		if err != nil {
			return
		}
		if len(rest) != len(b)-footerLen {
			t.Fatalf("footer consumed %d bytes", len(b)-len(rest))
		}
		if got := appendFooter(nil, ft); !bytes.Equal(got, b[:footerLen]) {
			t.Fatalf("footer does not round-trip:\n%x\n%x", got, b[:footerLen])
		}
		if ft.validate(size) == nil && ft.stats.end() != uint64(size)-footerLen {
			t.Fatal("validated footer does not end at the object's footer")
		}
	})
}

// FuzzDecodeAll decodes whole objects; when one decodes, the Reader must see
// exactly the same rows.
func FuzzDecodeAll(f *testing.F) {
	for _, obj := range fuzzSeedObjects(f) {
		f.Add(obj, false)
		f.Add(obj, true)
	}
	f.Fuzz(func(t *testing.T, data []byte, fix bool) {
		if fix {
			data = reseal(data)
		}
		rows, _, err := DecodeAll(data, "fuzz")
		ctx := context.Background()
		r, oerr := OpenReader(ctx, BytesObject(data), "fuzz", int64(len(data)), nil)
		if oerr != nil {
			return
		}
		it := r.NewIter(ctx, IterOptions{})
		i := 0
		for ok := it.First(); ok; ok = it.Next() {
			if err == nil && (i >= len(rows) || !rowEqual(*it.Row(), rows[i])) {
				t.Fatalf("reader row %d differs from DecodeAll", i)
			}
			i++
		}
		ierr := it.Close()
		if ierr != nil && !errors.Is(ierr, ErrCorruption) {
			t.Fatalf("iteration error %v is not corruption", ierr)
		}
		if err == nil && (ierr != nil || i != len(rows)) {
			t.Fatalf("reader: %d rows, %v; DecodeAll: %d rows", i, ierr, len(rows))
		}
		for _, row := range rows {
			if _, _, gerr := r.Get(ctx, row.Key); gerr != nil && !errors.Is(gerr, ErrCorruption) {
				t.Fatalf("Get error %v is not corruption", gerr)
			}
		}
	})
}

// reseal recomputes the footer checksum and every block checksum it can
// find, so mutated objects get past the checksums and exercise the decoders
// behind them.
func reseal(data []byte) []byte {
	d := bytes.Clone(data)
	if len(d) < footerLen {
		return d
	}
	ft := d[len(d)-footerLen:]
	copy(ft[56:], footerMagic)
	binary.LittleEndian.PutUint32(ft[52:], crc32.Checksum(ft[:52], crcTable))
	f, _, err := decodeFooter(ft)
	if err != nil {
		return d
	}
	fix := func(h blockHandle) bool {
		if h.offset > uint64(len(d)) || h.length > uint64(len(d)) || h.end() > uint64(len(d)) {
			return false
		}
		tr := d[h.offset+h.length:]
		binary.LittleEndian.PutUint32(tr[1:], blockChecksum(d[h.offset:h.offset+h.length], Compression(tr[0])))
		return true
	}
	fix(f.filter)
	fix(f.stats)
	if !fix(f.index) {
		return d
	}
	idx, _, err := decodeBlock(d[f.index.offset:], f.index.length, 1<<20)
	if err != nil {
		return d
	}
	x, err := indexView(idx)
	if err != nil {
		return d
	}
	for i := 0; i < x.n; i++ {
		off := binary.LittleEndian.Uint32(x.offsets[4*i:])
		if int(off) > len(x.entries) {
			break
		}
		if e, _, err := decodeIndexEntry(x.entries[off:]); err == nil {
			fix(e.handle)
		}
	}
	return d
}

// refDecodeEntry decodes the entry at off of a block's entries (the block
// without its restart array) field by field with decodeUvarint and
// decodeVarint, as the row decoder did before it read offsets in place:
// the oracle the fuzzer holds blockIter.decodeAt to.
func refDecodeEntry(entries []byte, off int, prevKey []byte) (Row, int, bool) {
	if off >= len(entries) {
		return Row{}, 0, false
	}
	b := entries[off:]
	shared, b, err1 := decodeUvarint(b)
	unshared, b, err2 := decodeUvarint(b)
	vlen, b, err3 := decodeUvarint(b)
	if err1 != nil || err2 != nil || err3 != nil || shared > uint64(len(prevKey)) || unshared > uint64(len(b)) {
		return Row{}, 0, false
	}
	key := append(bytes.Clone(prevKey[:shared]), b[:unshared]...)
	b = b[unshared:]
	seq, b, err := decodeUvarint(b)
	if err != nil || len(b) == 0 || b[0] > byte(KindPut) {
		return Row{}, 0, false
	}
	kind := Kind(b[0])
	expireAt, b, err := decodeVarint(b[1:])
	if err != nil || vlen > uint64(len(b)) {
		return Row{}, 0, false
	}
	next := len(entries) - len(b) + int(vlen)
	return Row{Key: key, Seq: seq, Kind: kind, ExpireAt: expireAt, Value: b[:vlen]}, next, true
}
