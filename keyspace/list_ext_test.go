package keyspace

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/blob/blobtest"
	"github.com/stratakv/strata/lsm"
)

// The expected replies in this file are redis-server 7.0.15's, taken with
// redis-cli (TestListExtAgainstRedis also compares against a live server).

// listOf splits a space-separated list; "" is no list.
func listOf(s string) [][]byte {
	var out [][]byte
	for _, f := range strings.Fields(s) {
		out = append(out, []byte(f))
	}
	return out
}

// listRows returns the list at key as "a b c" ("" for none), after checking
// the invariants the commands must keep: one element row at each position
// head..tail-1 and none elsewhere in the version, count = rows.
func listRows(t *testing.T, s *Store, key string) string {
	t.Helper()
	ctx := context.Background()
	c, ok, err := s.openList(ctx, 0, []byte(key), false)
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	if !ok {
		return ""
	}
	var vals []string
	want := c.meta.Head
	err = c.scan(ctx, func(suffix, v []byte) error {
		if pos := binary.BigEndian.Uint64(suffix); pos != want {
			return fmt.Errorf("row at position %d, want %d (head %d tail %d)", pos, want, c.meta.Head, c.meta.Tail)
		}
		want++
		vals = append(vals, string(v))
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	if want != c.meta.Tail || int64(len(vals)) != c.meta.Count || c.meta.Count == 0 {
		t.Fatalf("%s: %d rows, count %d, head %d tail %d", key, len(vals), c.meta.Count, c.meta.Head, c.meta.Tail)
	}
	return strings.Join(vals, " ")
}

func mustRPush(t *testing.T, s *Store, key, vals string) {
	t.Helper()
	if _, err := s.RPush(context.Background(), 0, []byte(key), listOf(vals)...); err != nil {
		t.Fatal(err)
	}
}

func TestLTrim(t *testing.T) {
	for _, tc := range []struct {
		list        string
		start, stop int64
		want        string
	}{
		{"a b c d e", 1, -2, "b c d"},
		{"b c d", 5, 10, ""},
		{"a b c", -100, 100, "a b c"},
		{"a b c", 2, 1, ""},
		{"a b c", -1, -1, "c"},
		{"a b c", 0, -5, ""},
		{"a b c", -5, 0, "a"},
		{"a b c d e", 0, 0, "a"},
		{"a b c d e", math.MinInt64, math.MaxInt64, "a b c d e"},
		{"a b c d e", 1, math.MinInt64, ""},
	} {
		s, _ := openTestStore(t)
		mustRPush(t, s, "l", tc.list)
		if err := s.LTrim(context.Background(), 0, []byte("l"), tc.start, tc.stop); err != nil {
			t.Fatal(err)
		}
		if got := listRows(t, s, "l"); got != tc.want {
			t.Errorf("LTRIM [%s] %d %d = [%s], want [%s]", tc.list, tc.start, tc.stop, got, tc.want)
		}
	}
	s, _ := openTestStore(t)
	if err := s.LTrim(context.Background(), 0, []byte("missing"), 0, 1); err != nil {
		t.Fatalf("LTRIM missing: %v, want OK", err)
	}
}

func TestLRem(t *testing.T) {
	for _, tc := range []struct {
		list  string
		count int64
		val   string
		n     int64
		want  string
	}{
		{"a b a c a d a", 2, "a", 2, "b c a d a"},
		{"b c a d a", -1, "a", 1, "b c a d"},
		{"b c a d", 0, "a", 1, "b c d"},
		{"b c d", 0, "zz", 0, "b c d"},
		{"b", 0, "b", 1, ""},
		{"a a a", math.MinInt64, "a", 3, ""},
		{"a x b x c x d x e", 0, "x", 4, "a b c d e"},
		{"x x a b c d e f x", 3, "x", 3, "a b c d e f"},
		// Removals near either end and in the middle: the longest
		// untouched run stays, the rest moves.
		{"a b c d e f g h", 1, "g", 1, "a b c d e f h"},
		{"a b c d e f g h", 1, "b", 1, "a c d e f g h"},
		{"a x b c d e x f g h i x j", -2, "x", 2, "a x b c d e f g h i j"},
		{"x a b c d e f x g x h", 0, "x", 3, "a b c d e f g h"},
		{"a b x c", 5, "x", 1, "a b c"},
	} {
		s, _ := openTestStore(t)
		mustRPush(t, s, "l", tc.list)
		n, err := s.LRem(context.Background(), 0, []byte("l"), tc.count, []byte(tc.val))
		if err != nil {
			t.Fatal(err)
		}
		if got := listRows(t, s, "l"); n != tc.n || got != tc.want {
			t.Errorf("LREM [%s] %d %s = %d [%s], want %d [%s]", tc.list, tc.count, tc.val, n, got, tc.n, tc.want)
		}
	}
	s, _ := openTestStore(t)
	if n, err := s.LRem(context.Background(), 0, []byte("missing"), 1, []byte("a")); n != 0 || err != nil {
		t.Fatalf("LREM missing = %d, %v; want 0", n, err)
	}
}

func TestLInsert(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	mustRPush(t, s, "l", "a b c")
	mustRPush(t, s, "d", "a b a")
	mustRPush(t, s, "w", "a b c d e f g")
	for _, tc := range []struct {
		key         string
		before      bool
		pivot, val  string
		n           int64
		wantAfterwd string
	}{
		{"l", true, "a", "x", 4, "x a b c"},
		{"l", false, "c", "y", 5, "x a b c y"},
		{"l", true, "nope", "z", -1, "x a b c y"},
		{"missing", true, "a", "b", 0, ""},
		{"d", false, "a", "Q", 4, "a Q b a"},
		{"w", true, "e", "Z", 8, "a b c d Z e f g"},
		{"w", false, "b", "Y", 9, "a b Y c d Z e f g"},
		{"w", true, "a", "F", 10, "F a b Y c d Z e f g"},
		{"w", false, "g", "L", 11, "F a b Y c d Z e f g L"},
	} {
		n, err := s.LInsert(ctx, 0, []byte(tc.key), tc.before, []byte(tc.pivot), []byte(tc.val))
		if err != nil {
			t.Fatal(err)
		}
		if got := listRows(t, s, tc.key); n != tc.n || got != tc.wantAfterwd {
			t.Errorf("LINSERT %s %v %s %s = %d [%s], want %d [%s]", tc.key, tc.before, tc.pivot, tc.val, n, got, tc.n, tc.wantAfterwd)
		}
	}
}

func TestLPos(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	mustRPush(t, s, "l", "a b c 1 2 3 c c")
	mustRPush(t, s, "p", "a b c")
	for _, tc := range []struct {
		key, val            string
		rank, count, maxlen int64
		want                string
		err                 error
	}{
		{"l", "c", 1, 1, 0, "[2]", nil},
		{"l", "c", 2, 1, 0, "[6]", nil},
		{"l", "c", -1, 1, 0, "[7]", nil},
		{"l", "c", -2, 0, 0, "[6 2]", nil},
		{"l", "c", 1, 0, 0, "[2 6 7]", nil},
		{"l", "c", 2, 2, 0, "[6 7]", nil},
		{"l", "c", 1, 1, 2, "[]", nil},
		{"l", "c", 1, 0, 7, "[2 6]", nil},
		{"l", "c", -1, 0, 2, "[7 6]", nil},
		{"l", "c", -1, 1, 1, "[7]", nil},
		{"l", "zz", 1, 0, 0, "[]", nil},
		{"l", "c", 5, 0, 0, "[]", nil},
		{"l", "c", -3, 5, 0, "[2]", nil},
		{"l", "c", 1, 0, 100, "[2 6 7]", nil},
		{"l", "c", math.MaxInt64, 1, 0, "[]", nil},
		{"l", "c", -math.MaxInt64, 2, 0, "[]", nil},
		{"p", "a", 1, 0, 1, "[0]", nil},
		{"p", "c", 1, 1, 2, "[]", nil},
		{"p", "a", -1, 1, 2, "[]", nil},
		{"p", "c", 2, 0, 0, "[]", nil},
		{"missing", "c", 1, 1, 0, "[]", nil},
		{"l", "c", 0, 1, 0, "", ErrRankZero},
		{"missing", "c", 0, 1, 0, "", ErrRankZero},
		{"l", "c", math.MinInt64, 1, 0, "", ErrRankOutOfRange},
		{"l", "c", 1, -1, 0, "", ErrCountNegative},
		{"l", "c", 1, 0, -1, "", ErrMaxlenNegative},
	} {
		got, err := s.LPos(ctx, 0, []byte(tc.key), []byte(tc.val), tc.rank, tc.count, tc.maxlen)
		if tc.err != nil {
			if err != tc.err {
				t.Errorf("LPOS %s %s rank %d count %d maxlen %d: error %v, want %v", tc.key, tc.val, tc.rank, tc.count, tc.maxlen, err, tc.err)
			}
			continue
		}
		if err != nil || fmt.Sprint(append([]int64{}, got...)) != tc.want {
			t.Errorf("LPOS %s %s rank %d count %d maxlen %d = %v, %v; want %s", tc.key, tc.val, tc.rank, tc.count, tc.maxlen, got, err, tc.want)
		}
	}
	if ErrRankZero.Error() != "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list" {
		t.Fatalf("RANK 0 error text %q", ErrRankZero)
	}
}

// TestLPosLongFromTail walks a list longer than the growing windows of a
// walk from the tail.
func TestLPosLongFromTail(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	var vals [][]byte
	for i := range 5000 {
		vals = append(vals, []byte{byte('a' + i%7)})
	}
	if _, err := s.LPush(ctx, 0, []byte("l"), vals...); err != nil {
		t.Fatal(err)
	}
	// LPUSH reverses: index i holds vals[4999-i].
	var want []int64
	for i := int64(4999); i >= 0; i-- {
		if vals[4999-i][0] == 'c' {
			want = append(want, i)
		}
	}
	got, err := s.LPos(ctx, 0, []byte("l"), []byte("c"), -3, 0, 4000)
	if err != nil {
		t.Fatal(err)
	}
	var wantSeen []int64
	for _, i := range want[2:] {
		if i >= 1000 {
			wantSeen = append(wantSeen, i)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(wantSeen) {
		t.Fatalf("LPOS rank -3 maxlen 4000: %d indexes, want %d", len(got), len(wantSeen))
	}
}

func TestLMove(t *testing.T) {
	ctx := context.Background()
	s, db := openTestStore(t)
	if _, _, _, err := s.Set(ctx, 0, []byte("s"), []byte("x"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	mustRPush(t, s, "l", "a b c")
	mustRPush(t, s, "one", "x")
	const L, R = true, false
	for _, tc := range []struct {
		src, dst         string
		srcLeft, dstLeft bool
		want             string // "" = nil
		err              error
		src2, dst2       string // src and dst afterwards
	}{
		{"missing", "s", L, L, "", nil, "", "x"},
		{"l", "s", L, L, "", ErrWrongType, "a b c", "x"},
		{"s", "l", L, L, "", ErrWrongType, "x", "a b c"},
		{"l", "l", L, R, "a", nil, "b c a", "b c a"},
		{"l", "l", R, L, "a", nil, "a b c", "a b c"},
		{"l", "l", L, L, "a", nil, "a b c", "a b c"},
		{"l", "l", R, R, "c", nil, "a b c", "a b c"},
		{"l", "d", R, L, "c", nil, "a b", "c"},
		{"l", "d", L, R, "a", nil, "b", "c a"},
		{"l", "d", L, L, "b", nil, "", "b c a"},
		{"one", "one", L, R, "x", nil, "x", "x"},
		{"d", "d", R, L, "a", nil, "a b c", "a b c"}, // RPOPLPUSH d d
		{"missing", "missing", L, L, "", nil, "", ""},
	} {
		v, ok, err := s.LMove(ctx, 0, []byte(tc.src), []byte(tc.dst), tc.srcLeft, tc.dstLeft)
		name := fmt.Sprintf("LMOVE %s %s %v %v", tc.src, tc.dst, tc.srcLeft, tc.dstLeft)
		if !errors.Is(err, tc.err) || (tc.err == nil && (string(v) != tc.want || ok != (tc.want != ""))) {
			t.Fatalf("%s = %q %v %v, want %q %v", name, v, ok, err, tc.want, tc.err)
		}
		for _, kv := range [][2]string{{tc.src, tc.src2}, {tc.dst, tc.dst2}} {
			if kv[0] == "s" {
				continue
			}
			if got := listRows(t, s, kv[0]); got != kv[1] {
				t.Fatalf("%s: %s = [%s], want [%s]", name, kv[0], got, kv[1])
			}
		}
	}
	// The expiry stays with the list, a created destination has none.
	at := db.Now() + 100_000
	if ok, err := s.Expire(ctx, 0, []byte("d"), at, ExpireCond{}); err != nil || !ok {
		t.Fatalf("expire = %v, %v", ok, err)
	}
	if _, _, err := s.LMove(ctx, 0, []byte("d"), []byte("d"), L, R); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.LMove(ctx, 0, []byte("d"), []byte("e"), L, R); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]int64{"d": at, "e": 0} {
		c, _, err := s.openList(ctx, 0, []byte(key), false)
		if err != nil || c.meta.ExpireAt != want {
			t.Fatalf("%s expire_at %d, %v; want %d", key, c.meta.ExpireAt, err, want)
		}
	}
}

func TestListExtWrongType(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	k := []byte("s")
	if _, _, _, err := s.Set(ctx, 0, k, []byte("x"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	_, errRem := s.LRem(ctx, 0, k, 0, []byte("x"))
	_, errIns := s.LInsert(ctx, 0, k, true, []byte("a"), []byte("b"))
	_, errPos := s.LPos(ctx, 0, k, []byte("x"), 1, 1, 0)
	_, _, errMove := s.LMove(ctx, 0, k, []byte("l"), true, true)
	for i, err := range []error{s.LTrim(ctx, 0, k, 0, 1), errRem, errIns, errPos, errMove} {
		if err != ErrWrongType {
			t.Errorf("command %d on a string: %v, want WRONGTYPE", i, err)
		}
	}
	// Option errors come before the type check, as in Redis.
	if _, err := s.LPos(ctx, 0, k, []byte("x"), 0, 1, 0); err != ErrRankZero {
		t.Errorf("LPOS RANK 0 on a string: %v", err)
	}
	if _, err := s.LPos(ctx, 0, k, []byte("x"), 1, -1, 0); err != ErrCountNegative {
		t.Errorf("LPOS COUNT -1 on a string: %v", err)
	}
}

// TestListExtReopen: what the commands leave (moved positions, trimmed
// ends, a second list from LMOVE) reads back the same from a reopened
// engine, and the commands go on working on it.
func TestListExtReopen(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	open := func() (*lsm.DB, *Store) {
		db, err := lsm.Open(ctx, bkt, lsm.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := Open(ctx, db, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return db, s
	}
	db, s := open()
	mustRPush(t, s, "l", "a x b c d e x f g h i x j k")
	steps := []func() error{
		func() error { _, err := s.LRem(ctx, 0, []byte("l"), 0, []byte("x")); return err },
		func() error { return s.LTrim(ctx, 0, []byte("l"), 1, -2) },
		func() error { _, err := s.LInsert(ctx, 0, []byte("l"), false, []byte("c"), []byte("C")); return err },
		func() error { _, _, err := s.LMove(ctx, 0, []byte("l"), []byte("m"), true, true); return err },
		func() error { _, _, err := s.LMove(ctx, 0, []byte("l"), []byte("l"), false, true); return err },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	const wantL, wantM = "j c C d e f g h i", "b"
	for range 2 {
		if got := listRows(t, s, "l"); got != wantL {
			t.Fatalf("l = [%s], want [%s]", got, wantL)
		}
		if got := listRows(t, s, "m"); got != wantM {
			t.Fatalf("m = [%s], want [%s]", got, wantM)
		}
		if got, err := s.LPos(ctx, 0, []byte("l"), []byte("C"), -1, 1, 0); err != nil || fmt.Sprint(got) != "[2]" {
			t.Fatalf("LPOS C = %v, %v", got, err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		db, s = open()
	}
	defer db.Close()
	if n, err := s.LRem(ctx, 0, []byte("l"), -1, []byte("e")); err != nil || n != 1 {
		t.Fatalf("LREM after reopen = %d, %v", n, err)
	}
	if got := listRows(t, s, "l"); got != "j c C d f g h i" {
		t.Fatalf("l after reopen and LREM = [%s]", got)
	}
}

// TestListExtTxn: inside a transaction the commands see earlier ones, and
// LMOVE's two lists commit together.
func TestListExtTxn(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	tx := s.Begin([]DBKey{{0, []byte("a")}, {0, []byte("b")}})
	ts := tx.Store()
	if _, err := ts.RPush(ctx, 0, []byte("a"), listOf("1 2 3 2")...); err != nil {
		t.Fatal(err)
	}
	if n, err := ts.LRem(ctx, 0, []byte("a"), 1, []byte("2")); err != nil || n != 1 {
		t.Fatalf("LREM in txn = %d, %v", n, err)
	}
	if v, _, err := ts.LMove(ctx, 0, []byte("a"), []byte("b"), false, true); err != nil || string(v) != "2" {
		t.Fatalf("LMOVE in txn = %q, %v", v, err)
	}
	if got := listRows(t, s, "a"); got != "" {
		t.Fatalf("outside the txn before commit: a = [%s]", got)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if a, b := listRows(t, s, "a"), listRows(t, s, "b"); a != "1 3" || b != "2" {
		t.Fatalf("after commit a = [%s], b = [%s]", a, b)
	}
}

var listExtSeed = flag.Uint64("listext.seed", 0, "seed of TestListExtAgainstRedis (0: from time)")

// startListRedis starts a redis-server of its own on a free port, stopped
// when the test ends, and returns a client of it. Without redis-server the
// test skips (fails under CI=true).
func startListRedis(t *testing.T) *redis.Client {
	t.Helper()
	bin := blobtest.RequireCommand(t, "redis-server")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	rc := redis.NewClient(&redis.Options{
		Addr: "127.0.0.1:" + port, Protocol: 2, PoolSize: 1, DisableIdentity: true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	t.Cleanup(func() { rc.Close() })
	for deadline := time.Now().Add(10 * time.Second); rc.Ping(context.Background()).Err() != nil; {
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not answer PING within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return rc
}

// replyText renders a reply, from go-redis or from the Store, as one
// comparable string.
func replyText(v any, err error) string {
	switch {
	case errors.Is(err, redis.Nil):
		return "nil"
	case err != nil:
		return "err " + err.Error()
	}
	switch v := v.(type) {
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = replyText(e, nil)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case []int64:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = strconv.FormatInt(e, 10)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case []byte:
		return string(v)
	}
	return fmt.Sprint(v)
}

// TestListExtAgainstRedis runs random LTRIM, LREM, LINSERT, LPOS and LMOVE
// (with pushes, SET and DEL to vary the lists) on short lists of few
// distinct values, against the Store and a live redis-server, comparing
// every reply and every list after every command; the engine is reopened
// now and then.
func TestListExtAgainstRedis(t *testing.T) {
	rc := startListRedis(t)
	ctx := context.Background()
	seed := *listExtSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -listext.seed=%d)", seed, seed)
	rnd := rand.New(rand.NewPCG(seed, 7))
	bkt := blob.NewMemBucket()
	open := func() (*lsm.DB, *Store) {
		db, err := lsm.Open(ctx, bkt, lsm.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := Open(ctx, db, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return db, s
	}
	db, s := open()
	defer func() { db.Close() }()
	keys := []string{"a", "b", "s"}
	key := func() string { return keys[rnd.IntN(len(keys))] }
	val := func() string { return string(rune('x' + rnd.IntN(3))) }
	idx := func() int64 { return int64(rnd.IntN(15) - 7) }
	side := func(left bool) string { return map[bool]string{true: "LEFT", false: "RIGHT"}[left] }
	for i := range 3000 {
		if i%500 == 499 {
			db.Close()
			db, s = open()
		}
		var args []any
		var got string
		k := key()
		switch op := rnd.IntN(10); op {
		case 0, 1:
			vals := []string{val(), val(), val()}[:1+rnd.IntN(3)]
			args = []any{"RPUSH", k}
			for _, v := range vals {
				args = append(args, v)
			}
			got = replyText(s.RPush(ctx, 0, []byte(k), listOf(strings.Join(vals, " "))...))
		case 2:
			start, stop := idx(), idx()
			args = []any{"LTRIM", k, start, stop}
			got = replyText("OK", s.LTrim(ctx, 0, []byte(k), start, stop))
		case 3:
			count, v := int64(rnd.IntN(7)-3), val()
			args = []any{"LREM", k, count, v}
			got = replyText(s.LRem(ctx, 0, []byte(k), count, []byte(v)))
		case 4:
			before, pivot, v := rnd.IntN(2) == 0, val(), val()
			args = []any{"LINSERT", k, map[bool]string{true: "BEFORE", false: "AFTER"}[before], pivot, v}
			got = replyText(s.LInsert(ctx, 0, []byte(k), before, []byte(pivot), []byte(v)))
		case 5:
			v, rank, count, maxlen := val(), int64(rnd.IntN(7)-3), int64(rnd.IntN(4)), int64(rnd.IntN(6))
			args = []any{"LPOS", k, v, "RANK", rank, "MAXLEN", maxlen}
			if rnd.IntN(2) == 0 {
				args = append(args, "COUNT", count)
				got = replyText(s.LPos(ctx, 0, []byte(k), []byte(v), rank, count, maxlen))
			} else {
				pos, err := s.LPos(ctx, 0, []byte(k), []byte(v), rank, 1, maxlen)
				switch {
				case err == nil && len(pos) == 0:
					got = "nil"
				case err == nil:
					got = replyText(pos[0], nil)
				default:
					got = replyText(nil, err)
				}
			}
		case 6, 7:
			dst, l, r := key(), rnd.IntN(2) == 0, rnd.IntN(2) == 0
			args = []any{"LMOVE", k, dst, side(l), side(r)}
			v, ok, err := s.LMove(ctx, 0, []byte(k), []byte(dst), l, r)
			if got = replyText(v, err); err == nil && !ok {
				got = "nil"
			}
		case 8:
			args = []any{"SET", k, "str"}
			_, _, _, err := s.Set(ctx, 0, []byte(k), []byte("str"), SetOptions{})
			got = replyText("OK", err)
		case 9:
			args = []any{"DEL", k}
			got = replyText(s.Del(ctx, 0, []byte(k)))
		}
		want := replyText(rc.Do(ctx, args...).Result())
		if got != want {
			t.Fatalf("op %d %v: store %q, redis %q", i, args, got, want)
		}
		for _, k := range keys {
			if typ, err := s.TypeOf(ctx, 0, []byte(k)); err != nil || typ == TypeString {
				continue
			}
			want := replyText(rc.Do(ctx, "LRANGE", k, 0, -1).Result())
			if got := "[" + listRows(t, s, k) + "]"; got != want {
				t.Fatalf("op %d %v: %s = %s, redis %s", i, args, k, got, want)
			}
		}
	}
}
