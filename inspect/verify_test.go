package inspect

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/manifest"
	"github.com/stratakv/strata/wal"
)

func TestVerifyChecksManifestRecord(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	b := sst.NewBuilder(sst.BuilderOptions{})
	for i := range 100 {
		if err := b.Add(sst.Row{Key: []byte{'q', byte(i)}, Seq: uint64(i + 1), Kind: sst.KindPut, Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
	data, stats, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	id := blob.NewSSTID()
	if err := bkt.Upload(ctx, blob.SSTName(id), bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	st := manifest.NewStore(bkt)
	good := &manifest.Manifest{ID: 1, LastSeq: 100, L0: []manifest.SST{{ID: id, Size: uint64(len(data)), Stats: stats}}}
	if err := st.Create(ctx, good); err != nil {
		t.Fatal(err)
	}
	var calls []Progress
	rep, err := Verify(ctx, bkt, VerifyOptions{Progress: func(p Progress) { calls = append(calls, p) }})
	if err != nil || !rep.OK() || rep.SSTs != 1 || rep.Rows != 100 || rep.Bytes != int64(len(data)) {
		t.Fatalf("intact: %+v, %v", rep, err)
	}
	if len(calls) != 2 || calls[1] != (Progress{Done: 2, Total: 2, Bytes: int64(len(data))}) {
		t.Errorf("progress calls %+v", calls)
	}

	// The object is intact but the manifest's record of it is not.
	bad := good.Clone()
	bad.ID = 2
	bad.L0[0].Stats.Entries = 99
	if err := st.Create(ctx, bad); err != nil {
		t.Fatal(err)
	}
	rep, err = Verify(ctx, bkt, VerifyOptions{})
	if err != nil || rep.OK() || rep.ManifestID != 2 || !strings.Contains(rep.Problems[0].String(), "stats disagree") {
		t.Fatalf("stats mismatch: %+v, %v", rep, err)
	}
	if !strings.HasPrefix(rep.Problems[0].Object, blob.SSTDir) {
		t.Errorf("problem names %q", rep.Problems[0].Object)
	}

	if _, err := Verify(ctx, blob.NewMemBucket(), VerifyOptions{}); err == nil {
		t.Error("an empty bucket verified")
	}
}

func TestShape(t *testing.T) {
	s := func(size uint64, entries uint64) manifest.SST {
		return manifest.SST{ID: blob.NewSSTID(), Size: size, Stats: sst.Stats{Entries: entries}}
	}
	m := &manifest.Manifest{L0: []manifest.SST{s(1024, 1)},
		Runs: []manifest.Run{{ID: 3, SSTs: []manifest.SST{s(2048, 2), s(2048, 3)}}, {ID: 1, SSTs: []manifest.SST{s(3<<20, 4)}}}}
	want := "shape: L0 1 SSTs 1.0 KiB | 2 runs [r3 2×4.0 KiB, r1 1×3.0 MiB] | total 4 SSTs, 3.0 MiB, 10 entries"
	if got := Shape(m); got != want {
		t.Errorf("Shape = %s\nwant    %s", got, want)
	}
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 5 << 30: "5.0 GiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %s, want %s", n, got, want)
		}
	}
}

// TestVerifySortsTornWALTail: a damaged WAL object in the last MaxInflight
// ids (the tail a power loss can tear) is reported as torn, not as a
// problem; one further back is corruption.
func TestVerifySortsTornWALTail(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	if err := manifest.NewStore(bkt).Create(ctx, &manifest.Manifest{ID: 1}); err != nil {
		t.Fatal(err)
	}
	w := wal.NewWriter(bkt, 1, 0, nil, wal.Options{Epoch: 1})
	const n = wal.MaxInflight + 4
	for seq := uint64(1); seq <= n; seq++ {
		if err := w.Append([]sst.Row{{Key: []byte{'k', byte(seq)}, Seq: seq, Kind: sst.KindPut, Value: []byte("v")}}, 1); err != nil {
			t.Fatal(err)
		}
		if err := w.WaitDurable(ctx, seq); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	damage := func(id uint64) {
		t.Helper()
		name := blob.WALName(id)
		data, err := readObject(ctx, bkt, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := bkt.Upload(ctx, name, bytes.NewReader(data[:len(data)/2])); err != nil {
			t.Fatal(err)
		}
	}
	damage(n) // the last object, cut short
	rep, err := Verify(ctx, bkt, VerifyOptions{})
	if err != nil || !rep.OK() || rep.WALs != n || len(rep.Torn) != 1 || rep.Torn[0].Object != blob.WALName(n) {
		t.Fatalf("a torn last object: %+v, %v", rep, err)
	}
	damage(1) // more than MaxInflight ids before the end
	rep, err = Verify(ctx, bkt, VerifyOptions{})
	if err != nil || rep.OK() || rep.Problems[0].Object != blob.WALName(1) {
		t.Fatalf("a damaged first object: %+v, %v", rep, err)
	}
}
