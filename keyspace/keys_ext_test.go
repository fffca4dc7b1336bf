package keyspace

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/stratakv/strata/lsm"
)

// The expected values in these tests are redis-server 7.0.15's replies.

func TestCopyStrings(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	// Steps run in order on one store.
	steps := []struct {
		srcDB   int
		src     string
		dstDB   int
		dst     string
		replace bool
		want    bool
		err     error
	}{
		{0, "a", 0, "a", false, false, ErrSameObject}, // even when missing
		{0, "missing", 0, "b", false, false, nil},
		{0, "s1", 0, "s1", false, false, ErrSameObject},
		{0, "s1", 1, "s1", false, true, nil},
		{0, "s1", 1, "s1", false, false, nil},
		{0, "s1", 1, "s1", true, true, nil},
		{0, "s1", 0, "s2", false, false, nil},
		{0, "s1", 0, "s2", true, true, nil},
		{0, "s1", 16, "x", false, false, ErrInvalidDB},
		{-1, "s1", 0, "x", false, false, ErrInvalidDB},
	}
	strextSet(t, s, 0, "s1", "one")
	strextSet(t, s, 0, "s2", "two")
	for i, st := range steps {
		ok, err := s.Copy(ctx, st.srcDB, []byte(st.src), st.dstDB, []byte(st.dst), st.replace)
		if !errors.Is(err, st.err) || ok != st.want {
			t.Fatalf("step %d: COPY %+v = %v, %v", i, st, ok, err)
		}
	}
	for _, k := range []DBKey{{1, []byte("s1")}, {0, []byte("s2")}, {0, []byte("s1")}} {
		if v, _, _ := s.Get(ctx, k.DB, k.Key); string(v) != "one" {
			t.Fatalf("GET %s in db %d = %q, want one", k.Key, k.DB, v)
		}
	}
	if n, _ := s.Exists(ctx, 0, []byte("b")); n != 0 {
		t.Fatal("COPY of a missing key created the destination")
	}
}

// TestCopyCollections copies each collection type, with an expiry, over a
// string in another database, and checks the copy is independent.
func TestCopyCollections(t *testing.T) {
	ctx := context.Background()
	s, db := openTestStore(t)
	at := db.Now() + 100_000
	fill := map[Type]func(key []byte) error{
		TypeHash: func(k []byte) error {
			_, err := s.HSet(ctx, 0, k, strextPair("f1", "v1"), strextPair("f2", "v2"))
			return err
		},
		TypeList: func(k []byte) error { _, err := s.RPush(ctx, 0, k, []byte("1"), []byte("2"), []byte("3")); return err },
		TypeSet:  func(k []byte) error { _, err := s.SAdd(ctx, 0, k, []byte("m1"), []byte("m2")); return err },
		TypeZSet: func(k []byte) error {
			_, err := s.ZAdd(ctx, 0, k, ZAddOptions{}, ZMember{Member: []byte("a"), Score: 1}, ZMember{Member: []byte("b"), Score: 2})
			return err
		},
	}
	for typ, f := range fill {
		t.Run(typ.String(), func(t *testing.T) {
			src, dst := []byte("src-"+typ.String()), []byte("dst-"+typ.String())
			if err := f(src); err != nil {
				t.Fatal(err)
			}
			if ok, err := s.Expire(ctx, 0, src, at, ExpireCond{}); err != nil || !ok {
				t.Fatalf("expire = %v, %v", ok, err)
			}
			strextSet(t, s, 3, string(dst), "old")
			if ok, err := s.Copy(ctx, 0, src, 3, dst, false); err != nil || ok {
				t.Fatalf("COPY onto an existing key without REPLACE = %v, %v", ok, err)
			}
			if ok, err := s.Copy(ctx, 0, src, 3, dst, true); err != nil || !ok {
				t.Fatalf("COPY REPLACE = %v, %v", ok, err)
			}
			want := keyextDump(t, s, 0, src)
			if got := keyextDump(t, s, 3, dst); !slices.Equal(got, want) {
				t.Fatalf("copy holds %q, source %q", got, want)
			}
			if et, _ := s.ExpireTime(ctx, 3, dst); et != at {
				t.Fatalf("PEXPIRETIME of copy = %d, want %d", et, at)
			}
			keyextExpiryRow(t, s, db, 3, dst, at)
			keyextExpiryRow(t, s, db, 0, src, at)
			// The copy is a collection of its own.
			if _, err := s.Del(ctx, 0, src); err != nil {
				t.Fatal(err)
			}
			if got := keyextDump(t, s, 3, dst); !slices.Equal(got, want) {
				t.Fatalf("after DEL of the source the copy holds %q, want %q", got, want)
			}
			// A string copied over the collection replaces it, with its TTL.
			if _, _, _, err := s.Set(ctx, 0, []byte("str"), []byte("v"), SetOptions{ExpireAt: at + 1}); err != nil {
				t.Fatal(err)
			}
			if ok, err := s.Copy(ctx, 0, []byte("str"), 3, dst, true); err != nil || !ok {
				t.Fatalf("COPY string REPLACE = %v, %v", ok, err)
			}
			if typ, _ := s.TypeOf(ctx, 3, dst); typ != TypeString {
				t.Fatalf("TYPE after COPY string REPLACE = %s", typ)
			}
			keyextExpiryRow(t, s, db, 3, dst, at+1)
			if _, err := db.Get(ctx, appendExpiryKey(nil, s.gen(3), at, dst)); err == nil {
				t.Fatal("COPY REPLACE left the replaced key's expiry-index row")
			}
		})
	}
}

