package lsm

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stratakv/strata/blob"
)

// TestBatchReusedAfterWrite: Write stamps the batch's own rows with their
// seq and the WAL keeps copies of them, so a batch reset and refilled after
// Write returns changes nothing already written. The rows are read back
// from the WAL alone: the engine is abandoned, as a crash would leave it,
// before any memtable flush, and reopened.
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
