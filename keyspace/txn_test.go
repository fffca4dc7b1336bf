package keyspace

import (
	"context"
	"testing"
)

// TestTxn: commands inside a transaction see each other's changes, other
// readers see none of them until Commit, and Commit applies all of them,
// including a FLUSHDB in the middle. Abort leaves nothing behind.
func TestTxn(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	if _, _, _, err := s.Set(ctx, 1, []byte("old"), []byte("v"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	tx := s.Begin([]DBKey{{0, []byte("n")}, {0, []byte("h")}, {1, []byte("old")}, {1, []byte("after")}})
	ts := tx.Store()
	for want := int64(1); want <= 2; want++ {
		if got, err := ts.IncrBy(ctx, 0, []byte("n"), 1); err != nil || got != want {
			t.Fatalf("INCR in txn = %d, %v; want %d", got, err, want)
		}
	}
	if _, err := ts.HSet(ctx, 0, []byte("h"), [2][]byte{[]byte("f"), []byte("1")}, [2][]byte{[]byte("g"), []byte("2")}); err != nil {
		t.Fatal(err)
	}
	if n, err := ts.HLen(ctx, 0, []byte("h")); err != nil || n != 2 {
		t.Fatalf("HLEN in txn = %d, %v", n, err)
	}
	if err := ts.FlushDB(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := ts.Get(ctx, 1, []byte("old")); ok {
		t.Fatal("key survives FLUSHDB inside the txn")
	}
	if _, _, _, err := ts.Set(ctx, 1, []byte("after"), []byte("x"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	// Outside: nothing yet.
	if _, ok, _ := s.Get(ctx, 0, []byte("n")); ok {
		t.Fatal("txn write visible before commit")
	}
	if _, ok, _ := s.Get(ctx, 1, []byte("old")); !ok {
		t.Fatal("txn FLUSHDB visible before commit")
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := s.Get(ctx, 0, []byte("n")); string(v) != "2" {
		t.Fatalf("n after commit = %q", v)
	}
	if n, _ := s.HLen(ctx, 0, []byte("h")); n != 2 {
		t.Fatalf("HLEN after commit = %d", n)
	}
	if _, ok, _ := s.Get(ctx, 1, []byte("old")); ok {
		t.Fatal("FLUSHDB not applied by commit")
	}
	if v, _, _ := s.Get(ctx, 1, []byte("after")); string(v) != "x" {
		t.Fatalf("key set after FLUSHDB in txn = %q", v)
	}

	tx = s.Begin([]DBKey{{0, []byte("n")}})
	if _, err := tx.Store().IncrBy(ctx, 0, []byte("n"), 5); err != nil {
		t.Fatal(err)
	}
	tx.Abort()
	if v, _, _ := s.Get(ctx, 0, []byte("n")); string(v) != "2" {
		t.Fatalf("n after abort = %q", v)
	}
	// The locks were released: a plain command on the same key proceeds.
	if got, err := s.IncrBy(ctx, 0, []byte("n"), 1); err != nil || got != 3 {
		t.Fatalf("INCR after abort = %d, %v", got, err)
	}
}
