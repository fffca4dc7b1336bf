package lsm

import (
	"context"
	"errors"
	"testing"

	"github.com/stratakv/strata/blob"
)

// TestViewRecent: ViewRecent reads what View reads, and calls a value
// recent exactly while its newest row is in the mutable memtable.
func TestViewRecent(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, blob.NewMemBucket(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	put := func(k, v string, expireAt int64) {
		t.Helper()
		var b Batch
		b.PutWithExpiry([]byte(k), []byte(v), expireAt)
		if _, err := db.Write(ctx, &b); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when, k, want string, wantRecent bool) {
		t.Helper()
		var got string
		var recent bool
		err := db.ViewRecent(ctx, []byte(k), func(v []byte, r bool) error {
			got, recent = string(v), r
			return nil
		})
		switch {
		case want == "" && !errors.Is(err, ErrNotFound):
			t.Fatalf("%s: ViewRecent(%s) = %q, %v; want ErrNotFound", when, k, got, err)
		case want == "":
		case err != nil || got != want || recent != wantRecent:
			t.Fatalf("%s: ViewRecent(%s) = %q, recent %v, %v; want %q, recent %v", when, k, got, recent, err, want, wantRecent)
		}
	}
	put("a", "1", 0)
	put("gone", "x", db.Now()-1)
	check("written", "a", "1", true)
	check("expired", "gone", "", false)
	check("absent", "b", "", false)
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	check("flushed", "a", "1", false)
	put("b", "2", 0)
	check("another key written", "a", "1", false)
	put("a", "3", 0)
	check("rewritten", "a", "3", true)
	var del Batch
	del.Delete([]byte("a"))
	if _, err := db.Write(ctx, &del); err != nil {
		t.Fatal(err)
	}
	check("deleted", "a", "", false)
}