func TestMove(t *testing.T) {
	ctx := context.Background()
	s, db := openTestStore(t)
	strextSet(t, s, 0, "a", "1")
	strextSet(t, s, 1, "a", "other")
	steps := []struct {
		key          string
		srcDB, dstDB int
		want         bool
		err          error
	}{
		{"a", 0, 0, false, ErrSameObject},
		{"missing", 0, 0, false, ErrSameObject},
		{"missing", 0, 1, false, nil},
		{"a", 0, 1, false, nil}, // db 1 has a
		{"a", 0, 16, false, ErrInvalidDB},
	}
	for i, st := range steps {
		ok, err := s.Move(ctx, st.srcDB, []byte(st.key), st.dstDB)
		if !errors.Is(err, st.err) || ok != st.want {
			t.Fatalf("step %d: MOVE %+v = %v, %v", i, st, ok, err)
		}
	}
	if v, _, _ := s.Get(ctx, 0, []byte("a")); string(v) != "1" {
		t.Fatalf("failed MOVE changed a to %q", v)
	}

	// A hash with a TTL moves with its fields and TTL, and back again.
	at := db.Now() + 100_000
	h := []byte("h")
	if _, err := s.HSet(ctx, 0, h, strextPair("f", "v"), strextPair("g", "w")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Expire(ctx, 0, h, at, ExpireCond{}); err != nil {
		t.Fatal(err)
	}
	want := keyextDump(t, s, 0, h)
	if ok, err := s.Move(ctx, 0, h, 2); err != nil || !ok {
		t.Fatalf("MOVE h 2 = %v, %v", ok, err)
	}
	if n, _ := s.Exists(ctx, 0, h); n != 0 {
		t.Fatal("MOVE left the source")
	}
	if _, err := db.Get(ctx, appendExpiryKey(nil, s.gen(0), at, h)); err == nil {
		t.Fatal("MOVE left the source's expiry-index row")
	}
	if got := keyextDump(t, s, 2, h); !slices.Equal(got, want) {
		t.Fatalf("moved hash holds %q, want %q", got, want)
	}
	keyextExpiryRow(t, s, db, 2, h, at)
	// Change it in db 2, move it back: the stale rows of its first life in
	// db 0 must not come back.
	if _, err := s.HDel(ctx, 2, h, []byte("g")); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Move(ctx, 2, h, 0); err != nil || !ok {
		t.Fatalf("MOVE h 0 = %v, %v", ok, err)
	}
	if got := keyextDump(t, s, 0, h); !slices.Equal(got, []string{"f=v"}) {
		t.Fatalf("hash moved back holds %q, want [f=v]", got)
	}
	if n, _ := s.HLen(ctx, 0, h); n != 1 {
		t.Fatalf("HLEN after moving back = %d", n)
	}
}

func TestExpireTimeTouchKeys(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	strextSet(t, s, 0, "et", "v")
	if et, err := s.ExpireTime(ctx, 0, []byte("et")); err != nil || et != -1 {
		t.Fatalf("PEXPIRETIME et = %d, %v; want -1", et, err)
	}
	if et, err := s.ExpireTime(ctx, 0, []byte("missing")); err != nil || et != -2 {
		t.Fatalf("PEXPIRETIME missing = %d, %v; want -2", et, err)
	}
	if _, err := s.Expire(ctx, 0, []byte("et"), 1900000000123, ExpireCond{}); err != nil {
		t.Fatal(err)
	}
	if et, err := s.ExpireTime(ctx, 0, []byte("et")); err != nil || et != 1900000000123 {
		t.Fatalf("PEXPIRETIME et = %d, %v; want 1900000000123", et, err)
	}
	strextSet(t, s, 0, "a", "v")
	if n, err := s.Touch(ctx, 0, []byte("a"), []byte("et"), []byte("et"), []byte("missing")); err != nil || n != 3 {
		t.Fatalf("TOUCH a et et missing = %d, %v; want 3", n, err)
	}

	if err := s.FlushDB(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.MSet(ctx, 0, strextPair("", "e"), strextPair("one", "1"), strextPair("two", "2"),
		strextPair("three", "3"), strextPair("four", "4")); err != nil {
		t.Fatal(err)
	}
	strextSet(t, s, 1, "one", "elsewhere")
	tests := []struct {
		pattern string
		want    []string
	}{
		{"*", []string{"", "four", "one", "three", "two"}},
		{"**", []string{"four", "one", "three", "two"}},
		{"?*", []string{"four", "one", "three", "two"}},
		{"", []string{""}},
		{"*o*", []string{"four", "one", "two"}},
		{"t??", []string{"two"}},
		{"[ot]*", []string{"one", "three", "two"}},
		{"nomatch", []string{}},
		{`f\our`, []string{"four"}},
		{"th*", []string{"three"}},
		{"one", []string{"one"}},
		{"on", []string{}},
	}
	for _, tc := range tests {
		got, err := s.Keys(ctx, 0, tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got == nil {
			t.Errorf("KEYS %q = nil, want an empty list", tc.pattern)
		}
		var gotS []string
		for _, k := range got {
			gotS = append(gotS, string(k))
		}
		if !slices.Equal(gotS, tc.want) && !(len(gotS) == 0 && len(tc.want) == 0) {
			t.Errorf("KEYS %q = %q, want %q", tc.pattern, gotS, tc.want)
		}
	}
}

// TestCopyMoveInTxn: COPY and MOVE across databases inside a transaction
// see its earlier writes and commit with it.
func TestCopyMoveInTxn(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	tx := s.Begin([]DBKey{{0, []byte("l")}, {1, []byte("l")}, {2, []byte("l")}})
	ts := tx.Store()
	if _, err := ts.RPush(ctx, 0, []byte("l"), []byte("a"), []byte("b")); err != nil {
		t.Fatal(err)
	}
	if ok, err := ts.Copy(ctx, 0, []byte("l"), 1, []byte("l"), false); err != nil || !ok {
		t.Fatalf("COPY in txn = %v, %v", ok, err)
	}
	if ok, err := ts.Move(ctx, 0, []byte("l"), 2); err != nil || !ok {
		t.Fatalf("MOVE in txn = %v, %v", ok, err)
	}
	if n, _ := s.Exists(ctx, 1, []byte("l")); n != 0 {
		t.Fatal("a write inside the transaction is visible before Commit")
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for _, d := range []int{1, 2} {
		if got, _ := s.LRange(ctx, d, []byte("l"), 0, -1); len(got) != 2 || string(got[0]) != "a" || string(got[1]) != "b" {
			t.Fatalf("LRANGE l in db %d = %q", d, got)
		}
	}
	if n, _ := s.Exists(ctx, 0, []byte("l")); n != 0 {
		t.Fatal("MOVE in txn left the source")
	}
}

// keyextDump renders a key's value as sorted "element" strings, whatever its
// type, so two keys can be compared.
func keyextDump(t *testing.T, s *Store, db int, key []byte) []string {
	t.Helper()
	ctx := context.Background()
	typ, err := s.TypeOf(ctx, db, key)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	switch typ {
	case TypeString:
		v, _, err := s.Get(ctx, db, key)
		if err != nil {
			t.Fatal(err)
		}
		out = []string{string(v)}
	case TypeHash:
		all, err := s.HGetAll(ctx, db, key)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range all {
			out = append(out, string(p[0])+"="+string(p[1]))
		}
	case TypeList:
		all, err := s.LRange(ctx, db, key, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range all {
			out = append(out, string(v)) // order matters: not sorted below
		}
		if n, _ := s.LLen(ctx, db, key); n != int64(len(out)) {
			t.Fatalf("LLEN %d, LRANGE %d elements", n, len(out))
		}
		return out
	case TypeSet:
		all, err := s.SMembers(ctx, db, key)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range all {
			out = append(out, string(v))
		}
	case TypeZSet:
		all, err := s.ZRange(ctx, db, key, 0, -1, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range all {
			out = append(out, string(m.Member)+"@"+keyextScore(m.Score))
		}
		return out
	}
	slices.Sort(out)
	return out
}

func keyextScore(f float64) string { return string(appendScoreValue(nil, f)) }

// keyextExpiryRow asserts that key in database d has its expiry-index row
// at at, naming its current version.
func keyextExpiryRow(t *testing.T, s *Store, db *lsm.DB, d int, key []byte, at int64) {
	t.Helper()
	ctx := context.Background()
	m, ok, err := s.getMeta(ctx, s.gen(d), key)
	if err != nil || !ok {
		t.Fatalf("no metadata for %q in db %d: %v", key, d, err)
	}
	v, err := db.Get(ctx, appendExpiryKey(nil, s.gen(d), at, key))
	if err != nil {
		t.Fatalf("no expiry-index row for %q in db %d at %d: %v", key, d, at, err)
	}
	if !bytes.Equal(v, appendExpiryValue(nil, m.Version)) {
		t.Fatalf("expiry-index row of %q names version %x, metadata has %d", key, v, m.Version)
	}
}
