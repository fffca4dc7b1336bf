package lsm

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stratakv/strata/blob"
)

// TestErrReportsFencing: Err is nil for the bucket's writer and becomes
// ErrFenced once a newer writer opens the bucket, without any write (the
// manifest poll notices), and ErrClosed after Close.
func TestErrReportsFencing(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	opts := Options{ManifestPollInterval: 10 * time.Millisecond}
	db1, err := Open(ctx, bkt, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db1.Abandon()
	if err := db1.Err(); err != nil {
		t.Fatalf("sole writer: %v", err)
	}
	db2, err := Open(ctx, bkt, opts)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !errors.Is(db1.Err(), ErrFenced) {
		if time.Now().After(deadline) {
			t.Fatalf("old writer's Err after a newer writer opened: %v", db1.Err())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := db2.Err(); err != nil {
		t.Fatalf("the newer writer: %v", err)
	}
	if err := db2.Close(); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(db2.Err(), ErrClosed) {
		t.Fatalf("after Close: %v", db2.Err())
	}
}
