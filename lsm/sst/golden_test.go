package sst

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
)

// goldenRows are the rows of testdata/format-v1.sst, which the builder
// wrote at commit 2240776 with goldenOptions: puts, tombstones and rows
// with an expiry, in blocks of about 1 KB compressed with S2.
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

var goldenOptions = BuilderOptions{BlockSize: 1024, BloomBitsPerKey: 10, Compression: CompressionS2}

// TestFormatGolden: the builder still writes format version 1 byte for
// byte as it did, and reads back what it wrote then. SSTs live in users'
// buckets for years: a change that fails this must add a format version
// (format.go), which readers of the old one keep reading, instead.
func TestFormatGolden(t *testing.T) {
	golden, err := os.ReadFile("testdata/format-v1.sst")
	if err != nil {
		t.Fatal(err)
	}
	rows := goldenRows()
	if data, _ := build(t, rows, goldenOptions); !bytes.Equal(data, golden) {
		t.Fatalf("the builder's output (%d bytes) differs from testdata/format-v1.sst (%d bytes): "+
			"the SST format changed; add a format version instead", len(data), len(golden))
	}
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
