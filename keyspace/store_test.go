package keyspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
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

// TestWarmMembersRows: the rows WarmMembers warms are the very rows the
// member commands read (a wrong key would warm nothing and cost a lookup):
// the field of a hash, the member of a set, the member row of a sorted set,
// in the collection's current version and database, present or not; keys
// holding no hash, set or sorted set are skipped, and what does not fit
// the budget is left out.
func TestWarmMembersRows(t *testing.T) {
	ctx := context.Background()
	s, db := openTestStore(t)
	b := func(v string) []byte { return []byte(v) }
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.HSet(ctx, 0, b("h"), [2][]byte{b("f"), b("hv")}))
	must(s.SAdd(ctx, 0, b("s"), b("m")))
	must(s.ZAdd(ctx, 0, b("z"), ZAddOptions{}, ZMember{Score: 2.5, Member: b("zm")}))
	must(s.RPush(ctx, 0, b("l"), b("x")))
	_, _, _, err := s.Set(ctx, 0, b("str"), b("v"), SetOptions{})
	must(nil, err)
	must(s.HSet(ctx, 3, b("h"), [2][]byte{b("f"), b("db3")}))

	keys := [][]byte{b("h"), b("h"), b("str"), b("s"), b("l"), b("absent"), b("z"), b("z")}
	members := [][]byte{b("f"), b("nofield"), b("f"), b("m"), b("x"), b("f"), b("zm"), b("nomember")}
	want := func(db int, key []byte, typ Type, suffix []byte) []byte {
		t.Helper()
		c, ok, err := s.openCollection(ctx, db, key, typ, false)
		if err != nil || !ok {
			t.Fatalf("open %s: %v %v", key, ok, err)
		}
		return c.elem(suffix)
	}
	wantRows := [][]byte{
		want(0, b("h"), TypeHash, b("f")), want(0, b("h"), TypeHash, b("nofield")),
		want(0, b("s"), TypeSet, b("m")),
		want(0, b("z"), TypeZSet, memberSuffix(b("zm"))), want(0, b("z"), TypeZSet, memberSuffix(b("nomember"))),
	}
	rows := s.memberRows(0, keys, members, make([]byte, 0, warmBytes), make([][]byte, 0, WarmKeys))
	if len(rows) != len(wantRows) {
		t.Fatalf("%d rows, want %d: %q", len(rows), len(wantRows), rows)
	}
	for i := range rows {
		if !bytes.Equal(rows[i], wantRows[i]) {
			t.Errorf("row %d = %q, want %q", i, rows[i], wantRows[i])
		}
	}
	// The rows of present members hold what the commands read.
	for i, v := range map[int]string{0: "hv", 2: ""} {
		if got, err := db.Get(ctx, rows[i]); err != nil || string(got) != v {
			t.Errorf("row %d holds %q, %v; want %q", i, got, err, v)
		}
	}
	if _, err := db.Get(ctx, rows[1]); !errors.Is(err, lsm.ErrNotFound) {
		t.Errorf("absent field's row: %v", err)
	}
	// Another database has its own rows.
	if rows := s.memberRows(3, keys[:1], members[:1], make([]byte, 0, warmBytes), make([][]byte, 0, WarmKeys)); len(rows) != 1 || !bytes.Equal(rows[0], want(3, b("h"), TypeHash, b("f"))) {
		t.Errorf("db 3 rows %q", rows)
	}
	// The budgets: no more rows than the slice holds, none past the bytes.
	many := slices.Repeat([][]byte{b("h")}, 3*WarmKeys)
	manyMembers := slices.Repeat([][]byte{b("f")}, 3*WarmKeys)
	if rows := s.memberRows(0, many, manyMembers, make([]byte, 0, warmBytes), make([][]byte, 0, WarmKeys)); len(rows) != WarmKeys {
		t.Errorf("%d rows for %d commands, want at most %d", len(rows), len(many), WarmKeys)
	}
	long := [][]byte{bytes.Repeat(b("f"), warmBytes), b("f")}
	if rows := s.memberRows(0, many[:2], long, make([]byte, 0, warmBytes), make([][]byte, 0, WarmKeys)); len(rows) != 0 {
		t.Errorf("a member over the budget warmed %d rows (stops at it)", len(rows))
	}
	// A hint reads no SST and counts no read: a collection whose metadata
	// left the memtable taking writes is skipped.
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	gets := db.Metrics().Gets
	if rows := s.memberRows(0, keys, members, make([]byte, 0, warmBytes), make([][]byte, 0, WarmKeys)); len(rows) != 0 {
		t.Errorf("after a flush, %d rows warmed from flushed metadata", len(rows))
	}
	if n := db.Metrics().Gets - gets; n != 0 {
		t.Errorf("memberRows made %d engine reads", n)
	}
	must(s.HSet(ctx, 0, b("h"), [2][]byte{b("g"), b("new")}))
	if rows := s.memberRows(0, keys[:1], members[:1], make([]byte, 0, warmBytes), make([][]byte, 0, WarmKeys)); len(rows) != 1 || !bytes.Equal(rows[0], want(0, b("h"), TypeHash, b("f"))) {
		t.Errorf("a hash written again after the flush: rows %q", rows)
	}
	s.WarmMembers(0, keys, members) // and the real thing changes nothing
	if v, ok, err := s.HGet(ctx, 0, b("h"), b("f")); err != nil || !ok || string(v) != "hv" {
		t.Errorf("HGET after warming = %q, %v, %v", v, ok, err)
	}
}

