package keyspacetest

import (
	"context"
	"flag"
	"fmt"
	"github.com/stratakv/strata/resp/resptest"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

var (
	redisSeed = flag.Uint64("keyspace.seed", 0, "seed of the random model-vs-Redis test (0: from the time)")
	redisOps  = flag.Int("keyspace.ops", 3000, "ops per model-vs-Redis run")
)

// expiryGuard is how far (ms) the model-vs-Redis test keeps from the moment
// a key expires: a command must reach Redis within it.
const expiryGuard = 25

// redisHarness runs ops on the model and on a real redis-server and compares
// every reply.
//
// Redis reads its own wall clock, which no test can set, so the model's
// clock follows the same wall clock instead of a fake one: each op is
// rebased (Op.Rebase) to run at T, the wall clock's ms just before it is
// sent, and the model's clock reads T during it. Redis runs it a little
// later, at t >= T. The replies can only differ by timing if some key
// expires in [T, t]: before each op the harness waits until no key of the
// model expires within expiryGuard ms of T (settle), so none does while the
// op travels. Gaps between ops' Ats are slept in real time, so the short
// TTLs RandomOps draws do run out during a run. PTTL is the one reply that
// still depends on t; it is compared with that tolerance.
type redisHarness struct {
	t     *testing.T
	ctx   context.Context
	model *Model
	now   int64 // the model's clock
	redis *redisCommands
}

func newRedisHarness(t *testing.T) *redisHarness {
	h := &redisHarness{t: t, ctx: context.Background(), redis: newRedisCommands(t, resptest.StartRedis(t))}
	h.model = NewModel(func() int64 { return h.now })
	if err := h.redis.FlushAll(h.ctx); err != nil {
		t.Fatal(err)
	}
	return h
}

func wallMs() int64 { return time.Now().UnixMilli() }

// settle waits until no key of the model expires in [T, T+expiryGuard] and
// returns that T.
func (h *redisHarness) settle() int64 {
	for {
		now := wallMs()
		next, ok := h.model.NextExpiry(now - 1)
		if !ok || next > now+expiryGuard {
			return now
		}
		time.Sleep(time.Duration(next-now+1) * time.Millisecond)
	}
}

// run applies ops to both sides; it stops the test at the first reply that
// differs, naming the op and the ones before it.
func (h *redisHarness) run(label string, ops []Op) {
	h.t.Helper()
	prevAt := ops[0].At
	for i, op := range ops {
		if d := op.At - prevAt; d > 0 {
			time.Sleep(time.Duration(d) * time.Millisecond)
		}
		prevAt = op.At
		h.check(label, ops, i, h.rebase(op))
		// The full text of a float increment is in the stored string only.
		switch op.Kind {
		case OpIncrByFloat:
			h.check(label, ops, i, h.rebase(Op{Kind: OpGet, DB: op.DB, Key: op.Key}))
		case OpHIncrByFloat:
			h.check(label, ops, i, h.rebase(Op{Kind: OpHGet, DB: op.DB, Key: op.Key, Field: op.Field}))
		}
	}
	if errs := h.redis.formatErrs; len(errs) > 0 {
		h.t.Fatalf("%s: float formatting differs from Redis (%d):\n%s", label, len(errs), strings.Join(errs, "\n"))
	}
}

func (h *redisHarness) rebase(op Op) Op {
	at := h.settle()
	h.now = at
	return op.Rebase(at)
}

func (h *redisHarness) check(label string, ops []Op, i int, op Op) {
	h.t.Helper()
	want := Apply(h.ctx, h.model, op)
	sent := time.Now()
	got := Apply(h.ctx, h.redis, op)
	took := time.Since(sent)
	if Equal(want, got) || (op.Kind == OpPTTL && pttlClose(want, got)) {
		return
	}
	var b strings.Builder
	for j := max(0, i-30); j < i; j++ {
		if ops[j].DB == op.DB {
			fmt.Fprintf(&b, "  %d: %v\n", j, ops[j])
		}
	}
	h.t.Fatalf("%s: op %d: %v (rebased: T=%d, Redis answered in %v)\nmodel: %v\nredis: %v\nearlier ops on db%d:\n%s",
		label, i, ops[i], op.At, took, want, got, op.DB, b.String())
}

// pttlClose accepts a Redis PTTL up to expiryGuard ms below the model's:
// Redis reads its clock a little after T.
func pttlClose(model, redis Result) bool {
	if model.Err != "" || redis.Err != "" || model.Int < 0 || redis.Int < 0 {
		return false
	}
	d := model.Int - redis.Int
	return d >= 0 && d <= expiryGuard
}

// TestModelAgainstRedis runs a random sequence of commands on the model
// and a real redis-server and compares every reply, errors included.
func TestModelAgainstRedis(t *testing.T) {
	h := newRedisHarness(t)
	seed := *redisSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	n := *redisOps
	if testing.Short() {
		n = min(n, 500)
	}
	t.Logf("seed %d (-keyspace.seed=%d to repeat), %d ops", seed, seed, n)
	ops := RandomOps(rand.New(rand.NewPCG(seed, 0x6b657973)), n)
	h.run(fmt.Sprintf("seed %d", seed), ops)
	if h.redis.incrFloatInexact > 0 {
		t.Logf("%d INCRBYFLOAT replies had more digits than a float64 (compared through GET)", h.redis.incrFloatInexact)
	}
}

// TestModelAgainstRedisScripted runs the cases the random ops may miss,
// each on a flushed Redis and model.
func TestModelAgainstRedisScripted(t *testing.T) {
	h := newRedisHarness(t)
	for _, sc := range scripts {
		t.Run(sc.name, func(t *testing.T) {
			h.t = t
			if err := h.model.FlushAll(h.ctx); err != nil {
				t.Fatal(err)
			}
			if err := h.redis.FlushAll(h.ctx); err != nil {
				t.Fatal(err)
			}
			h.run(sc.name, sc.ops)
		})
	}
}

// TestGlobAgainstRedis compares GlobMatch with Redis's KEYS over random
// patterns of glob metacharacters and random keys.
func TestGlobAgainstRedis(t *testing.T) {
	ctx := context.Background()
	r := newRedisCommands(t, resptest.StartRedis(t))
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 7))
	const alphabet = "ab*?[]^-\\\x80\xff"
	randStr := func(n int) []byte {
		b := make([]byte, rnd.IntN(n+1))
		for i := range b {
			b[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		return b
	}
	var keys [][]byte
	for range 300 {
		k := randStr(4)
		if rnd.IntN(2) == 0 { // mostly plain keys
			k = []byte(strings.Map(func(c rune) rune {
				if c == 'a' || c == 'b' {
					return c
				}
				return 'a' + rune(rnd.IntN(3))
			}, string(k)))
		}
		keys = append(keys, k)
		if _, _, _, err := r.Set(ctx, 0, k, nil, SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	slices.SortFunc(keys, func(a, b []byte) int { return strings.Compare(string(a), string(b)) })
	keys = slices.CompactFunc(keys, func(a, b []byte) bool { return string(a) == string(b) })
	for range 3000 {
		pat := randStr(6)
		if string(pat) == "*" {
			continue // KEYS special-cases it
		}
		v, err := r.do(ctx, 0, "KEYS", pat)
		if err != nil {
			t.Fatal(err)
		}
		want := list(v)
		slices.SortFunc(want, func(a, b []byte) int { return strings.Compare(string(a), string(b)) })
		var got [][]byte
		for _, k := range keys {
			if GlobMatch(pat, k) {
				got = append(got, k)
			}
		}
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Fatalf("pattern %q: GlobMatch matches %q, Redis KEYS %q", pat, got, want)
		}
	}
}

// TestModelAgainstItself checks Apply and Equal: two models given the same
// ops on the same fake clock agree on every reply, and RandomOps is
// deterministic in its seed.
func TestModelAgainstItself(t *testing.T) {
	ctx := context.Background()
	var now int64
	a, b := NewModel(func() int64 { return now }), NewModel(func() int64 { return now })
	ops := RandomOps(rand.New(rand.NewPCG(1, 2)), 5000)
	again := RandomOps(rand.New(rand.NewPCG(1, 2)), 5000)
	kinds := map[OpKind]int{}
	errs := 0
	for i, op := range ops {
		if op.String() != again[i].String() {
			t.Fatalf("op %d: RandomOps not deterministic: %v vs %v", i, op, again[i])
		}
		now = op.At
		ra, rb := Apply(ctx, a, op), Apply(ctx, b, op)
		if !Equal(ra, rb) {
			t.Fatalf("op %d %v: %v vs %v", i, op, ra, rb)
		}
		kinds[op.Kind]++
		if ra.Err != "" {
			errs++
		}
	}
	for k := range numOpKinds {
		if kinds[k] == 0 {
			t.Errorf("RandomOps made no %v in 5000 ops", k)
		}
	}
	t.Logf("%d ops, %d error replies, %d ms of clock", len(ops), errs, ops[len(ops)-1].At-Epoch)
}

func TestEqual(t *testing.T) {
	cases := []struct {
		a, b Result
		want bool
	}{
		{Result{}, Result{}, true},
		{Result{Bytes: []byte{}}, Result{}, true},
		{Result{Nil: true}, Result{}, false},
		{Result{List: [][]byte{}}, Result{List: nil}, true},
		{Result{List: [][]byte{[]byte("a")}}, Result{List: [][]byte{[]byte("b")}}, false},
		{Result{Err: "ERR x"}, Result{Err: "ERR y"}, false},
		{Result{Float: 0}, Result{Float: negZero()}, true},
		{Result{Z: []ZMember{{Score: 1, Member: []byte("a")}}}, Result{Z: []ZMember{{Score: 2, Member: []byte("a")}}}, false},
		{Result{Pairs: [][2][]byte{{[]byte("f"), []byte("1")}}}, Result{Pairs: [][2][]byte{{[]byte("f"), []byte("2")}}}, false},
	}
	for i, c := range cases {
		if got := Equal(c.a, c.b); got != c.want {
			t.Errorf("case %d: Equal(%v, %v) = %v", i, c.a, c.b, got)
		}
	}
}

func negZero() float64 { z := 0.0; return -z }
