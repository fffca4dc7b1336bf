package resp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// What testdata/zsets.txt cannot show: pipelines and MULTI/EXEC through a
// real client, blocking pops woken by another client or timing out,
// durability across a restart, sets as algebra sources (SADD is another
// group's), ZRANDMEMBER's properties, ZSCAN's paging, and the strtod port.

func TestZSetPipeline(t *testing.T) {
	ts := startServer(t, Config{})
	rc := newStringsClient(t, ts)
	ctx := context.Background()

	pipe := rc.Pipeline()
	add := pipe.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"}, redis.Z{Score: 3, Member: "c"})
	addNX := pipe.ZAddNX(ctx, "z", redis.Z{Score: 9, Member: "a"}, redis.Z{Score: 4, Member: "d"})
	incr := pipe.ZIncrBy(ctx, "z", 0.5, "a")
	addIncr := pipe.ZAddArgsIncr(ctx, "z", redis.ZAddArgs{GT: true, Members: []redis.Z{{Score: -1, Member: "b"}}})
	card := pipe.ZCard(ctx, "z")
	score := pipe.ZScore(ctx, "z", "a")
	mscore := pipe.ZMScore(ctx, "z", "a", "nope", "d")
	rank := pipe.ZRevRank(ctx, "z", "d")
	rng := pipe.ZRangeWithScores(ctx, "z", 0, -1)
	byScore := pipe.ZRangeByScore(ctx, "z", &redis.ZRangeBy{Min: "(1.5", Max: "+inf", Offset: 1, Count: 2})
	count := pipe.ZCount(ctx, "z", "-inf", "(3")
	pipe.ZAdd(ctx, "y", redis.Z{Score: 10, Member: "a"}, redis.Z{Score: 20, Member: "x"})
	union := pipe.ZUnionStore(ctx, "u", &redis.ZStore{Keys: []string{"z", "y"}, Weights: []float64{1, 2}})
	unionRange := pipe.ZRangeWithScores(ctx, "u", 0, -1)
	popMin := pipe.ZPopMin(ctx, "z", 2)
	popMax := pipe.ZPopMax(ctx, "z")
	rem := pipe.ZRem(ctx, "z", "c", "nope")
	after := pipe.ZRange(ctx, "z", 0, -1)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		t.Fatal(err)
	}
	check := func(name string, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("ZADD", add.Val(), 3)
	check("ZADD NX", addNX.Val(), 1)
	check("ZINCRBY", incr.Val(), 1.5)
	check("ZADD GT INCR", addIncr.Err(), redis.Nil) // -1 would lower b: GT refuses, null
	check("ZCARD", card.Val(), 4)
	check("ZSCORE", score.Val(), 1.5)
	check("ZMSCORE", mscore.Val(), []float64{1.5, 0, 4}) // go-redis reads null as 0
	check("ZREVRANK", rank.Val(), 0)
	check("ZRANGE WITHSCORES", rng.Val(), []redis.Z{{Score: 1.5, Member: "a"}, {Score: 2, Member: "b"}, {Score: 3, Member: "c"}, {Score: 4, Member: "d"}})
	check("ZRANGEBYSCORE LIMIT", byScore.Val(), []string{"c", "d"})
	check("ZCOUNT", count.Val(), 2)
	check("ZUNIONSTORE", union.Val(), 5)
	check("union", unionRange.Val(), []redis.Z{{Score: 2, Member: "b"}, {Score: 3, Member: "c"}, {Score: 4, Member: "d"}, {Score: 21.5, Member: "a"}, {Score: 40, Member: "x"}})
	check("ZPOPMIN 2", popMin.Val(), []redis.Z{{Score: 1.5, Member: "a"}, {Score: 2, Member: "b"}})
	check("ZPOPMAX", popMax.Val(), []redis.Z{{Score: 4, Member: "d"}})
	check("ZREM", rem.Val(), 1)
	check("after", after.Val(), []string{})
}

