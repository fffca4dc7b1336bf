package sst

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
)

// goldenRows are the rows of the objects in testdata, which the builder
// wrote at commit 2240776 with goldenOptions: puts, tombstones and rows
// with an expiry, in blocks of about 1 KB; format-v1.sst has its blocks
// compressed with S2, format-v1-none.sst has them stored as they are.
func goldenRows() []Row {
	var rows []Row
	for i := range 2000 {
		r := Row{Key: fmt.Appendf(nil, "golden-%05d", i), Seq: uint64(i + 1), Kind: KindPut, Value: fmt.Appendf(nil, "value-%d", i*7)}
		if i%10 == 3 {
			r.Kind, r.Value = KindDelete, nil
		}
		if i%10 == 5 {
			r.ExpireAt = 1_900_000_000_000
		}
		rows = append(rows, r)
	}
	return rows
}

var goldenOptions = BuilderOptions{BlockSize: 1024, BloomBitsPerKey: 10}

// TestFormatGolden: the builder still writes format version 1 byte for
// byte as it did (uncompressed: a compressor may change its output within
// its own format), and reads back what it wrote then, compressed or not.
// SSTs live in users' buckets for years: a change that fails this must add
// a format version (format.go), which readers of the old one keep reading,
// instead.
func TestFormatGolden(t *testing.T) {
	plain, err := os.ReadFile("testdata/format-v1-none.sst")
	if err != nil {
		t.Fatal(err)
	}
	rows := goldenRows()
	if data, _ := build(t, rows, goldenOptions); !bytes.Equal(data, plain) {
		t.Fatalf("the builder's output (%d bytes) differs from testdata/format-v1-none.sst (%d bytes): "+
			"the SST format changed; add a format version instead", len(data), len(plain))
	}
	for _, file := range []string{"format-v1-none.sst", "format-v1.sst"} {
		golden, err := os.ReadFile("testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(file, func(t *testing.T) { checkGolden(t, golden, rows) })
	}
}

// checkGolden decodes golden, which must hold rows, whole and by point
// reads, and checks its filter rules out absent keys.
func checkGolden(t *testing.T, golden []byte, rows []Row) {
	got, _, err := DecodeAll(golden, "golden")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("DecodeAll: %d rows, want %d", len(got), len(rows))
	}
	r := openBytes(t, golden, NewCache(1<<20))
	ctx := context.Background()
	for i, w := range rows {
		if !rowEqual(got[i], w) {
			t.Fatalf("DecodeAll row %d: %s, want %s", i, fmtRow(got[i]), fmtRow(w))
		}
		row, ok, _, err := r.Lookup(ctx, w.Key)
		row.Key = w.Key // Lookup leaves it to the caller
		if err != nil || !ok || !rowEqual(row, w) {
			t.Fatalf("Lookup(%s): %s, %v, %v; want %s", w.Key, fmtRow(row), ok, err, fmtRow(w))
		}
	}
	filtered := 0
	for i := range 10000 {
		_, ok, f, err := r.Lookup(ctx, fmt.Appendf(nil, "golden-%05d-absent", i))
		if err != nil || ok {
			t.Fatalf("Lookup of an absent key: %v, %v", ok, err)
		}
		if f {
			filtered++
		}
	}
	if filtered < 9700 {
		t.Fatalf("the filter ruled out %d of 10000 absent keys, want about 99%%", filtered)
	}
}
