package keyspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"
)

// The expected values in these tests are redis-server 7.0.15's replies.

func TestGetRange(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	strextSet(t, s, 0, "mykey", "Hello World")
	strextSet(t, s, 0, "empty", "")
	if _, err := s.RPush(ctx, 0, []byte("list"), []byte("a")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		key        string
		start, end int64
		want       string
		err        error
	}{
		{"mykey", 0, 3, "Hell", nil},
		{"mykey", -3, -1, "rld", nil},
		{"mykey", 0, -1, "Hello World", nil},
		{"mykey", 10, 100, "d", nil},
		{"mykey", 5, 3, "", nil},
		{"mykey", -1, -5, "", nil},
		{"mykey", -100, -100, "H", nil},
		{"mykey", -100, 2, "Hel", nil},
		{"mykey", 11, 11, "", nil},
		{"mykey", 10, 10, "d", nil},
		{"mykey", -5, -1, "World", nil},
		{"mykey", 0, 0, "H", nil},
		{"mykey", -1, 0, "", nil},
		{"mykey", 3, -100, "", nil},
		{"mykey", -20, -15, "H", nil},
		{"mykey", -12, -11, "H", nil},
		{"mykey", 4, -7, "o", nil},
		{"mykey", 100, 200, "", nil},
		{"mykey", -1, -1, "d", nil},
		{"mykey", -20, -30, "", nil},
		{"mykey", -30, -20, "H", nil},
		{"mykey", -11, -12, "", nil},
		{"mykey", math.MaxInt64, math.MaxInt64, "", nil},
		{"mykey", math.MinInt64, math.MaxInt64, "Hello World", nil},
		{"missing", 0, -1, "", nil},
		{"empty", 0, -1, "", nil},
		{"empty", -1, 0, "", nil},
		{"list", 0, 1, "", ErrWrongType},
	}
	for _, tc := range tests {
		got, err := s.GetRange(ctx, 0, []byte(tc.key), tc.start, tc.end)
		if !errors.Is(err, tc.err) || string(got) != tc.want {
			t.Errorf("GETRANGE %s %d %d = %q, %v; want %q, %v", tc.key, tc.start, tc.end, got, err, tc.want, tc.err)
		}
		if err == nil && got == nil {
			t.Errorf("GETRANGE %s %d %d = nil, want an empty (non-nil) string", tc.key, tc.start, tc.end)
		}
	}
}

