package keyspace

import (
	"context"
	"fmt"
	"testing"
)

// TestStamp: a key's stamp moves with every write to it — a plain
// command, a transaction, an expiry removal, a flush — and not with reads,
// even reads that lock the key.
func TestStamp(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	k := []byte("k")
	st := s.Stamp(0, k)
	if _, err := s.MGet(ctx, 0, k); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Get(ctx, 0, k); err != nil {
		t.Fatal(err)
	}
	if !s.Unchanged(0, k, st) {
		t.Fatal("a read moved the stamp")
	}
	steps := []struct {
		name string
		do   func() error
	}{
		{"SET", func() error { _, _, _, err := s.Set(ctx, 0, k, []byte("v"), SetOptions{}); return err }},
		{"HSET of another type's key", func() error { _, err := s.HSet(ctx, 0, []byte("h"), [2][]byte{[]byte("f"), []byte("v")}); return err }},
		{"DEL", func() error { _, err := s.Del(ctx, 0, k); return err }},
		{"transaction", func() error {
			tx := s.Begin([]DBKey{{0, k}})
			if _, err := tx.Store().IncrBy(ctx, 0, k, 1); err != nil {
				return err
			}
			return tx.Commit(ctx)
		}},
		{"FLUSHDB of another database", func() error { return s.FlushDB(ctx, 5) }},
	}
	for _, step := range steps {
		key := k
		if step.name == "HSET of another type's key" {
			key = []byte("h")
		}
		st := s.Stamp(0, key)
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if s.Unchanged(0, key, st) {
			t.Errorf("%s left the stamp of %q unchanged", step.name, key)
		}
	}
	// An aborted transaction writes nothing and moves nothing.
	st = s.Stamp(0, k)
	tx := s.Begin([]DBKey{{0, k}})
	if _, err := tx.Store().IncrBy(ctx, 0, k, 1); err != nil {
		t.Fatal(err)
	}
	tx.Abort()
	if !s.Unchanged(0, k, st) {
		t.Error("an aborted transaction moved the stamp")
	}
}

// TestSharesStamp: SharesStamp says which writes move a key's stamp. A
// write to a key that shares the watched key's stripe (in this process's
// hashing) moves its stamp, and a write to one that does not leaves it.
func TestSharesStamp(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	k := []byte("k")
	if !s.SharesStamp(0, k, 0, k) {
		t.Fatal("a key does not share its own stamp")
	}
	var sharing, apart []byte
	for i := 0; i < 1_000_000 && (sharing == nil || apart == nil); i++ {
		o := fmt.Appendf(nil, "other%d", i)
		if s.SharesStamp(0, k, 0, o) {
			sharing = o
		} else if apart == nil {
			apart = o
		}
	}
	if sharing == nil || apart == nil {
		t.Fatalf("found sharing %q, apart %q", sharing, apart)
	}
	for _, c := range []struct {
		other []byte
		moves bool
	}{{sharing, true}, {apart, false}} {
		st := s.Stamp(0, k)
		if _, _, _, err := s.Set(ctx, 0, c.other, []byte("v"), SetOptions{}); err != nil {
			t.Fatal(err)
		}
		if moved := !s.Unchanged(0, k, st); moved != c.moves {
			t.Errorf("SET %q: stamp of %q moved = %v, SharesStamp said %v", c.other, k, moved, c.moves)
		}
	}
}
