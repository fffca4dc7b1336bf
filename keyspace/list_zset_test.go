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
