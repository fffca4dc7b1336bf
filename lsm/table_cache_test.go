package lsm

import (
	"bytes"
	"context"
	"testing"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/manifest"
)

// TestTableCache checks the table cache's lock-free map of Readers: an open
// that fails is not remembered (the SST is found once it is there), an
// open Reader is shared, and a manifest that no longer lists an SST drops
// its Reader while one still held keeps working.
func TestTableCache(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	b := sst.NewBuilder(sst.BuilderOptions{BloomBitsPerKey: 10})
	if err := b.Add(sst.Row{Key: []byte("k"), Seq: 1, Kind: sst.KindPut, Value: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	data, stats, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	tbl := manifest.SST{ID: blob.NewSSTID(), Size: uint64(len(data)), Stats: stats}
	c := newTableCache(bkt, sst.NewCache(1<<20))

	if _, err := c.get(ctx, tbl); err == nil {
		t.Fatal("opened an SST that is not in the bucket")
	}
	if err := bkt.Upload(ctx, blob.SSTName(tbl.ID), bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	r, err := c.get(ctx, tbl)
	if err != nil {
		t.Fatalf("the failed open was remembered: %v", err)
	}
	if again, err := c.get(ctx, tbl); err != nil || again != r {
		t.Fatalf("second get: %p, %v; want the same Reader %p", again, err, r)
	}

	c.retain(&manifest.Manifest{L0: []manifest.SST{tbl}})
	if _, ok := (*c.readers.Load())[tbl.ID]; !ok {
		t.Fatal("retain dropped a listed SST")
	}
	c.retain(&manifest.Manifest{})
	if _, ok := (*c.readers.Load())[tbl.ID]; ok {
		t.Fatal("retain kept an SST the manifest no longer lists")
	}
	if row, ok, _, err := r.Lookup(ctx, []byte("k")); err != nil || !ok || string(row.Value) != "v" {
		t.Fatalf("a dropped Reader's lookup: %q, %v, %v", row.Value, ok, err)
	}
}
