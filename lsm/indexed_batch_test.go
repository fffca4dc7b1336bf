package lsm

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stratakv/strata/blob"
)

// TestIndexedBatch checks that reads through an IndexedBatch see its own
// changes over the DB (puts, overwrites, deletes, expiry), that nothing is
// visible to the DB before Commit, and that Commit applies all of it.
func TestIndexedBatch(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, blob.NewMemBucket(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var base Batch
	for i := range 10 {
		base.Put(fmt.Appendf(nil, "k%d", i), []byte("db"))
	}
	if _, err := db.Write(ctx, &base); err != nil {
		t.Fatal(err)
	}
	ib := db.NewIndexedBatch()
	ib.Put([]byte("k1"), []byte("first"))
	ib.Put([]byte("k1"), []byte("batch")) // later change wins
	ib.Delete([]byte("k2"))
	ib.Put([]byte("k5a"), []byte("new"))
	ib.PutWithExpiry([]byte("k3"), []byte("gone"), 1) // expired long ago
	var more Batch
	more.Put([]byte("k4"), []byte("applied"))
	ib.Apply(&more)

	want := map[string]string{"k0": "db", "k1": "batch", "k4": "applied", "k5": "db", "k5a": "new",
		"k6": "db", "k7": "db", "k8": "db", "k9": "db"}
	for _, k := range []string{"k0", "k1", "k2", "k3", "k4", "k5a"} {
		v, err := ib.Get(ctx, []byte(k))
		if w, ok := want[k]; ok {
			if err != nil || string(v) != w {
				t.Errorf("batch Get(%s) = %q, %v; want %q", k, v, err, w)
			}
		} else if !errors.Is(err, ErrNotFound) {
			t.Errorf("batch Get(%s) = %q, %v; want not found", k, v, err)
		}
	}
	scan := func(it *Iterator) map[string]string {
		t.Helper()
		got := map[string]string{}
		for ok := it.First(); ok; ok = it.Next() {
			got[string(it.Key())] = string(it.Value())
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := scan(ib.NewIter(ctx, IterOptions{Prefix: []byte("k")})); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("batch scan = %v, want %v", got, want)
	}
	// Nothing is visible to the DB before Commit.
	if v, err := db.Get(ctx, []byte("k1")); err != nil || string(v) != "db" {
		t.Errorf("db Get(k1) before commit = %q, %v", v, err)
	}
	h, err := ib.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Durable(ctx); err != nil {
		t.Fatal(err)
	}
	if got := scan(db.NewIter(ctx, IterOptions{Prefix: []byte("k")})); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("db scan after commit = %v, want %v", got, want)
	}
	if _, err := ib.Commit(ctx); !errors.Is(err, ErrBatchCommitted) {
		t.Errorf("second Commit: %v, want ErrBatchCommitted", err)
	}
}
