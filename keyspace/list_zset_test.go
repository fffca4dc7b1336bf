package keyspace

import (
	"context"
	"fmt"
	"math"
	"testing"
)

func TestListDeque(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	k := []byte("l")
	if n, err := s.LPush(ctx, 0, k, []byte("a"), []byte("b"), []byte("c")); err != nil || n != 3 {
		t.Fatalf("lpush = %d, %v", n, err)
	}
	if n, err := s.RPush(ctx, 0, k, []byte("d")); err != nil || n != 4 {
		t.Fatalf("rpush = %d, %v", n, err)
	}
	got, err := s.LRange(ctx, 0, k, 0, -1)
	if err != nil || fmt.Sprintf("%s", got) != "[c b a d]" {
		t.Fatalf("lrange = %s, %v", got, err)
	}
	if v, ok, err := s.LIndex(ctx, 0, k, -1); err != nil || !ok || string(v) != "d" {
		t.Fatalf("lindex -1 = %q %v %v", v, ok, err)
	}
	if err := s.LSet(ctx, 0, k, 1, []byte("B")); err != nil {
		t.Fatal(err)
	}
	if err := s.LSet(ctx, 0, k, 9, []byte("x")); err != ErrIndexOutOfRange {
		t.Fatalf("lset out of range: %v", err)
	}
	popped, err := s.LPop(ctx, 0, k, 2)
	if err != nil || fmt.Sprintf("%s", popped) != "[c B]" {
		t.Fatalf("lpop 2 = %s, %v", popped, err)
	}
	popped, err = s.RPop(ctx, 0, k, 5)
	if err != nil || fmt.Sprintf("%s", popped) != "[d a]" {
		t.Fatalf("rpop 5 = %s, %v", popped, err)
	}
	if typ, err := s.TypeOf(ctx, 0, k); err != nil || typ != TypeNone {
		t.Fatalf("emptied list still exists: %v %v", typ, err)
	}
}

