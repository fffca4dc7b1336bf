package lsm

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
)

// TestBatchReusedAfterWrite: a batch's storage is reused by Reset, and the
// WAL holds the memtable's copies of the rows, not the batch's, so a batch
// reset and refilled after Write returns changes nothing already written.
// The rows are read back from the WAL alone: the engine is abandoned, as a
// crash would leave it, before any memtable flush, and reopened. (Handing
// the WAL the batch's own rows fails here: k00 reads back as "nev".)
func TestBatchReusedAfterWrite(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	db, err := Open(ctx, bkt, Options{WALFlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var b Batch
	var last WriteHandle
	for i := range 50 {
		b.Reset()
		b.Put(fmt.Appendf(nil, "k%02d", i), fmt.Appendf(nil, "v%02d", i))
		b.Put([]byte("shared"), fmt.Appendf(nil, "s%02d", i))
		if last, err = db.Write(ctx, &b); err != nil {
			t.Fatal(err)
		}
	}
	b.Reset()
	b.Put([]byte("k00"), []byte("never written"))
	// Close the WAL (storing what is pending) without flushing a memtable.
	db.commitMu.Lock()
	if err := db.wal.Close(); err != nil {
		t.Fatal(err)
	}
	db.commitMu.Unlock()
	if err := last.Durable(ctx); err != nil {
		t.Fatal(err)
	}
	db.Abandon()

	db, err = Open(ctx, bkt, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 50 {
		got, err := db.Get(ctx, fmt.Appendf(nil, "k%02d", i))
		if want := fmt.Sprintf("v%02d", i); err != nil || string(got) != want {
			t.Fatalf("k%02d = %q, %v after replay; want %q", i, got, err, want)
		}
	}
	if got, err := db.Get(ctx, []byte("shared")); err != nil || string(got) != "s49" {
		t.Fatalf("shared = %q, %v after replay; want s49", got, err)
	}
}

// TestBatchCloneAndRelease: a clone shares no bytes with its batch, which
// may be reset and refilled, or released and handed out again by
// NewBatch, without changing the clone.
func TestBatchCloneAndRelease(t *testing.T) {
	b := NewBatch()
	for i := range 20 { // past linearScanMax: the clone is found by key too
		b.Put(fmt.Appendf(nil, "k%02d", i), fmt.Appendf(nil, "v%02d", i))
	}
	b.Delete([]byte("gone"))
	c := b.Clone()
	b.Reset()
	for i := range 20 {
		b.Put(fmt.Appendf(nil, "x%02d", i), []byte("overwritten"))
	}
	b.Release()
	d := NewBatch()
	if d.Len() != 0 || d.Size() != 0 {
		t.Fatalf("NewBatch after Release: %d rows, %d bytes; want empty", d.Len(), d.Size())
	}
	d.Put([]byte("k00"), []byte("reused storage"))
	if c.Len() != 21 {
		t.Fatalf("clone has %d rows; want 21", c.Len())
	}
	for i := range 20 {
		r := c.rows[i]
		if string(r.Key) != fmt.Sprintf("k%02d", i) || string(r.Value) != fmt.Sprintf("v%02d", i) {
			t.Fatalf("clone row %d = %q=%q; want k%02d=v%02d", i, r.Key, r.Value, i, i)
		}
		if j, ok := c.find(r.Key); !ok || j != i {
			t.Fatalf("clone finds %q at %d, %v; want %d", r.Key, j, ok, i)
		}
	}
	if r := c.rows[20]; string(r.Key) != "gone" || r.Kind != sst.KindDelete || r.Value != nil {
		t.Fatalf("clone's delete row = %+v", r)
	}
}
