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

// goldenRows are the rows of the golden batch objects: puts, tombstones and
// expiring rows, over keys written more than once.
func goldenRows() []sst.Row {
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
	return rows
}

// goldenObjects are WAL objects of fixed content, by testdata file: a batch
// with its blocks stored as they are and a fence, whose encodings testdata
// pins byte for byte (pinned), and a batch with S2 blocks, which is only
// decoded (a compressor may change its output within its own format).
func goldenObjects(t *testing.T) (objs map[string][]byte, pinned []string) {
	h := header{epoch: 9, id: 41}
	objs = map[string][]byte{"v2-fence.wal": encodeFence(10, 42)}
	for file, c := range map[string]sst.Compression{"v2-batch.wal": sst.CompressionNone, "v2-batch-s2.wal": sst.CompressionS2} {
		b, err := encodeBatches(goldenRows(), 0, 1_800_000_000_000, h, c)
		if err != nil {
			t.Fatal(err)
		}
		objs[file] = b
	}
	return objs, []string{"v2-batch.wal", "v2-fence.wal"}
}

// TestFormatGolden: WAL objects are encoded byte for byte as they were, and
// decode to what was written. An unflushed log must survive an upgrade: a
// change that fails this must add a version (format.go) that replay keeps
// reading, as it reads "strtwal1".
func TestFormatGolden(t *testing.T) {
	objs, pinned := goldenObjects(t)
	stored := map[string][]byte{}
	for file, enc := range objs {
		path := filepath.Join("testdata", file)
		if *rewrite {
			if err := os.WriteFile(path, enc, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -rewrite to create it)", err)
		}
		stored[file] = b
	}
	for _, file := range pinned {
		if !bytes.Equal(objs[file], stored[file]) {
			t.Fatalf("%s: the WAL object encoding changed: add a format version instead", file)
		}
	}
	for _, file := range []string{"v2-batch.wal", "v2-batch-s2.wal"} {
		t.Run(file, func(t *testing.T) { checkGoldenBatch(t, stored[file]) })
	}
	if epoch, fence, _, _, err := DecodeObject(stored["v2-fence.wal"], blob.WALName(42)); err != nil || epoch != 10 || !fence {
		t.Fatalf("fence: epoch %d, fence %v, %v; want epoch 10, a fence", epoch, fence, err)
	}
}

// checkGoldenBatch decodes batch, which must be object 41 of epoch 9
// holding goldenRows at clock tick 1800000000000.
func checkGoldenBatch(t *testing.T, batch []byte) {
	epoch, fence, rows, stats, err := DecodeObject(batch, blob.WALName(41))
	if err != nil || epoch != 9 || fence || len(rows) != 300 || stats.ClockTick != 1_800_000_000_000 {
		t.Fatalf("batch: epoch %d, fence %v, %d rows, tick %d, %v; want epoch 9, 300 rows, tick 1800000000000",
			epoch, fence, len(rows), stats.ClockTick, err)
	}
	want := goldenRows()
	for i, r := range rows {
		if w := want[i]; r.Seq != w.Seq || !bytes.Equal(r.Key, w.Key) || r.Kind != w.Kind ||
			r.ExpireAt != w.ExpireAt || !bytes.Equal(r.Value, w.Value) {
			t.Fatalf("batch row %d: %q seq %d kind %v expiry %d value %q", i, r.Key, r.Seq, r.Kind, r.ExpireAt, r.Value)
		}
	}
	if _, _, _, _, err := DecodeObject(batch, blob.WALName(40)); err == nil {
		t.Fatal("the batch decoded under another id's name")
	}
}