func TestZSetOrder(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	k := []byte("z")
	pairs := []ZMember{
		{math.Inf(1), []byte("inf")}, {-1.5, []byte("neg")}, {0, []byte("zero")},
		{math.Copysign(0, -1), []byte("negzero")}, {2, []byte("b")}, {2, []byte("a")}, {math.Inf(-1), []byte("-inf")},
	}
	if n, err := s.ZAdd(ctx, 0, k, ZAddOptions{}, pairs...); err != nil || n != 7 {
		t.Fatalf("zadd = %d, %v", n, err)
	}
	got, err := s.ZRange(ctx, 0, k, 0, -1, false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range got {
		names = append(names, string(m.Member))
	}
	if fmt.Sprint(names) != "[-inf neg negzero zero a b inf]" {
		t.Fatalf("zrange order %v", names)
	}
	if n, err := s.ZAdd(ctx, 0, k, ZAddOptions{GT: true, CH: true}, ZMember{1, []byte("a")}, ZMember{3, []byte("b")}); err != nil || n != 1 {
		t.Fatalf("zadd gt ch = %d, %v", n, err)
	}
	if r, ok, err := s.ZRank(ctx, 0, k, []byte("b"), true); err != nil || !ok || r != 1 {
		t.Fatalf("zrevrank b = %d %v %v", r, ok, err)
	}
	in, err := s.ZRangeByScore(ctx, 0, k, ScoreBound{Value: 0, Exclusive: true}, ScoreBound{Value: 3}, 0, -1, false)
	if err != nil || len(in) != 2 || string(in[0].Member) != "a" || string(in[1].Member) != "b" {
		t.Fatalf("zrangebyscore (0 3] = %v, %v", in, err)
	}
	if _, err := s.ZAdd(ctx, 0, k, ZAddOptions{NX: true, XX: true}, ZMember{1, []byte("x")}); err != ErrZAddNXXX {
		t.Fatalf("zadd nx xx: %v", err)
	}
}

// TestLRangeRecentAndFlushed checks LRANGE against a model list while the
// list's rows are spread over the memtable and SSTs: positions pushed,
// popped and pushed again (so older versions of them sit in SSTs under the
// memtable's), elements rewritten by LSET after a flush, and flushes at
// every point. Windows of up to recentRangeMax elements are read from the
// memtable alone when it holds them all; the test also checks that the
// newest elements of a list are read without a scan (no iterator opened),
// and that a window reaching into flushed elements still reads them.
func TestLRangeRecentAndFlushed(t *testing.T) {
	ctx := context.Background()
	s, db := openTestStore(t)
	k := []byte("l")
	var model []string
	seq := 0
	push := func(left bool, n int) {
		t.Helper()
		for range n {
			seq++
			v := fmt.Sprintf("v%d", seq)
			var err error
			if left {
				_, err = s.LPush(ctx, 0, k, []byte(v))
				model = append([]string{v}, model...)
			} else {
				_, err = s.RPush(ctx, 0, k, []byte(v))
				model = append(model, v)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	flush := func() {
		t.Helper()
		if err := db.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string) {
		t.Helper()
		n := int64(len(model))
		for _, w := range [][2]int64{{0, 0}, {0, 9}, {0, 99}, {0, 127}, {0, 128}, {0, -1}, {-10, -1}, {5, 140}, {n / 2, n/2 + 50}, {-1, -1}, {n + 5, n + 10}} {
			got, err := s.LRange(ctx, 0, k, w[0], w[1])
			if err != nil {
				t.Fatalf("%s: LRANGE %d %d: %v", when, w[0], w[1], err)
			}
			start, stop := w[0], w[1]
			if start < 0 {
				start = max(start+n, 0)
			}
			if stop < 0 {
				stop += n
			}
			stop = min(stop, n-1)
			var want []string
			if start <= stop {
				want = model[start : stop+1]
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
				t.Fatalf("%s: LRANGE %d %d = %q, want %q", when, w[0], w[1], got, want)
			}
		}
	}

	push(true, 150)
	check("pushed, in the memtable")
	iters := db.Metrics().Iterators
	if _, err := s.LRange(ctx, 0, k, 0, 99); err != nil {
		t.Fatal(err)
	}
	if got := db.Metrics().Iterators; got != iters {
		t.Errorf("LRANGE 0 99 of elements just pushed opened %d iterators, want none (read from the memtable)", got-iters)
	}
	flush()
	check("flushed")
	push(true, 60) // the 60 newest in the memtable, the rest in an SST
	check("half flushed")
	if _, err := s.LPop(ctx, 0, k, 100); err != nil {
		t.Fatal(err)
	}
	model = model[100:]
	flush()
	check("popped and flushed")
	push(true, 120) // the popped positions again, their old rows and deletions in SSTs
	check("positions reused")
	iters = db.Metrics().Iterators
	if _, err := s.LRange(ctx, 0, k, 0, 99); err != nil {
		t.Fatal(err)
	}
	if got := db.Metrics().Iterators; got != iters {
		t.Errorf("LRANGE 0 99 of reused positions opened %d iterators, want none", got-iters)
	}
	flush()
	for i := 0; i < len(model); i += 7 {
		seq++
		v := fmt.Sprintf("set%d", seq)
		if err := s.LSet(ctx, 0, k, int64(i), []byte(v)); err != nil {
			t.Fatal(err)
		}
		model[i] = v
	}
	check("some rewritten after a flush")
	push(false, 30)
	if _, err := s.RPop(ctx, 0, k, 10); err != nil {
		t.Fatal(err)
	}
	model = model[:len(model)-10]
	check("pushed and popped at the tail")
	push(true, 5)
	if err := s.LSet(ctx, 0, k, 2, []byte{}); err != nil { // an empty element
		t.Fatal(err)
	}
	model[2] = ""
	check("an empty element")
}
