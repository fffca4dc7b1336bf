package sst

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestEveryByteFlipIsDetected flips each byte of small objects (every block
// type, all compressions) and checks that every read path either returns
// exactly the original data or an ErrCorruption, and that at least one of
// them reports the damage.
func TestEveryByteFlipIsDetected(t *testing.T) {
	for _, comp := range compressions {
		for _, unordered := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/unordered=%v", comp, unordered), func(t *testing.T) {
				testFlips(t, comp, unordered)
			})
		}
	}
}

func testFlips(t *testing.T, comp Compression, unordered bool) {
	rng := rand.New(rand.NewPCG(uint64(comp), 99))
	rows := sortedRows(rng, 60, 40)
	for i := range rows {
		if len(rows[i].Value) > 100 {
			rows[i].Value = rows[i].Value[:100] // keep the object small: the test is quadratic
		}
		if unordered {
			rows[i].Seq = uint64(i / 2) // a WAL object's seqs never decrease
		}
	}
	if unordered {
		rng.Shuffle(len(rows), func(i, j int) { rows[i].Key, rows[j].Key = rows[j].Key, rows[i].Key })
	}
	o := BuilderOptions{BlockSize: 300, RestartInterval: 4, BloomBitsPerKey: 10, Compression: comp, Unordered: unordered}
	data, _ := build(t, rows, o)
	if types := blockTypes(t, data); len(types[CompressionNone]) < 2 || (comp != CompressionNone && len(types[comp]) == 0) {
		t.Fatalf("object does not exercise the format: blocks by compression %v", types)
	}
	mut := make([]byte, len(data))
	for pos := range data {
		copy(mut, data)
		mut[pos] ^= byte(1 + rng.IntN(255))
		name := fmt.Sprintf("flip@%d", pos)
		_, _, err := DecodeAll(mut, name)
		if !errors.Is(err, ErrCorruption) {
			t.Fatalf("%s: DecodeAll error %v, want corruption", name, err)
		}
		if unordered {
			continue
		}
		if !readsDetectFlip(t, mut, name, rows) {
			t.Fatalf("%s: no read path reported the damage", name)
		}
	}
}

// readsDetectFlip opens, iterates and probes a damaged ordered object. Any
// data returned must equal the original; errors must be corruption. It
// reports whether some path saw corruption.
func readsDetectFlip(t *testing.T, mut []byte, name string, rows []Row) bool {
	ctx := context.Background()
	r, err := OpenReader(ctx, BytesObject(mut), name, int64(len(mut)), NewCache(1<<20))
	if err != nil {
		if !errors.Is(err, ErrCorruption) {
			t.Fatalf("%s: open error %v, want corruption", name, err)
		}
		return true
	}
	detected := false
	it := r.NewIter(ctx, IterOptions{})
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		if i >= len(rows) || !rowEqual(*it.Row(), rows[i]) {
			t.Fatalf("%s: iteration returned wrong row %d: %s", name, i, fmtRow(*it.Row()))
		}
		i++
	}
	if err := it.Close(); err != nil {
		if !errors.Is(err, ErrCorruption) {
			t.Fatalf("%s: iteration error %v, want corruption", name, err)
		}
		detected = true
	} else if i != len(rows) {
		t.Fatalf("%s: iteration ended early at row %d without error", name, i)
	}
	for j, row := range rows {
		if j > 0 && string(rows[j-1].Key) == string(row.Key) {
			continue
		}
		got, ok, err := r.Get(ctx, row.Key)
		switch {
		case err != nil:
			if !errors.Is(err, ErrCorruption) {
				t.Fatalf("%s: Get error %v, want corruption", name, err)
			}
			detected = true
		case !ok || !rowEqual(got, row):
			t.Fatalf("%s: Get(%q) = %s, %v; want %s", name, row.Key, fmtRow(got), ok, fmtRow(row))
		}
	}
	return detected
}

func TestFooterDamage(t *testing.T) {
	data, _ := build(t, sortedRows(rand.New(rand.NewPCG(5, 5)), 50, 30), BuilderOptions{BlockSize: 256})
	ctx := context.Background()
	for _, size := range []int{0, 1, footerLen - 1, footerLen, len(data) - 1} {
		_, err := OpenReader(ctx, BytesObject(data[len(data)-size:]), "cut", int64(size), nil)
		if !errors.Is(err, ErrCorruption) {
			t.Errorf("open of the last %d bytes: %v, want corruption", size, err)
		}
		if _, _, err := DecodeAll(data[len(data)-size:], "cut"); !errors.Is(err, ErrCorruption) {
			t.Errorf("DecodeAll of the last %d bytes: %v, want corruption", size, err)
		}
	}
	// A future format version is refused, and not reported as corruption.
	f, _, err := decodeFooter(data[len(data)-footerLen:])
	if err != nil {
		t.Fatal(err)
	}
	f.version = 2
	v2 := appendFooter(append([]byte(nil), data[:len(data)-footerLen]...), f)
	_, err = OpenReader(ctx, BytesObject(v2), "v2", int64(len(v2)), nil)
	if err == nil || errors.Is(err, ErrCorruption) {
		t.Fatalf("open of version 2: %v, want an unsupported-version error", err)
	}
	if _, _, err := DecodeAll(v2, "v2"); err == nil || errors.Is(err, ErrCorruption) {
		t.Fatalf("DecodeAll of version 2: %v, want an unsupported-version error", err)
	}
}

func TestCorruptionErrorNamesObjectAndOffset(t *testing.T) {
	data, _ := build(t, sortedRows(rand.New(rand.NewPCG(6, 6)), 50, 30), BuilderOptions{BlockSize: 256})
	data[10] ^= 0xff
	_, _, err := DecodeAll(data, "sst/obj.sst")
	want := "sst: sst/obj.sst: bad block checksum at offset 0: strata: corruption"
	if err == nil || err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
}

// blockTypes returns the offsets of an object's data, index and stats blocks
// by their stored compression type.
func blockTypes(t *testing.T, data []byte) map[Compression][]uint64 {
	f, err := decodeObjectFooter(data, "x")
	if err != nil {
		t.Fatal(err)
	}
	idx, _, err := decodeBlock(data[f.index.offset:], f.index.length, maxBlockLen)
	if err != nil {
		t.Fatal(err)
	}
	x, err := parseIndex(idx, f.index.offset, f.flags&flagUnordered == 0)
	if err != nil {
		t.Fatal(err)
	}
	types := map[Compression][]uint64{}
	hs := []blockHandle{f.index, f.filter, f.stats}
	for i := 0; i < x.n; i++ {
		hs = append(hs, x.entry(i).handle)
	}
	for _, h := range hs {
		typ := Compression(data[h.offset+h.length])
		types[typ] = append(types[typ], h.offset)
	}
	return types
}