// TestZSetMultiExec runs ZUNIONSTORE and friends in one transaction, and
// checks that WATCH on a sorted set sees another client's ZADD.
func TestZSetMultiExec(t *testing.T) {
	ts := startServer(t, Config{})
	rc := newStringsClient(t, ts)
	ctx := context.Background()
	rc.ZAdd(ctx, "a", redis.Z{Score: 1, Member: "x"}, redis.Z{Score: 2, Member: "y"})
	rc.ZAdd(ctx, "b", redis.Z{Score: 10, Member: "y"}, redis.Z{Score: 20, Member: "z"})

	var inter *redis.IntCmd
	var rng *redis.ZSliceCmd
	var pop *redis.ZSliceCmd
	cmds, err := rc.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZUnionStore(ctx, "u", &redis.ZStore{Keys: []string{"a", "b"}, Aggregate: "MAX"})
		inter = p.ZInterStore(ctx, "i", &redis.ZStore{Keys: []string{"a", "b", "u"}})
		p.ZAdd(ctx, "u", redis.Z{Score: 0, Member: "w"})
		rng = p.ZRangeWithScores(ctx, "u", 0, -1)
		pop = p.ZPopMax(ctx, "u", 2)
		return nil
	})
	if err != nil {
		t.Fatalf("EXEC: %v (%v)", err, cmds)
	}
	if inter.Val() != 1 {
		t.Errorf("ZINTERSTORE in EXEC = %d, want 1", inter.Val())
	}
	if got := fmt.Sprint(rng.Val()); got != "[{0 w} {1 x} {10 y} {20 z}]" {
		t.Errorf("ZRANGE in EXEC = %s", got)
	}
	if got := fmt.Sprint(pop.Val()); got != "[{20 z} {10 y}]" {
		t.Errorf("ZPOPMAX in EXEC = %s", got)
	}
	if got := rc.ZScore(ctx, "i", "y").Val(); got != 22 {
		t.Errorf("ZINTERSTORE result y = %v, want 22", got)
	}

	// WATCH: another client's ZADD to the watched key aborts the EXEC.
	other := newStringsClient(t, ts)
	err = rc.Watch(ctx, func(tx *redis.Tx) error {
		if err := other.ZAdd(ctx, "a", redis.Z{Score: 5, Member: "q"}).Err(); err != nil {
			return err
		}
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.ZUnionStore(ctx, "u2", &redis.ZStore{Keys: []string{"a"}})
			return nil
		})
		return err
	}, "a")
	if !errors.Is(err, redis.TxFailedErr) {
		t.Errorf("EXEC after a watched ZADD: %v, want TxFailedErr", err)
	}
	if n := rc.Exists(ctx, "u2").Val(); n != 0 {
		t.Errorf("aborted ZUNIONSTORE ran")
	}
}

