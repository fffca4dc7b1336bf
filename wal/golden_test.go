package wal

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata golden files")

// goldenObjects are WAL objects of fixed content, one of each kind, whose
// encodings testdata pins: a batch (puts, a tombstone, an expiring row;
// S2 blocks) and a fence.
func goldenObjects(t *testing.T) map[string][]byte {
	var rows []sst.Row
	for i := range 300 {
		r := sst.Row{Key: fmt.Appendf(nil, "golden-%04d", i%200), Seq: uint64(5000 + i), Kind: sst.KindPut,
			Value: fmt.Appendf(nil, "value-%d", i*13)}
		switch i % 7 {
		case 3:
			r.Kind, r.Value = sst.KindDelete, nil
		case 5:
			r.ExpireAt = 1_900_000_000_000
		}
		rows = append(rows, r)
	}
	batch, err := encodeBatches(rows, 0, 1_800_000_000_000, header{epoch: 9, id: 41}, sst.CompressionS2)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{"v2-batch.wal": batch, "v2-fence.wal": encodeFence(10, 42)}
}

// TestFormatGolden: WAL objects are encoded byte for byte as they were, and
// decode to what was written. An unflushed log must survive an upgrade: a
// change that fails this must add a version (format.go) that replay keeps
// reading, as it reads "strtwal1".
func TestFormatGolden(t *testing.T) {
	for file, enc := range goldenObjects(t) {
		path := filepath.Join("testdata", file)
		if *rewrite {
			if err := os.WriteFile(path, enc, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -rewrite to create it)", err)
		}
		if !bytes.Equal(enc, want) {
			t.Fatalf("%s: the WAL object encoding changed: add a format version instead", file)
		}
	}
	batch, _ := os.ReadFile("testdata/v2-batch.wal")
	epoch, fence, rows, stats, err := DecodeObject(batch, blob.WALName(41))
	if err != nil || epoch != 9 || fence || len(rows) != 300 || stats.ClockTick != 1_800_000_000_000 {
		t.Fatalf("batch: epoch %d, fence %v, %d rows, tick %d, %v; want epoch 9, 300 rows, tick 1800000000000",
			epoch, fence, len(rows), stats.ClockTick, err)
	}
	for i, r := range rows {
		if r.Seq != uint64(5000+i) || !bytes.Equal(r.Key, fmt.Appendf(nil, "golden-%04d", i%200)) ||
			(r.Kind == sst.KindDelete) != (i%7 == 3) || (r.ExpireAt != 0) != (i%7 == 5) {
			t.Fatalf("batch row %d: %q seq %d kind %v expiry %d", i, r.Key, r.Seq, r.Kind, r.ExpireAt)
		}
		if r.Kind == sst.KindPut && !bytes.Equal(r.Value, fmt.Appendf(nil, "value-%d", i*13)) {
			t.Fatalf("batch row %d: value %q", i, r.Value)
		}
	}
	if _, _, _, _, err := DecodeObject(batch, blob.WALName(40)); err == nil {
		t.Fatal("the batch decoded under another id's name")
	}
	f, _ := os.ReadFile("testdata/v2-fence.wal")
	if epoch, fence, _, _, err := DecodeObject(f, blob.WALName(42)); err != nil || epoch != 10 || !fence {
		t.Fatalf("fence: epoch %d, fence %v, %v; want epoch 10, a fence", epoch, fence, err)
	}
}