// TestCollectionPrefixLengths: a collection's element prefix is kept in
// the collection when it fits and on the heap when it does not (see
// collection.prefix). Keys on both sides of that limit, in pairs that
// differ only past it, each keep their own elements through every type's
// writes and reads, in rows under the prefix the format defines (which
// the compaction filter and DEL rely on).
func TestCollectionPrefixLengths(t *testing.T) {
	ctx := context.Background()
	s, db := openTestStore(t)
	limit := len(collection{}.pbuf) - elementPrefixLen(nil) // longest key whose prefix fits
	for _, n := range []int{limit - 1, limit, limit + 1, 200} {
		for _, last := range []byte{'a', 'b'} {
			key := append(bytes.Repeat([]byte("k"), n-1), last)
			own := []byte(fmt.Sprintf("%d%c", n, last))
			if _, err := s.HSet(ctx, 0, key, [2][]byte{own, own}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.LPush(ctx, 0, append([]byte("l"), key...), own); err != nil {
				t.Fatal(err)
			}
			if _, err := s.SAdd(ctx, 0, append([]byte("s"), key...), own); err != nil {
				t.Fatal(err)
			}
			if _, err := s.ZAdd(ctx, 0, append([]byte("z"), key...), ZAddOptions{}, ZMember{Score: 1, Member: own}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, n := range []int{limit - 1, limit, limit + 1, 200} {
		for _, last := range []byte{'a', 'b'} {
			key := append(bytes.Repeat([]byte("k"), n-1), last)
			own := fmt.Sprintf("%d%c", n, last)
			h, err := s.HGetAll(ctx, 0, key)
			if err != nil || len(h) != 1 || string(h[0][0]) != own {
				t.Errorf("key of %d bytes: HGETALL = %q, %v; want only %s", n, h, err, own)
			}
			m, ok, err := s.getMeta(ctx, s.gen(0), key)
			if err != nil || !ok {
				t.Fatalf("key of %d bytes: metadata %v %v", n, ok, err)
			}
			want := append(elementPrefix(kindHash, s.gen(0), key, m.Version), own...)
			if v, err := db.Get(ctx, want); err != nil || string(v) != own {
				t.Errorf("key of %d bytes: the field's row at its format's key: %q, %v", n, v, err)
			}
			if v, ok, err := s.HGet(ctx, 0, key, []byte(own)); err != nil || !ok || string(v) != own {
				t.Errorf("key of %d bytes: HGET = %q %v %v", n, v, ok, err)
			}
			l, err := s.LRange(ctx, 0, append([]byte("l"), key...), 0, -1)
			if err != nil || len(l) != 1 || string(l[0]) != own {
				t.Errorf("key of %d bytes: LRANGE = %q, %v; want only %s", n, l, err, own)
			}
			sm, err := s.SMembers(ctx, 0, append([]byte("s"), key...))
			if err != nil || len(sm) != 1 || string(sm[0]) != own {
				t.Errorf("key of %d bytes: SMEMBERS = %q, %v; want only %s", n, sm, err, own)
			}
			z, err := s.ZRange(ctx, 0, append([]byte("z"), key...), 0, -1, false)
			if err != nil || len(z) != 1 || string(z[0].Member) != own {
				t.Errorf("key of %d bytes: ZRANGE = %v, %v; want only %s", n, z, err, own)
			}
		}
	}
}
