package keyspace

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
)

// setFixture makes s1 = {a b c d}, s2 = {c d e}, s3 = {d x} and the string
// str.
func setFixture(t *testing.T) (*Store, context.Context) {
	t.Helper()
	ctx := context.Background()
	s, _ := openTestStore(t)
	for k, members := range map[string][]string{"s1": {"a", "b", "c", "d"}, "s2": {"c", "d", "e"}, "s3": {"d", "x"}} {
		if _, err := s.SAdd(ctx, 0, []byte(k), bs(members...)...); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, _, err := s.Set(ctx, 0, []byte("str"), []byte("v"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	return s, ctx
}

// members returns SMEMBERS key, failing the test on error, and checks that
// SCARD agrees with it.
func members(t *testing.T, s *Store, ctx context.Context, key string) string {
	t.Helper()
	m, err := s.SMembers(ctx, 0, []byte(key))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.SCard(ctx, 0, []byte(key)); err != nil || n != int64(len(m)) {
		t.Fatalf("SCARD %s = %d, %v, but %d members", key, n, err, len(m))
	}
	return show(m)
}

// Replies checked against redis-server 7.0.
func TestSMIsMember(t *testing.T) {
	s, ctx := setFixture(t)
	for _, tc := range []struct {
		key     string
		members []string
		want    []bool
		err     error
	}{
		{"s1", []string{"a", "z", "b", "a"}, []bool{true, false, true, true}, nil},
		{"nokey", []string{"a"}, []bool{false}, nil},
		{"str", []string{"a"}, nil, ErrWrongType},
	} {
		got, err := s.SMIsMember(ctx, 0, []byte(tc.key), bs(tc.members...)...)
		wantErr(t, "SMISMEMBER "+tc.key, err, tc.err)
		if err == nil && !slices.Equal(got, tc.want) {
			t.Fatalf("SMISMEMBER %s %q = %v, want %v", tc.key, tc.members, got, tc.want)
		}
	}
}

func TestSPopSRandMemberReplies(t *testing.T) {
	s, ctx := setFixture(t)
	for _, tc := range []struct {
		cmd   string
		key   string
		count int64
		want  string // show() of the reply; "nil" for a nil slice
		err   error
	}{
		{"SPOP", "nokey", 1, "nil", nil},
		{"SPOP", "nokey", 0, "nil", nil},
		{"SPOP", "str", 0, "", ErrWrongType},
		{"SPOP", "str", 1, "", ErrWrongType},
		{"SPOP", "str", -1, "", errSPopNegative}, // the count is parsed first
		{"SPOP", "nokey", -1, "", errSPopNegative},
		{"SPOP", "s1", 0, "[]", nil},
		{"SRANDMEMBER", "nokey", 1, "nil", nil},
		{"SRANDMEMBER", "nokey", -3, "nil", nil},
		{"SRANDMEMBER", "str", 0, "", ErrWrongType},
		{"SRANDMEMBER", "str", -3, "", ErrWrongType},
		{"SRANDMEMBER", "s1", 0, "[]", nil},
		{"SRANDMEMBER", "s1", 4, show(bs("a", "b", "c", "d")), nil},
		{"SRANDMEMBER", "s1", math.MaxInt64, show(bs("a", "b", "c", "d")), nil},
		{"SRANDMEMBER", "s1", math.MinInt64, "", errHashSetRandRange},
	} {
		what := fmt.Sprintf("%s %s %d", tc.cmd, tc.key, tc.count)
		fn := s.SRandMember
		if tc.cmd == "SPOP" {
			fn = s.SPop
		}
		got, err := fn(ctx, 0, []byte(tc.key), tc.count)
		wantErr(t, what, err, tc.err)
		if err != nil {
			continue
		}
		if r := show(got); (got == nil && tc.want != "nil") || (got != nil && r != tc.want) {
			t.Fatalf("%s = %s (nil: %v), want %s", what, r, got == nil, tc.want)
		}
	}
	if m := members(t, s, ctx, "s1"); m != show(bs("a", "b", "c", "d")) {
		t.Fatalf("s1 changed to %s", m)
	}
	if errSPopNegative.Error() != "ERR value is out of range, must be positive" {
		t.Fatalf("SPOP error text %q", errSPopNegative)
	}
}

// TestSPopRandom: SPOP removes exactly what it returns, distinct members of
// the set, and popping the rest deletes the key.
func TestSPopRandom(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	k := []byte("s")
	left := map[string]bool{}
	for i := range 20 {
		m := fmt.Sprintf("m%02d", i)
		left[m] = true
		if _, err := s.SAdd(ctx, 0, k, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	for _, count := range []int64{1, 6, 0, 5, 100} {
		got, err := s.SPop(ctx, 0, k, count)
		if err != nil {
			t.Fatal(err)
		}
		if want := min(count, int64(len(left))); int64(len(got)) != want {
			t.Fatalf("SPOP %d with %d left: %d members, want %d", count, len(left), len(got), want)
		}
		for _, m := range got {
			if !left[string(m)] {
				t.Fatalf("SPOP %d returned %q: not in the set, or returned twice", count, m)
			}
			delete(left, string(m))
		}
		var want []string
		for m := range left {
			want = append(want, m)
		}
		slices.Sort(want)
		if got := members(t, s, ctx, "s"); got != show(bs(want...)) {
			t.Fatalf("after SPOP %d: members %s, want %s", count, got, show(bs(want...)))
		}
	}
	if typ, err := s.TypeOf(ctx, 0, k); err != nil || typ != TypeNone {
		t.Fatalf("emptied set still exists: %v %v", typ, err)
	}
}

// TestSRandMemberRandom: picks are members, distinct for a positive count,
// exactly |count| for a negative one, and spread over the set.
func TestSRandMemberRandom(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	k := []byte("s")
	const n = 30
	for i := range n {
		if _, err := s.SAdd(ctx, 0, k, fmt.Appendf(nil, "m%02d", i)); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for _, count := range []int64{1, 3, n - 1, -1, -5, -4 * n} {
		for range 100 {
			got, err := s.SRandMember(ctx, 0, k, count)
			if err != nil {
				t.Fatal(err)
			}
			if want := max(count, -count); int64(len(got)) != want {
				t.Fatalf("SRANDMEMBER %d: %d members, want %d", count, len(got), want)
			}
			picked := map[string]bool{}
			for _, m := range got {
				if ok, err := s.SIsMember(ctx, 0, k, m); err != nil || !ok {
					t.Fatalf("SRANDMEMBER %d returned %q, not a member", count, m)
				}
				if count > 0 && picked[string(m)] {
					t.Fatalf("SRANDMEMBER %d returned %q twice", count, m)
				}
				picked[string(m)] = true
				seen[string(m)] = true
			}
		}
	}
	if len(seen) != n {
		t.Fatalf("only %d of %d members ever picked", len(seen), n)
	}
	if c, _ := s.SCard(ctx, 0, k); c != n {
		t.Fatalf("SRANDMEMBER changed the set: SCARD %d", c)
	}
}

// TestSMove follows one redis-server 7.0 session step by step.
func TestSMove(t *testing.T) {
	s, ctx := setFixture(t)
	for _, tc := range []struct {
		src, dst, member string
		want             bool
		err              error
	}{
		{"s1", "str", "zz", false, ErrWrongType}, // dst wrong type, member missing
		{"s1", "str", "a", false, ErrWrongType},
		{"nokey", "str", "a", false, nil}, // a missing src wins
		{"str", "s1", "a", false, ErrWrongType},
		{"str", "str", "a", false, ErrWrongType},
		{"s1", "s1", "a", true, nil},
		{"s1", "s1", "zz", false, nil},
		{"s1", "s2", "c", true, nil}, // already in dst
		{"s1", "s2", "zz", false, nil},
		{"s1", "s4", "a", true, nil}, // creates dst
		{"nokey", "s4", "a", false, nil},
		{"s4", "s1", "a", true, nil}, // empties src
	} {
		what := fmt.Sprintf("SMOVE %s %s %s", tc.src, tc.dst, tc.member)
		got, err := s.SMove(ctx, 0, []byte(tc.src), []byte(tc.dst), []byte(tc.member))
		wantErr(t, what, err, tc.err)
		if got != tc.want {
			t.Fatalf("%s = %v, want %v", what, got, tc.want)
		}
	}
	for key, want := range map[string]string{"s1": show(bs("a", "b", "d")), "s2": show(bs("c", "d", "e")), "s4": "[]"} {
		if got := members(t, s, ctx, key); got != want {
			t.Fatalf("%s = %s, want %s", key, got, want)
		}
	}
	if typ, _ := s.TypeOf(ctx, 0, []byte("s4")); typ != TypeNone {
		t.Fatalf("emptied src s4 still exists as %v", typ)
	}
}

// TestSMoveTTL: dst keeps its TTL; a src emptied by SMOVE is deleted
// with its expiry.
func TestSMoveTTL(t *testing.T) {
	s, ctx := setFixture(t)
	db := s.db
	if _, err := s.SAdd(ctx, 0, []byte("src"), bs("a", "b")...); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"src", "s1"} {
		if _, err := s.Expire(ctx, 0, []byte(k), db.Now()+50_000, ExpireCond{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []string{"b", "a"} {
		if ok, err := s.SMove(ctx, 0, []byte("src"), []byte("s1"), []byte(m)); err != nil || !ok {
			t.Fatalf("SMOVE src s1 %s = %v, %v", m, ok, err)
		}
	}
	if ttl, _ := s.PTTL(ctx, 0, []byte("s1")); ttl <= 0 {
		t.Fatalf("dst lost its TTL: %d", ttl)
	}
	if ttl, _ := s.PTTL(ctx, 0, []byte("src")); ttl != -2 {
		t.Fatalf("emptied src: PTTL %d, want -2", ttl)
	}
	if _, err := s.SMove(ctx, 0, []byte("s1"), []byte("new"), []byte("a")); err != nil {
		t.Fatal(err)
	}
	if ttl, _ := s.PTTL(ctx, 0, []byte("new")); ttl != -1 {
		t.Fatalf("created dst: PTTL %d, want -1", ttl)
	}
}

// TestSetAlgebra: SINTER, SUNION, SDIFF and SINTERCARD replies, in member
// order (Redis's order is its hash order; RESP clients treat them as sets).
func TestSetAlgebra(t *testing.T) {
	s, ctx := setFixture(t)
	for _, tc := range []struct {
		cmd  string
		keys []string
		want string
		err  error
	}{
		{"SINTER", []string{"s1", "s2", "s3"}, show(bs("d")), nil},
		{"SINTER", []string{"s1", "s2"}, show(bs("c", "d")), nil},
		{"SINTER", []string{"s1"}, show(bs("a", "b", "c", "d")), nil},
		{"SINTER", []string{"s1", "s1"}, show(bs("a", "b", "c", "d")), nil},
		{"SINTER", []string{"nokey"}, "[]", nil},
		{"SINTER", []string{"s1", "nokey"}, "[]", nil},
		{"SINTER", []string{"s1", "nokey", "str"}, "", ErrWrongType}, // no short-circuit before type checks
		{"SINTER", []string{"nokey", "str"}, "", ErrWrongType},
		{"SINTER", []string{"str", "nokey"}, "", ErrWrongType},
		{"SINTER", []string{"s1", "str"}, "", ErrWrongType},
		{"SUNION", []string{"s1", "s2", "nokey"}, show(bs("a", "b", "c", "d", "e")), nil},
		{"SUNION", []string{"s3", "s2"}, show(bs("c", "d", "e", "x")), nil},
		{"SUNION", []string{"nokey"}, "[]", nil},
		{"SUNION", []string{"nokey", "str"}, "", ErrWrongType},
		{"SDIFF", []string{"s1", "s2"}, show(bs("a", "b")), nil},
		{"SDIFF", []string{"s1", "s2", "s3"}, show(bs("a", "b")), nil},
		{"SDIFF", []string{"s1", "nokey"}, show(bs("a", "b", "c", "d")), nil},
		{"SDIFF", []string{"s1", "s1"}, "[]", nil},
		{"SDIFF", []string{"nokey", "s1"}, "[]", nil},
		{"SDIFF", []string{"nokey", "str"}, "", ErrWrongType},
		{"SDIFF", []string{"str", "nokey"}, "", ErrWrongType},
		{"SDIFF", []string{"s1", "nokey", "str"}, "", ErrWrongType},
	} {
		fn := map[string]func(context.Context, int, ...[]byte) ([][]byte, error){
			"SINTER": s.SInter, "SUNION": s.SUnion, "SDIFF": s.SDiff,
		}[tc.cmd]
		what := fmt.Sprintf("%s %v", tc.cmd, tc.keys)
		got, err := fn(ctx, 0, bs(tc.keys...)...)
		wantErr(t, what, err, tc.err)
		if err == nil && show(got) != tc.want {
			t.Fatalf("%s = %s, want %s", what, show(got), tc.want)
		}
	}
	for _, tc := range []struct {
		limit int64
		keys  []string
		want  int64
		err   error
	}{
		{0, []string{"s1", "s2"}, 2, nil},
		{1, []string{"s1", "s2"}, 1, nil},
		{5, []string{"s1", "s2"}, 2, nil},
		{0, []string{"s1"}, 4, nil},
		{1, []string{"s1", "nokey"}, 0, nil},
		{0, []string{"nokey", "str"}, 0, ErrWrongType},
		{0, []string{"s1", "str"}, 0, ErrWrongType},
		{1, []string{"str", "s1"}, 0, ErrWrongType},
		{-1, []string{"s1", "s2"}, 0, errSInterCardLimit},
	} {
		what := fmt.Sprintf("SINTERCARD %v LIMIT %d", tc.keys, tc.limit)
		got, err := s.SInterCard(ctx, 0, tc.limit, bs(tc.keys...)...)
		wantErr(t, what, err, tc.err)
		if got != tc.want {
			t.Fatalf("%s = %d, want %d", what, got, tc.want)
		}
	}
	if errSInterCardLimit.Error() != "ERR LIMIT can't be negative" {
		t.Fatalf("LIMIT error text %q", errSInterCardLimit)
	}
}

// TestSetAlgebraStore follows a redis-server 7.0 session: dst is replaced
// (TTL and all), deleted when the result is empty, may be a source, and is
// left alone on WRONGTYPE.
func TestSetAlgebraStore(t *testing.T) {
	s, ctx := setFixture(t)
	db := s.db
	str := func(key string) string {
		v, ok, err := s.Get(ctx, 0, []byte(key))
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return "<none>"
		}
		return string(v)
	}
	for i, tc := range []struct {
		cmd      string
		dst      string
		keys     []string
		want     int64
		err      error
		check    string // the key to read after: a set, or "str:" + a string key
		contents string
	}{
		{"SINTERSTORE", "d", []string{"s1", "s2"}, 2, nil, "d", show(bs("c", "d"))},
		{"SINTERSTORE", "d", []string{"nokey", "s1"}, 0, nil, "d", "[]"},
		{"SINTERSTORE", "dstr", []string{"s1", "str"}, 0, ErrWrongType, "str:dstr", "v"},
		{"SINTERSTORE", "dstr", []string{"nokey", "str"}, 0, ErrWrongType, "str:dstr", "v"},
		{"SINTERSTORE", "dstr", []string{"s1", "s2"}, 2, nil, "dstr", show(bs("c", "d"))},
		{"SINTERSTORE", "str", []string{"nokey"}, 0, nil, "str:str", "<none>"},
		{"SUNIONSTORE", "s1", []string{"s1", "s2"}, 5, nil, "s1", show(bs("a", "b", "c", "d", "e"))},
		{"SDIFFSTORE", "s1", []string{"s1", "s2"}, 2, nil, "s1", show(bs("a", "b"))},
		{"SDIFFSTORE", "s1", []string{"s1", "s1"}, 0, nil, "s1", "[]"},
		{"SUNIONSTORE", "u", []string{"s2", "nokey", "s3"}, 4, nil, "u", show(bs("c", "d", "e", "x"))},
		{"SDIFFSTORE", "u", []string{"u", "s3"}, 2, nil, "u", show(bs("c", "e"))},
		{"SUNIONSTORE", "u", []string{"u", "nokey2"}, 2, nil, "u", show(bs("c", "e"))},
	} {
		if i == 0 {
			if _, _, _, err := s.Set(ctx, 0, []byte("dstr"), []byte("v"), SetOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		fn := map[string]func(context.Context, int, []byte, ...[]byte) (int64, error){
			"SINTERSTORE": s.SInterStore, "SUNIONSTORE": s.SUnionStore, "SDIFFSTORE": s.SDiffStore,
		}[tc.cmd]
		what := fmt.Sprintf("%s %s %v", tc.cmd, tc.dst, tc.keys)
		got, err := fn(ctx, 0, []byte(tc.dst), bs(tc.keys...)...)
		wantErr(t, what, err, tc.err)
		if got != tc.want {
			t.Fatalf("%s = %d, want %d", what, got, tc.want)
		}
		var contents string
		if len(tc.check) > 4 && tc.check[:4] == "str:" {
			contents = str(tc.check[4:])
		} else {
			contents = members(t, s, ctx, tc.check)
		}
		if contents != tc.contents {
			t.Fatalf("after %s: %s = %s, want %s", what, tc.check, contents, tc.contents)
		}
	}
	// The stored set is a new key: no TTL, even when dst was a source.
	if _, err := s.Expire(ctx, 0, []byte("u"), db.Now()+50_000, ExpireCond{}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.SUnionStore(ctx, 0, []byte("u"), []byte("u")); err != nil || n != 2 {
		t.Fatalf("SUNIONSTORE u u = %d, %v", n, err)
	}
	if ttl, _ := s.PTTL(ctx, 0, []byte("u")); ttl != -1 {
		t.Fatalf("SUNIONSTORE kept dst's TTL: PTTL %d", ttl)
	}
}

// TestSetCommandsInTxn: the two-key writes work inside a transaction and
// see its earlier changes.
func TestSetCommandsInTxn(t *testing.T) {
	s, ctx := setFixture(t)
	tx := s.Begin([]DBKey{{0, []byte("s1")}, {0, []byte("t")}, {0, []byte("s2")}})
	ts := tx.Store()
	if ok, err := ts.SMove(ctx, 0, []byte("s1"), []byte("t"), []byte("a")); err != nil || !ok {
		t.Fatalf("SMOVE in txn = %v, %v", ok, err)
	}
	if n, err := ts.SUnionStore(ctx, 0, []byte("t"), []byte("t"), []byte("s2")); err != nil || n != 4 {
		t.Fatalf("SUNIONSTORE in txn = %d, %v", n, err)
	}
	if got := members(t, s, ctx, "t"); got != "[]" {
		t.Fatalf("txn's changes seen before commit: t = %s", got)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := members(t, s, ctx, "t"); got != show(bs("a", "c", "d", "e")) {
		t.Fatalf("after commit t = %s", got)
	}
	if got := members(t, s, ctx, "s1"); got != show(bs("b", "c", "d")) {
		t.Fatalf("after commit s1 = %s", got)
	}
}
