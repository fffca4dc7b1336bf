package keyspace

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm"
)

func openTestStore(t *testing.T) (*Store, *lsm.DB) {
	t.Helper()
	ctx := context.Background()
	db, err := lsm.Open(ctx, blob.NewMemBucket(), lsm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := Open(ctx, db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s, db
}

// TestRecreatedCollectionIsEmpty: a hash deleted, expired or overwritten
// and created again never shows the old fields.
func TestRecreatedCollectionIsEmpty(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	k := []byte("h")
	for i := range 100 {
		if _, err := s.HSet(ctx, 0, k, [2][]byte{fmt.Appendf(nil, "f%d", i), []byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string) {
		t.Helper()
		all, err := s.HGetAll(ctx, 0, k)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := s.HLen(ctx, 0, k)
		if len(all) != 1 || n != 1 || string(all[0][0]) != "new" {
			t.Fatalf("%s: re-created hash has %d fields (HLEN %d): %q", when, len(all), n, all)
		}
	}
	if n, err := s.Del(ctx, 0, k); err != nil || n != 1 {
		t.Fatalf("del = %d, %v", n, err)
	}
	if _, err := s.HSet(ctx, 0, k, [2][]byte{[]byte("new"), []byte("v")}); err != nil {
		t.Fatal(err)
	}
	check("after DEL")
	if _, _, _, err := s.Set(ctx, 0, k, []byte("str"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.HSet(ctx, 0, k, [2][]byte{[]byte("x"), []byte("v")}); !errors.Is(err, ErrWrongType) {
		t.Fatalf("HSET on a string: %v, want WRONGTYPE", err)
	}
	if _, err := s.Del(ctx, 0, k); err != nil {
		t.Fatal(err)
	}
	if _, err := s.HSet(ctx, 0, k, [2][]byte{[]byte("new"), []byte("v")}); err != nil {
		t.Fatal(err)
	}
	check("after SET and DEL")
}

func TestStringsAndKeys(t *testing.T) {
	ctx := context.Background()
	s, db := openTestStore(t)
	k := []byte("n")
	if v, err := s.IncrBy(ctx, 0, k, 5); err != nil || v != 5 {
		t.Fatalf("incrby = %d, %v", v, err)
	}
	if ok, err := s.Expire(ctx, 0, k, db.Now()+10_000, ExpireCond{}); err != nil || !ok {
		t.Fatalf("expire = %v, %v", ok, err)
	}
	if v, err := s.IncrBy(ctx, 0, k, -7); err != nil || v != -2 {
		t.Fatalf("incrby = %d, %v", v, err)
	}
	if ttl, err := s.PTTL(ctx, 0, k); err != nil || ttl <= 0 || ttl > 10_000 {
		t.Fatalf("INCR must keep the TTL: pttl = %d, %v", ttl, err)
	}
	if ok, err := s.Rename(ctx, 0, k, []byte("m"), false); err != nil || !ok {
		t.Fatalf("rename = %v, %v", ok, err)
	}
	if v, ok, err := s.Get(ctx, 0, []byte("m")); err != nil || !ok || string(v) != "-2" {
		t.Fatalf("get m = %q %v %v", v, ok, err)
	}
	if _, err := s.Rename(ctx, 0, k, []byte("x"), false); !errors.Is(err, ErrNoSuchKey) {
		t.Fatalf("rename missing: %v", err)
	}
	if ok, err := s.Expire(ctx, 0, []byte("m"), db.Now()-1, ExpireCond{}); err != nil || !ok {
		t.Fatalf("expire in the past = %v, %v", ok, err)
	}
	if n, err := s.Exists(ctx, 0, []byte("m")); err != nil || n != 0 {
		t.Fatalf("exists after expire in the past = %d, %v", n, err)
	}
	for i := range 25 {
		if _, err := s.SAdd(ctx, 0, fmt.Appendf(nil, "set%02d", i), []byte("a")); err != nil {
			t.Fatal(err)
		}
	}
	var cursor []byte
	var all [][]byte
	for {
		next, keys, err := s.Scan(ctx, 0, cursor, "set1*", 7, TypeSet)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, keys...)
		if next == nil {
			break
		}
		cursor = next
	}
	if len(all) != 10 {
		t.Fatalf("scan set1* found %d keys: %q", len(all), all)
	}
	if n, err := s.DBSize(ctx, 0); err != nil || n != 25 {
		t.Fatalf("dbsize = %d, %v", n, err)
	}
	if err := s.FlushDB(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DBSize(ctx, 0); err != nil || n != 0 {
		t.Fatalf("dbsize after flushdb = %d, %v", n, err)
	}
}