// TestBZPopWokenByZAdd blocks BZPOPMIN and BZMPOP on empty keys and wakes
// them with ZADD from another client; a short timeout gives a null reply.
func TestBZPopWokenByZAdd(t *testing.T) {
	ts := startServer(t, Config{})
	rc := newStringsClient(t, ts)
	writer := newStringsClient(t, ts)
	ctx := context.Background()

	start := time.Now()
	if err := rc.Do(ctx, "BZPOPMIN", "empty", "0.2").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("BZPOPMIN timeout: %v, want nil reply", err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("BZPOPMIN returned after %v, before its timeout", d)
	}

	type result struct {
		v   *redis.ZWithKey
		err error
	}
	got := make(chan result, 1)
	go func() {
		v, err := rc.BZPopMin(ctx, 5*time.Second, "q1", "q2").Result()
		got <- result{v, err}
	}()
	time.Sleep(100 * time.Millisecond)
	select {
	case r := <-got:
		t.Fatalf("BZPOPMIN returned before any ZADD: %v %v", r.v, r.err)
	default:
	}
	if err := writer.ZAdd(ctx, "q2", redis.Z{Score: 7, Member: "m"}, redis.Z{Score: 3, Member: "n"}).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if r.err != nil || r.v.Key != "q2" || r.v.Member != "n" || r.v.Score != 3 {
			t.Errorf("BZPOPMIN woken = %+v, %v; want q2 n 3", r.v, r.err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("BZPOPMIN not woken by ZADD")
	}
	if left := writer.ZRange(ctx, "q2", 0, -1).Val(); !slices.Equal(left, []string{"m"}) {
		t.Errorf("after the pop q2 = %v", left)
	}

	// BZMPOP MAX COUNT 5, woken by a ZADD to its second key.
	type mresult struct {
		key string
		zs  []redis.Z
		err error
	}
	mgot := make(chan mresult, 1)
	go func() {
		k, zs, err := rc.BZMPop(ctx, 5*time.Second, "max", 5, "e1", "e2").Result()
		mgot <- mresult{k, zs, err}
	}()
	time.Sleep(100 * time.Millisecond)
	writer.ZAdd(ctx, "e2", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"})
	select {
	case r := <-mgot:
		if r.err != nil || r.key != "e2" || fmt.Sprint(r.zs) != "[{2 b} {1 a}]" {
			t.Errorf("BZMPOP woken = %v %v %v", r.key, r.zs, r.err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("BZMPOP not woken by ZADD")
	}
	if n := writer.Exists(ctx, "e2").Val(); n != 0 {
		t.Errorf("BZMPOP left the emptied key")
	}
}

// TestBZPopFirstComeFirstServed: two clients block on one key; one ZADD of
// two members serves both, the earlier first with the lowest score.
func TestBZPopFirstComeFirstServed(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	writer := newStringsClient(t, ts)
	var wg sync.WaitGroup
	results := make([]*redis.ZWithKey, 2)
	for i := range 2 {
		c := newStringsClient(t, ts)
		c.Ping(ctx)
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := c.BZPopMin(ctx, 5*time.Second, "k").Result()
			if err != nil {
				t.Errorf("waiter %d: %v", i, err)
			}
			results[i] = v
		}()
		time.Sleep(100 * time.Millisecond) // waiter 0 blocks first
	}
	writer.ZAdd(ctx, "k", redis.Z{Score: 1, Member: "low"}, redis.Z{Score: 2, Member: "high"})
	wg.Wait()
	if results[0] == nil || results[1] == nil {
		t.Fatal("a waiter got nothing")
	}
	if results[0].Member != "low" || results[1].Member != "high" {
		t.Errorf("served %v then %v; want low to the first waiter", results[0].Member, results[1].Member)
	}
}

// TestZSetRestart writes sorted sets, restarts the server, and checks every
// acknowledged write is there.
func TestZSetRestart(t *testing.T) {
	ts := startServer(t, Config{})
	rc := newStringsClient(t, ts)
	ctx := context.Background()
	const n = 300
	pipe := rc.Pipeline()
	for i := range n {
		pipe.ZAdd(ctx, "big", redis.Z{Score: float64(i) / 4, Member: "m" + strconv.Itoa(i)})
	}
	pipe.ZIncrBy(ctx, "big", 1000, "m0")
	pipe.ZRemRangeByRank(ctx, "big", 0, 9)
	pipe.ZAdd(ctx, "small", redis.Z{Score: math.Inf(-1), Member: "lo"}, redis.Z{Score: 0.1, Member: "mid"})
	pipe.ZUnionStore(ctx, "copy", &redis.ZStore{Keys: []string{"small"}, Weights: []float64{3}})
	pipe.ZPopMax(ctx, "small")
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	rc.Close()
	ts.restart()
	rc = newStringsClient(t, ts)

	if got := rc.ZCard(ctx, "big").Val(); got != n-10 {
		t.Errorf("ZCARD big after restart = %d, want %d", got, n-10)
	}
	if got := rc.ZScore(ctx, "big", "m0").Val(); got != 1000 {
		t.Errorf("m0 after restart = %v, want 1000", got)
	}
	if got := rc.ZRank(ctx, "big", "m0").Val(); got != n-11 {
		t.Errorf("rank of m0 = %d, want %d", got, n-11)
	}
	if got := rc.ZRangeWithScores(ctx, "big", 0, 0).Val(); fmt.Sprint(got) != "[{2.75 m11}]" {
		t.Errorf("lowest of big = %v", got)
	}
	if got := rc.ZRangeWithScores(ctx, "small", 0, -1).Val(); fmt.Sprint(got) != "[{-Inf lo}]" {
		t.Errorf("small = %v", got)
	}
	if got := rc.ZRangeWithScores(ctx, "copy", 0, -1).Val(); fmt.Sprint(got) != "[{-Inf lo} {0.30000000000000004 mid}]" {
		t.Errorf("copy = %v", got)
	}
}

// TestZSetAlgebraWithSets: sets are sources whose members score 1, as in
// Redis (replies checked against redis-server 7.0.15); ZRANGESTORE refuses
// a set.
func TestZSetAlgebraWithSets(t *testing.T) {
	ts := startServer(t, Config{})
	rc := newStringsClient(t, ts)
	ctx := context.Background()
	rc.ZAdd(ctx, "za", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"}, redis.Z{Score: 3, Member: "c"})
	rc.ZAdd(ctx, "zb", redis.Z{Score: 10, Member: "b"}, redis.Z{Score: 20, Member: "c"}, redis.Z{Score: 30, Member: "d"})
	if _, err := ts.srv.store.SAdd(ctx, 0, []byte("sa"), []byte("a"), []byte("d"), []byte("e")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []any
		want string
	}{
		{[]any{"ZUNION", 3, "za", "zb", "sa", "WITHSCORES"}, "[e 1 a 2 b 12 c 23 d 31]"},
		{[]any{"ZINTER", 2, "za", "sa", "WITHSCORES"}, "[a 2]"},
		{[]any{"ZDIFF", 2, "sa", "za", "WITHSCORES"}, "[d 1 e 1]"},
		{[]any{"ZUNIONSTORE", "dst", 2, "sa", "zb", "WEIGHTS", 2, 1}, "5"},
		{[]any{"ZRANGE", "dst", 0, -1, "WITHSCORES"}, "[a 2 e 2 b 10 c 20 d 32]"},
		{[]any{"ZINTERCARD", 2, "sa", "za"}, "1"},
		{[]any{"ZRANGESTORE", "dst", "sa", 0, -1}, "WRONGTYPE Operation against a key holding the wrong kind of value"},
		{[]any{"ZUNION", 1, "sa", "WEIGHTS", "x"}, "ERR weight value is not a float"},
	}
	for _, c := range cases {
		v, err := rc.Do(ctx, c.args...).Result()
		got := fmt.Sprint(v)
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%v = %s, want %s", c.args, got, c.want)
		}
	}
}

// TestZRandMemberProperties: positive counts give distinct members of the
// set, negative ones the asked number, and absurd negative counts are
// refused (zrandMaxRepeat) rather than building a huge reply.
func TestZRandMemberProperties(t *testing.T) {
	ts := startServer(t, Config{})
	rc := newStringsClient(t, ts)
	ctx := context.Background()
	members := map[string]float64{}
	var zs []redis.Z
	for i := range 50 {
		m := "m" + strconv.Itoa(i)
		members[m] = float64(i)
		zs = append(zs, redis.Z{Score: float64(i), Member: m})
	}
	rc.ZAdd(ctx, "z", zs...)
	for _, count := range []int{1, 5, 49, 50, 80} {
		got := rc.ZRandMemberWithScores(ctx, "z", count).Val()
		if len(got) != min(count, 50) {
			t.Errorf("ZRANDMEMBER %d: %d members", count, len(got))
		}
		seen := map[string]bool{}
		for _, z := range got {
			m := z.Member.(string)
			if seen[m] {
				t.Errorf("ZRANDMEMBER %d repeats %s", count, m)
			}
			seen[m] = true
			if s, ok := members[m]; !ok || s != z.Score {
				t.Errorf("ZRANDMEMBER %d: %s %v not in the set", count, m, z.Score)
			}
		}
	}
	got := rc.ZRandMember(ctx, "z", -500).Val()
	if len(got) != 500 {
		t.Errorf("ZRANDMEMBER -500: %d members", len(got))
	}
	distinct := map[string]bool{}
	for _, m := range got {
		if _, ok := members[m]; !ok {
			t.Errorf("ZRANDMEMBER -500: %s not in the set", m)
		}
		distinct[m] = true
	}
	if len(distinct) < 20 {
		t.Errorf("ZRANDMEMBER -500 drew only %d distinct members of 50", len(distinct))
	}
	if err := rc.Do(ctx, "ZRANDMEMBER", "z", -(zrandMaxRepeat + 1)).Err(); err == nil || err.Error() != "ERR value is out of range" {
		t.Errorf("ZRANDMEMBER beyond the repeat bound: %v", err)
	}
	if err := rc.Do(ctx, "ZRANDMEMBER", "z", "-9223372036854775807").Err(); err == nil {
		t.Errorf("ZRANDMEMBER -(2^63-1) was served")
	}
	if v, err := rc.Do(ctx, "ZRANDMEMBER", "missing", "-9223372036854775807").Result(); err != nil || fmt.Sprint(v) != "[]" {
		t.Errorf("ZRANDMEMBER on a missing key = %v, %v; want []", v, err)
	}
	if n := len(rc.ZRandMember(ctx, "z", -zrandMaxRepeat).Val()); n != zrandMaxRepeat {
		t.Errorf("ZRANDMEMBER at the bound: %d members", n)
	}
}

// TestZScanPaging walks a sorted set larger than COUNT with integer cursors
// and sees every member exactly once.
func TestZScanPaging(t *testing.T) {
	ts := startServer(t, Config{})
	rc := newStringsClient(t, ts)
	ctx := context.Background()
	const n = 1000
	var zs []redis.Z
	for i := range n {
		zs = append(zs, redis.Z{Score: float64(i) + 0.5, Member: fmt.Sprintf("member-with-a-long-name-%04d", i)})
	}
	rc.ZAdd(ctx, "z", zs...)
	seen := map[string]string{}
	cursor, calls := uint64(0), 0
	for {
		page, next, err := rc.ZScan(ctx, "z", cursor, "", 37).Result()
		if err != nil {
			t.Fatal(err)
		}
		calls++
		for i := 0; i+1 < len(page); i += 2 {
			if _, dup := seen[page[i]]; dup {
				t.Errorf("ZSCAN returned %s twice", page[i])
			}
			seen[page[i]] = page[i+1]
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	if len(seen) != n || calls < n/37 {
		t.Errorf("ZSCAN saw %d members in %d calls", len(seen), calls)
	}
	if seen["member-with-a-long-name-0007"] != "7.5" {
		t.Errorf("score of member 7 = %q", seen["member-with-a-long-name-0007"])
	}
}

// TestStrtod checks the strtod port against glibc's results on inputs
// that differ from strconv.ParseFloat or sit at the grammar's edges.
func TestStrtod(t *testing.T) {
	cases := []struct {
		in     string
		val    float64
		n      int
		erange bool
	}{
		{"1", 1, 1, false}, {" 1", 1, 2, false}, {"\t-2", -2, 3, false}, {"+1.5", 1.5, 4, false},
		{".5", 0.5, 2, false}, {"5.", 5, 2, false}, {".", 0, 0, false}, {"-.", 0, 0, false},
		{"e5", 0, 0, false}, {"1e", 1, 1, false}, {"1e+", 1, 1, false}, {"1E-5x", 1e-5, 4, false},
		{"0x", 0, 1, false}, {"0x1", 1, 3, false}, {"0X1p3", 8, 5, false}, {"0x.8", 0.5, 4, false},
		{"0x1.8p-1x", 0.75, 8, false}, {"0xg", 0, 1, false}, {"-0x", 0, 2, false},
		{"inf", math.Inf(1), 3, false}, {"-INF", math.Inf(-1), 4, false}, {"Infinity", math.Inf(1), 8, false},
		{"infinit", math.Inf(1), 3, false}, {"1e400", math.Inf(1), 5, true}, {"-1e400", math.Inf(-1), 6, true},
		{"1e-400", 0, 6, true}, {"0e-400", 0, 6, false}, {"0x1p-2000", 0, 9, true}, {"0x0p-2000", 0, 9, false},
		{"1_000", 1, 1, false}, {"1,5", 1, 1, false}, {"--1", 0, 0, false}, {"", 0, 0, false},
		{"+", 0, 0, false}, {" ", 0, 0, false}, {"00000000000000000000000000001", 1, 29, false},
	}
	for _, c := range cases {
		v, n, er := strtod([]byte(c.in))
		if v != c.val || n != c.n || er != c.erange {
			t.Errorf("strtod(%q) = %v %d %v, want %v %d %v", c.in, v, n, er, c.val, c.n, c.erange)
		}
	}
	for _, in := range []string{"nan", "NAN(123)", "nan(", "nan()", "+nan(ab_c)"} {
		v, n, _ := strtod([]byte(in))
		want := map[string]int{"nan": 3, "NAN(123)": 8, "nan(": 3, "nan()": 5, "+nan(ab_c)": 10}[in]
		if !math.IsNaN(v) || n != want {
			t.Errorf("strtod(%q) = %v %d, want NaN %d", in, v, n, want)
		}
	}
	if v, _, _ := strtod([]byte("-0")); v != 0 || !math.Signbit(v) {
		t.Errorf("strtod(-0) = %v, want -0", v)
	}
}

// TestBZPopSkipsKeyTurnedOtherType: once blocked, a key that becomes
// another type does not end the wait with WRONGTYPE (Redis only serves a
// blocked BZPOPMIN from a sorted set); a ZADD to another of its keys
// serves it.
func TestBZPopSkipsKeyTurnedOtherType(t *testing.T) {
	ts := startServer(t, Config{})
	rc := newStringsClient(t, ts)
	writer := newStringsClient(t, ts)
	ctx := context.Background()
	got := make(chan string, 1)
	go func() {
		v, err := rc.BZPopMax(ctx, 5*time.Second, "a", "b").Result()
		if err != nil {
			got <- err.Error()
			return
		}
		got <- fmt.Sprint(v.Key, " ", v.Member, " ", v.Score)
	}()
	time.Sleep(100 * time.Millisecond)
	writer.Set(ctx, "a", "string", 0)
	time.Sleep(50 * time.Millisecond)
	writer.ZAdd(ctx, "b", redis.Z{Score: 4, Member: "m"})
	select {
	case r := <-got:
		if r != "b m 4" {
			t.Errorf("BZPOPMAX = %s, want b m 4", r)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("BZPOPMAX not served")
	}
}