func TestSetRange(t *testing.T) {
	ctx := context.Background()
	s, db := openTestStore(t)
	if _, err := s.RPush(ctx, 0, []byte("list"), []byte("a")); err != nil {
		t.Fatal(err)
	}
	// Steps run in order on one store; want is the reply, then the value.
	steps := []struct {
		key    string
		offset int64
		val    string
		want   int64
		value  string // "-" = key must not exist
		err    error
	}{
		{"k1", 5, "abc", 8, "\x00\x00\x00\x00\x00abc", nil},
		{"k1", 0, "XY", 8, "XY\x00\x00\x00abc", nil},
		{"k1", 10, "Z", 11, "XY\x00\x00\x00abc\x00\x00Z", nil},
		{"k2", 3, "", 0, "-", nil},
		{"k2", 600000000, "", 0, "-", nil},
		{"k1", 600000000, "", 11, "XY\x00\x00\x00abc\x00\x00Z", nil},
		{"k1", 536870911, "ab", 0, "XY\x00\x00\x00abc\x00\x00Z", ErrStringTooLong},
		{"k3", 536870912, "a", 0, "-", ErrStringTooLong},
		{"k3", math.MaxInt64, "a", 0, "-", ErrStringTooLong},
		{"k1", -1, "a", 0, "XY\x00\x00\x00abc\x00\x00Z", ErrOffsetOutOfRange},
		{"list", 0, "", 0, "-", ErrWrongType},
		{"list", 0, "x", 0, "-", ErrWrongType},
		{"k4", 0, "abc", 3, "abc", nil},
	}
	for i, st := range steps {
		got, err := s.SetRange(ctx, 0, []byte(st.key), st.offset, []byte(st.val))
		if !errors.Is(err, st.err) || got != st.want {
			t.Fatalf("step %d: SETRANGE %s %d %q = %d, %v; want %d, %v", i, st.key, st.offset, st.val, got, err, st.want, st.err)
		}
		if st.key == "list" {
			continue
		}
		v, ok, err := s.Get(ctx, 0, []byte(st.key))
		if err != nil || ok != (st.value != "-") || (ok && string(v) != st.value) {
			t.Fatalf("step %d: GET %s = %q, %v, %v; want %q", i, st.key, v, ok, err, st.value)
		}
	}

	// SETRANGE keeps the TTL.
	at := db.Now() + 100_000
	if _, _, _, err := s.Set(ctx, 0, []byte("t"), []byte("hello"), SetOptions{ExpireAt: at}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.SetRange(ctx, 0, []byte("t"), 0, []byte("J")); err != nil || n != 5 {
		t.Fatalf("SETRANGE t 0 J = %d, %v", n, err)
	}
	if v, _, _ := s.Get(ctx, 0, []byte("t")); string(v) != "Jello" {
		t.Fatalf("GET t = %q, want Jello", v)
	}
	if et, err := s.ExpireTime(ctx, 0, []byte("t")); err != nil || et != at {
		t.Fatalf("PEXPIRETIME t after SETRANGE = %d, %v; want %d", et, err, at)
	}
}

func TestMGetMSet(t *testing.T) {
	ctx := context.Background()
	s, db := openTestStore(t)
	strextSet(t, s, 0, "a", "1")
	strextSet(t, s, 0, "e", "")
	if _, err := s.RPush(ctx, 0, []byte("l"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	got, err := s.MGet(ctx, 0, []byte("a"), []byte("l"), []byte("e"), []byte("missing"), []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]byte{[]byte("1"), nil, {}, nil, []byte("1")}
	if !strextEqual(got, want) {
		t.Fatalf("MGET = %q, want %q", got, want)
	}

	// A key given twice: the last value wins.
	if err := s.MSet(ctx, 0, strextPair("a", "1"), strextPair("b", "2"), strextPair("a", "3")); err != nil {
		t.Fatal(err)
	}
	got, _ = s.MGet(ctx, 0, []byte("a"), []byte("b"))
	if !strextEqual(got, [][]byte{[]byte("3"), []byte("2")}) {
		t.Fatalf("MGET a b after MSET a 1 b 2 a 3 = %q", got)
	}

	// MSET clears a TTL and overwrites any type. It writes blind, so the
	// old expiry-index row stays until it comes due; then the expirer
	// drops the row and leaves the key alone.
	at := db.Now() + 200
	if _, _, _, err := s.Set(ctx, 0, []byte("c"), []byte("v"), SetOptions{ExpireAt: at}); err != nil {
		t.Fatal(err)
	}
	if err := s.MSet(ctx, 0, strextPair("c", "w"), strextPair("l", "str")); err != nil {
		t.Fatal(err)
	}
	if et, _ := s.ExpireTime(ctx, 0, []byte("c")); et != -1 {
		t.Fatalf("PEXPIRETIME c after MSET = %d, want -1", et)
	}
	for db.Now() <= at {
		time.Sleep(10 * time.Millisecond)
	}
	expired := s.Expired()
	if _, err := s.ExpireDue(ctx, 100); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := s.Get(ctx, 0, []byte("c")); !ok || string(v) != "w" || s.Expired() != expired {
		t.Fatalf("after the old TTL came due: GET c = %q, %v; expired %d -> %d", v, ok, expired, s.Expired())
	}
	if _, err := db.Get(ctx, appendExpiryKey(nil, s.gen(0), at, []byte("c"))); err == nil {
		t.Fatal("the expirer left the stale expiry-index row of c")
	}
	if typ, _ := s.TypeOf(ctx, 0, []byte("l")); typ != TypeString {
		t.Fatalf("TYPE l after MSET = %s, want string", typ)
	}
	if v, _, _ := s.Get(ctx, 0, []byte("l")); string(v) != "str" {
		t.Fatalf("GET l = %q", v)
	}
}

func TestMSetNX(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	if _, err := s.RPush(ctx, 0, []byte("l"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		pairs [][2][]byte
		want  bool
	}{
		{[][2][]byte{strextPair("x", "1"), strextPair("x", "2")}, true},
		{[][2][]byte{strextPair("x", "5"), strextPair("y", "6")}, false},
		{[][2][]byte{strextPair("p", "1"), strextPair("q", "2")}, true},
		{[][2][]byte{strextPair("l2", "1"), strextPair("l", "9")}, false},
	}
	for i, st := range steps {
		if ok, err := s.MSetNX(ctx, 0, st.pairs...); err != nil || ok != st.want {
			t.Fatalf("step %d: MSETNX = %v, %v; want %v", i, ok, err, st.want)
		}
	}
	got, _ := s.MGet(ctx, 0, []byte("x"), []byte("y"), []byte("p"), []byte("q"), []byte("l2"))
	want := [][]byte{[]byte("2"), nil, []byte("1"), []byte("2"), nil}
	if !strextEqual(got, want) {
		t.Fatalf("MGET after MSETNX = %q, want %q", got, want)
	}
	if typ, _ := s.TypeOf(ctx, 0, []byte("l")); typ != TypeList {
		t.Fatalf("failed MSETNX changed l to %s", typ)
	}
}

// TestMSetAtomic: MGET sees all of an MSET or none of it.
func TestMSetAtomic(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	const nKeys, rounds = 16, 300
	var keys [][]byte
	msetAll := func(v string) error {
		pairs := make([][2][]byte, nKeys)
		for i := range pairs {
			pairs[i] = strextPair(fmt.Sprint("k", i), v)
		}
		return s.MSet(ctx, 0, pairs...)
	}
	for i := range nKeys {
		keys = append(keys, fmt.Append(nil, "k", i))
	}
	if err := msetAll("0"); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; i <= rounds; i++ {
			if err := msetAll(fmt.Sprint(i)); err != nil {
				t.Error(err)
				break
			}
		}
		close(done)
	}()
	defer wg.Wait()
	for {
		select {
		case <-done:
			return
		default:
		}
		got, err := s.MGet(ctx, 0, keys...)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range got[1:] {
			if !bytes.Equal(v, got[0]) {
				t.Fatalf("MGET saw half an MSET: %q", got)
			}
		}
	}
}

func TestGetDel(t *testing.T) {
	ctx := context.Background()
	s, db := openTestStore(t)
	at := db.Now() + 100_000
	if _, _, _, err := s.Set(ctx, 0, []byte("a"), []byte("hello"), SetOptions{ExpireAt: at}); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := s.GetDel(ctx, 0, []byte("a")); err != nil || !ok || string(v) != "hello" {
		t.Fatalf("GETDEL a = %q, %v, %v", v, ok, err)
	}
	if n, _ := s.Exists(ctx, 0, []byte("a")); n != 0 {
		t.Fatal("GETDEL left the key")
	}
	if _, err := db.Get(ctx, appendExpiryKey(nil, s.gen(0), at, []byte("a"))); err == nil {
		t.Fatal("GETDEL left the expiry-index row")
	}
	if v, ok, err := s.GetDel(ctx, 0, []byte("a")); err != nil || ok || v != nil {
		t.Fatalf("GETDEL missing = %q, %v, %v", v, ok, err)
	}
	if _, err := s.RPush(ctx, 0, []byte("l"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.GetDel(ctx, 0, []byte("l")); !errors.Is(err, ErrWrongType) {
		t.Fatalf("GETDEL list: %v, want WRONGTYPE", err)
	}
	if n, _ := s.Exists(ctx, 0, []byte("l")); n != 1 {
		t.Fatal("GETDEL on a list deleted it")
	}
}

func TestGetEx(t *testing.T) {
	ctx := context.Background()
	s, db := openTestStore(t)
	strextSet(t, s, 0, "g", "v")
	if _, err := s.RPush(ctx, 0, []byte("l"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	at := db.Now() + 50_000
	steps := []struct {
		key      string
		o        GetExOptions
		want     string // "-" = nil reply
		err      error
		expireAt int64 // PEXPIRETIME afterwards
	}{
		{"g", GetExOptions{}, "v", nil, -1},
		{"g", GetExOptions{ExpireAt: at}, "v", nil, at},
		{"g", GetExOptions{}, "v", nil, at},
		{"g", GetExOptions{Persist: true}, "v", nil, -1},
		{"g", GetExOptions{Persist: true}, "v", nil, -1},
		{"g", GetExOptions{ExpireAt: 1}, "v", nil, -2}, // EXAT 1: in the past, deletes
		{"g", GetExOptions{}, "-", nil, -2},
		{"missing", GetExOptions{ExpireAt: at}, "-", nil, -2},
		{"l", GetExOptions{}, "-", ErrWrongType, -1},
		{"l", GetExOptions{ExpireAt: at}, "-", ErrWrongType, -1},
		{"l", GetExOptions{ExpireAt: -1}, "-", ErrInvalidExpireGetEx, -1},
	}
	for i, st := range steps {
		v, ok, err := s.GetEx(ctx, 0, []byte(st.key), st.o)
		if !errors.Is(err, st.err) || ok != (st.want != "-") || (ok && string(v) != st.want) {
			t.Fatalf("step %d: GETEX %s %+v = %q, %v, %v; want %q, %v", i, st.key, st.o, v, ok, err, st.want, st.err)
		}
		if et, err := s.ExpireTime(ctx, 0, []byte(st.key)); err != nil || et != st.expireAt {
			t.Fatalf("step %d: PEXPIRETIME %s = %d, %v; want %d", i, st.key, et, err, st.expireAt)
		}
	}
	// The expiry-index row follows: the one GETEX wrote went with PERSIST.
	if _, err := db.Get(ctx, appendExpiryKey(nil, s.gen(0), at, []byte("g"))); err == nil {
		t.Fatal("GETEX PERSIST left the expiry-index row")
	}
	strextSet(t, s, 0, "h", "v")
	if _, _, err := s.GetEx(ctx, 0, []byte("h"), GetExOptions{ExpireAt: at}); err != nil {
		t.Fatal(err)
	}
	if v, err := db.Get(ctx, appendExpiryKey(nil, s.gen(0), at, []byte("h"))); err != nil || !bytes.Equal(v, appendExpiryValue(nil, 0)) {
		t.Fatalf("GETEX PXAT wrote no expiry-index row: %x, %v", v, err)
	}
}

func strextSet(t *testing.T, s *Store, db int, key, val string) {
	t.Helper()
	if _, _, _, err := s.Set(context.Background(), db, []byte(key), []byte(val), SetOptions{}); err != nil {
		t.Fatal(err)
	}
}

func strextPair(k, v string) [2][]byte { return [2][]byte{[]byte(k), []byte(v)} }

// strextEqual compares replies telling nil (no value) from empty.
func strextEqual(got, want [][]byte) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if (got[i] == nil) != (want[i] == nil) || !bytes.Equal(got[i], want[i]) {
			return false
		}
	}
	return true
}

// TestGetView: GetView hands GET's value over without a copy and agrees
// with Get everywhere: a string (long ones too), an empty string, a
// missing key, an expired key, another type (WRONGTYPE), a bad db, and
// inside a transaction, where it sees the transaction's own writes.
func TestGetView(t *testing.T) {
	ctx := context.Background()
	s, db := openTestStore(t)
	long := bytes.Repeat([]byte("v"), 100_000)
	if _, _, _, err := s.Set(ctx, 0, []byte("long"), long, SetOptions{}); err != nil {
		t.Fatal(err)
	}
	strextSet(t, s, 0, "empty", "")
	if _, _, _, err := s.Set(ctx, 0, []byte("gone"), []byte("x"), SetOptions{ExpireAt: db.Now() - 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.HSet(ctx, 0, []byte("h"), [2][]byte{[]byte("f"), []byte("v")}); err != nil {
		t.Fatal(err)
	}
	check := func(st *Store, dbi int, key string) {
		t.Helper()
		want, wantOK, wantErr := st.Get(ctx, dbi, []byte(key))
		var got []byte
		calls := 0
		ok, err := st.GetView(ctx, dbi, []byte(key), func(v []byte) { got = append(got, v...); calls++ })
		if ok != wantOK || !errors.Is(err, wantErr) && err != wantErr || !bytes.Equal(got, want) || calls != map[bool]int{true: 1}[ok] {
			t.Fatalf("%q: GetView %d bytes, %v, %v (%d calls); Get %d bytes, %v, %v", key, len(got), ok, err, calls, len(want), wantOK, wantErr)
		}
	}
	for _, k := range []string{"long", "empty", "missing", "gone"} {
		check(s, 0, k)
	}
	if _, err := s.GetView(ctx, 0, []byte("h"), func([]byte) { t.Fatal("called for a hash") }); !errors.Is(err, ErrWrongType) {
		t.Fatalf("hash: %v", err)
	}
	if _, err := s.GetView(ctx, NumDBs, []byte("long"), func([]byte) {}); !errors.Is(err, ErrInvalidDB) {
		t.Fatalf("db %d: %v", NumDBs, err)
	}
	tx := s.Begin([]DBKey{{0, []byte("long")}, {0, []byte("new")}})
	defer tx.Abort()
	ts := tx.Store()
	if _, _, _, err := ts.Set(ctx, 0, []byte("new"), []byte("in tx"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	var got string
	if ok, err := ts.GetView(ctx, 0, []byte("new"), func(v []byte) { got = string(v) }); !ok || err != nil || got != "in tx" {
		t.Fatalf("in a transaction: %q, %v, %v", got, ok, err)
	}
	check(ts, 0, "long")
}
