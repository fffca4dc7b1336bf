package keyspace

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// The sorted-set commands of zset_ext.go and zset_algebra.go are checked
// against testdata/zset_ext.txt: scripts of Redis commands, each followed
// by "-> reply" as redis-server 7.0 gave it. The test runs each script
// through a small command interpreter over a fresh Store. With
// -zset.redis=host:port it also runs the scripts on that redis-server and
// fails where the file disagrees with it; adding -zset.rewrite writes
// Redis's replies into the file instead.

var (
	zsetRedis   = flag.String("zset.redis", "", "redis-server address to check testdata/zset_ext.txt against")
	zsetRewrite = flag.Bool("zset.rewrite", false, "with -zset.redis: rewrite testdata/zset_ext.txt from Redis's replies")
)

const zsetScriptFile = "testdata/zset_ext.txt"

// zsetScript is one case of the file: commands and the replies expected.
type zsetScript struct {
	name  string
	cmds  [][]string
	wants []string
}

func readZSetScripts(t *testing.T) []zsetScript {
	t.Helper()
	f, err := os.Open(zsetScriptFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []zsetScript
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "# "):
			out = append(out, zsetScript{name: line[2:]})
		case strings.HasPrefix(line, "-> "):
			cur := &out[len(out)-1]
			cur.wants = append(cur.wants, line[3:])
		case strings.TrimSpace(line) != "":
			cur := &out[len(out)-1]
			cur.cmds = append(cur.cmds, strings.Fields(line))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func writeZSetScripts(t *testing.T, scripts []zsetScript) {
	t.Helper()
	var b strings.Builder
	b.WriteString("# Generated from redis-server 7.0: go test ./keyspace -run TestZSetScripts -zset.redis=ADDR -zset.rewrite\n")
	for _, sc := range scripts {
		if len(sc.cmds) == 0 {
			continue // the header
		}
		fmt.Fprintf(&b, "\n# %s\n", sc.name)
		for i, c := range sc.cmds {
			fmt.Fprintf(&b, "%s\n-> %s\n", strings.Join(c, " "), sc.wants[i])
		}
	}
	if err := os.WriteFile(zsetScriptFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestZSetScripts(t *testing.T) {
	ctx := context.Background()
	scripts := readZSetScripts(t)
	var rdb *redis.Client
	if *zsetRedis != "" {
		rdb = redis.NewClient(&redis.Options{Addr: *zsetRedis, Protocol: 2})
		defer rdb.Close()
	}
	for i := range scripts {
		sc := &scripts[i]
		if len(sc.cmds) == 0 {
			continue
		}
		if rdb != nil {
			got := runRedisScript(t, ctx, rdb, sc.cmds)
			if *zsetRewrite {
				sc.wants = got
			} else if fmt.Sprint(got) != fmt.Sprint(sc.wants) {
				t.Errorf("%s: file disagrees with Redis:\nfile  %q\nredis %q", sc.name, sc.wants, got)
			}
		}
		s, _ := openTestStore(t)
		for j, cmd := range sc.cmds {
			got := renderReply(runZSetCmd(ctx, s, cmd))
			if j >= len(sc.wants) {
				t.Fatalf("%s: no reply for %q", sc.name, cmd)
			}
			if got != sc.wants[j] {
				t.Errorf("%s: %s\n got  %s\n want %s", sc.name, strings.Join(cmd, " "), got, sc.wants[j])
			}
			for _, k := range cmd[1:] {
				checkZSetRows(t, ctx, s, []byte(k))
			}
		}
	}
	if rdb != nil && *zsetRewrite {
		writeZSetScripts(t, scripts)
	}
}

// checkZSetRows fails unless a sorted set at key has exactly Count member
// rows and Count score rows, each pair agreeing on the score.
func checkZSetRows(t *testing.T, ctx context.Context, s *Store, key []byte) {
	t.Helper()
	c, ok, err := s.openCollection(ctx, 0, key, TypeZSet, false)
	if err != nil || !ok {
		return // not a sorted set (or the word is no key)
	}
	scores := map[string]float64{}
	var byScore int64
	err = c.scan(ctx, func(suffix, value []byte) error {
		switch suffix[0] {
		case zsetMemberTag:
			f, err := decodeScoreValue(value)
			scores[string(suffix[1:])] = f
			return err
		default:
			f, m, err := decodeScore(suffix[1:])
			if got, ok := scores[string(m)]; !ok || got != f {
				t.Errorf("%q: score row (%v, %q) without its member row (%v, %v)", key, f, m, got, ok)
			}
			byScore++
			return err
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(scores)) != c.meta.Count || byScore != c.meta.Count {
		t.Errorf("%q: count %d, %d member rows, %d score rows", key, c.meta.Count, len(scores), byScore)
	}
}

func runRedisScript(t *testing.T, ctx context.Context, rdb *redis.Client, cmds [][]string) []string {
	t.Helper()
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range cmds {
		args := make([]any, len(c))
		for i, a := range c {
			args[i] = a
		}
		v, err := rdb.Do(ctx, args...).Result()
		switch {
		case errors.Is(err, redis.Nil):
			out = append(out, renderReply(nil))
		case err != nil:
			out = append(out, renderReply(err))
		default:
			out = append(out, renderReply(v))
		}
	}
	return out
}

// renderReply prints a reply on one line: arrays in brackets, nil as
// (nil), errors as their text.
func renderReply(v any) string {
	switch v := v.(type) {
	case nil:
		return "(nil)"
	case error:
		return v.Error()
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = renderReply(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprintf("?%T", v)
}

// formatScore formats a score as Redis 7.0 replies with it (%.17g).
func formatScore(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}

func parseScoreBound(a string) ScoreBound {
	ex := strings.HasPrefix(a, "(")
	v, err := strconv.ParseFloat(strings.TrimPrefix(a, "("), 64)
	if err != nil {
		panic(fmt.Sprintf("bad score bound %q", a))
	}
	return ScoreBound{Value: v, Exclusive: ex}
}

func parseLexBound(a string) LexBound {
	switch {
	case a == "-":
		return LexMin
	case a == "+":
		return LexMax
	case strings.HasPrefix(a, "["):
		return LexBound{Value: []byte(a[1:])}
	case strings.HasPrefix(a, "("):
		return LexBound{Value: []byte(a[1:]), Exclusive: true}
	}
	panic(fmt.Sprintf("bad lex bound %q", a))
}

func atoi(a string) int64 {
	n, err := strconv.ParseInt(a, 10, 64)
	if err != nil {
		panic(fmt.Sprintf("bad integer %q", a))
	}
	return n
}

func zbs(args []string) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = []byte(a)
	}
	return out
}

func membersReply(ms []ZMember, withScores bool) []any {
	out := []any{}
	for _, m := range ms {
		out = append(out, string(m.Member))
		if withScores {
			out = append(out, formatScore(m.Score))
		}
	}
	return out
}

func intReply(n int64, err error) any {
	if err != nil {
		return err
	}
	return n
}

func membersOrErr(ms []ZMember, err error, withScores bool) any {
	if err != nil {
		return err
	}
	return membersReply(ms, withScores)
}

// runZSetCmd runs one command of a script (the subset the scripts use,
// with their argument forms only) and returns its reply as go-redis would.
func runZSetCmd(ctx context.Context, s *Store, c []string) any {
	name, args := strings.ToUpper(c[0]), c[1:]
	key := []byte(args[0])
	switch name {
	case "ZADD":
		var ms []ZMember
		for i := 1; i < len(args); i += 2 {
			f, _ := strconv.ParseFloat(args[i], 64)
			ms = append(ms, ZMember{Score: f, Member: []byte(args[i+1])})
		}
		return intReply(s.ZAdd(ctx, 0, key, ZAddOptions{}, ms...))
	case "SADD":
		return intReply(s.SAdd(ctx, 0, key, zbs(args[1:])...))
	case "SET":
		_, _, _, err := s.Set(ctx, 0, key, []byte(args[1]), SetOptions{})
		if err != nil {
			return err
		}
		return "OK"
	case "EXISTS":
		return intReply(s.Exists(ctx, 0, zbs(args)...))
	case "TYPE":
		t, err := s.TypeOf(ctx, 0, key)
		if err != nil {
			return err
		}
		return t.String()
	case "ZCARD":
		return intReply(s.ZCard(ctx, 0, key))
	case "ZRANGE": // ZRANGE key 0 -1 WITHSCORES only
		ms, err := s.ZRange(ctx, 0, key, atoi(args[1]), atoi(args[2]), false)
		return membersOrErr(ms, err, true)
	case "ZMSCORE":
		scores, ok, err := s.ZMScore(ctx, 0, key, zbs(args[1:])...)
		if err != nil {
			return err
		}
		out := []any{}
		for i := range scores {
			if ok[i] {
				out = append(out, formatScore(scores[i]))
			} else {
				out = append(out, nil)
			}
		}
		return out
	case "ZCOUNT":
		return intReply(s.ZCount(ctx, 0, key, parseScoreBound(args[1]), parseScoreBound(args[2])))
	case "ZLEXCOUNT":
		return intReply(s.ZLexCount(ctx, 0, key, parseLexBound(args[1]), parseLexBound(args[2])))
	case "ZRANGEBYLEX", "ZREVRANGEBYLEX":
		rev := name == "ZREVRANGEBYLEX"
		lo, hi := parseLexBound(args[1]), parseLexBound(args[2])
		if rev {
			lo, hi = hi, lo
		}
		offset, count := int64(0), int64(-1)
		if len(args) == 6 { // LIMIT offset count
			offset, count = atoi(args[4]), atoi(args[5])
		}
		ms, err := s.ZRangeByLex(ctx, 0, key, lo, hi, offset, count, rev)
		if err != nil {
			return err
		}
		out := []any{}
		for _, m := range ms {
			out = append(out, string(m))
		}
		return out
	case "ZREMRANGEBYRANK":
		return intReply(s.ZRemRangeByRank(ctx, 0, key, atoi(args[1]), atoi(args[2])))
	case "ZREMRANGEBYSCORE":
		return intReply(s.ZRemRangeByScore(ctx, 0, key, parseScoreBound(args[1]), parseScoreBound(args[2])))
	case "ZREMRANGEBYLEX":
		return intReply(s.ZRemRangeByLex(ctx, 0, key, parseLexBound(args[1]), parseLexBound(args[2])))
	case "ZPOPMIN", "ZPOPMAX":
		f := s.ZPopMin
		if name == "ZPOPMAX" {
			f = s.ZPopMax
		}
		ms, err := f(ctx, 0, key, atoi(args[1]))
		return membersOrErr(ms, err, true)
	case "ZMPOP":
		return runZMPop(ctx, s, args)
	case "ZRANDMEMBER": // only counts whose reply is not random
		ms, err := s.ZRandMember(ctx, 0, key, atoi(args[1]))
		return membersOrErr(ms, err, false)
	case "ZRANGESTORE":
		return intReply(s.ZRangeStore(ctx, 0, key, []byte(args[1]), parseRangeSpec(args[2:])))
	}
	return runZAlgebraCmd(ctx, s, name, args)
}

// runZMPop runs ZMPOP numkeys key... MIN|MAX [COUNT n].
func runZMPop(ctx context.Context, s *Store, args []string) any {
	n := int(atoi(args[0]))
	keys, rest := zbs(args[1:1+n]), args[1+n:]
	count := int64(1)
	if len(rest) == 3 {
		count = atoi(rest[2])
	}
	k, ms, err := s.ZMPop(ctx, 0, keys, count, strings.EqualFold(rest[0], "MAX"))
	if err != nil {
		return err
	}
	if k == nil {
		return nil
	}
	pairs := []any{}
	for _, m := range ms {
		pairs = append(pairs, []any{string(m.Member), formatScore(m.Score)})
	}
	return []any{string(k), pairs}
}

// parseRangeSpec parses ZRANGESTORE's range: min max [BYSCORE|BYLEX] [REV]
// [LIMIT offset count].
func parseRangeSpec(args []string) ZRangeSpec {
	var r ZRangeSpec
	a, b := args[0], args[1]
	for i := 2; i < len(args); i++ {
		switch strings.ToUpper(args[i]) {
		case "BYSCORE":
			r.By = ZRangeByScore
		case "BYLEX":
			r.By = ZRangeByLex
		case "REV":
			r.Rev = true
		case "LIMIT":
			r.Limit, r.Offset, r.Count = true, atoi(args[i+1]), atoi(args[i+2])
			i += 2
		}
	}
	if r.Rev && r.By != ZRangeByRank {
		a, b = b, a
	}
	switch r.By {
	case ZRangeByScore:
		r.MinScore, r.MaxScore = parseScoreBound(a), parseScoreBound(b)
	case ZRangeByLex:
		r.MinLex, r.MaxLex = parseLexBound(a), parseLexBound(b)
	default:
		r.Start, r.Stop = atoi(a), atoi(b)
	}
	return r
}

// runZAlgebraCmd runs ZUNION, ZINTER, ZDIFF (WITHSCORES always), their
// STORE forms and ZINTERCARD.
func runZAlgebraCmd(ctx context.Context, s *Store, name string, args []string) any {
	var dst []byte
	if strings.HasSuffix(name, "STORE") {
		dst, args = []byte(args[0]), args[1:]
	}
	n := int(atoi(args[0]))
	keys, rest := zbs(args[1:1+n]), args[1+n:]
	var weights []float64
	agg := AggregateSum
	var limit int64
	for i := 0; i < len(rest); i++ {
		switch strings.ToUpper(rest[i]) {
		case "WEIGHTS":
			for j := range n {
				f, _ := strconv.ParseFloat(rest[i+1+j], 64)
				weights = append(weights, f)
			}
			i += n
		case "AGGREGATE":
			agg = map[string]Aggregate{"SUM": AggregateSum, "MIN": AggregateMin, "MAX": AggregateMax}[strings.ToUpper(rest[i+1])]
			i++
		case "LIMIT":
			limit = atoi(rest[i+1])
			i++
		}
	}
	switch name {
	case "ZUNION":
		ms, err := s.ZUnion(ctx, 0, keys, weights, agg)
		return membersOrErr(ms, err, true)
	case "ZINTER":
		ms, err := s.ZInter(ctx, 0, keys, weights, agg)
		return membersOrErr(ms, err, true)
	case "ZDIFF":
		ms, err := s.ZDiff(ctx, 0, keys)
		return membersOrErr(ms, err, true)
	case "ZINTERCARD":
		return intReply(s.ZInterCard(ctx, 0, keys, limit))
	case "ZUNIONSTORE":
		return intReply(s.ZUnionStore(ctx, 0, dst, keys, weights, agg))
	case "ZINTERSTORE":
		return intReply(s.ZInterStore(ctx, 0, dst, keys, weights, agg))
	case "ZDIFFSTORE":
		return intReply(s.ZDiffStore(ctx, 0, dst, keys))
	}
	panic("unknown command " + name)
}

// TestLexSpanTable checks the pure lexicographic walk on sets whose score
// order is not member order (replies as Redis 7.0 gives them for
// ZADD z 1 d 2 a 3 c 0 b 5 e: score order b d a c e).
func TestLexSpanTable(t *testing.T) {
	members := zbs([]string{"b", "d", "a", "c", "e"})
	L := parseLexBound
	tests := []struct {
		lo, hi        string
		offset, count int64
		rev           bool
		want          string
	}{
		{"-", "+", 0, -1, false, "[b d a c e]"},
		{"[b", "[d", 0, -1, false, "[b d a c]"},
		{"(a", "+", 0, -1, false, "[b d a c e]"},
		{"[b", "[c", 1, 10, false, "[]"},
		{"[b", "[c", 2, 1, false, "[a]"},
		{"[b", "[d", 0, -1, true, "[c]"},
		{"[b", "[d", 2, 10, true, "[d b]"},
		{"[b", "(b", 0, -1, false, "[]"},
		{"+", "-", 0, -1, false, "[]"},
		{"-", "-", 0, -1, false, "[]"},
		{"[f", "+", 0, -1, false, "[]"},
		{"[b", "[c", -1, 10, false, "[]"},
	}
	for _, tt := range tests {
		idx := lexSpan(members, L(tt.lo), L(tt.hi), tt.offset, tt.count, tt.rev)
		got := make([]string, len(idx))
		for i, j := range idx {
			got[i] = string(members[j])
		}
		if s := fmt.Sprint(got); s != tt.want {
			t.Errorf("lexSpan(%s, %s, %d, %d, rev=%v) = %s, want %s", tt.lo, tt.hi, tt.offset, tt.count, tt.rev, s, tt.want)
		}
	}
}

// TestZRandMember checks the properties of ZRANDMEMBER's random replies
// (Redis's exact picks are random): distinct for a positive count, all
// highest first when count >= size, repeats for a negative count.
func TestZRandMember(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	k := []byte("z")
	var pairs []ZMember
	for i := range 20 {
		pairs = append(pairs, ZMember{Score: float64(i), Member: fmt.Appendf(nil, "m%02d", i)})
	}
	if _, err := s.ZAdd(ctx, 0, k, ZAddOptions{}, pairs...); err != nil {
		t.Fatal(err)
	}
	for _, count := range []int64{1, 5, 19} {
		got, err := s.ZRandMember(ctx, 0, k, count)
		if err != nil || int64(len(got)) != count {
			t.Fatalf("zrandmember %d = %d members, %v", count, len(got), err)
		}
		seen := map[string]bool{}
		for _, m := range got {
			if seen[string(m.Member)] || m.Score != pairs[int(m.Score)].Score || !bytes.Equal(pairs[int(m.Score)].Member, m.Member) {
				t.Fatalf("zrandmember %d: repeated or wrong member %q %v", count, m.Member, m.Score)
			}
			seen[string(m.Member)] = true
		}
	}
	all, err := s.ZRandMember(ctx, 0, k, 100)
	if err != nil || len(all) != 20 || string(all[0].Member) != "m19" || string(all[19].Member) != "m00" {
		t.Fatalf("zrandmember 100 = %v, %v; want all, highest first", all, err)
	}
	reps, err := s.ZRandMember(ctx, 0, k, -500)
	if err != nil || len(reps) != 500 {
		t.Fatalf("zrandmember -500 = %d members, %v", len(reps), err)
	}
	seen := map[string]int{}
	for _, m := range reps {
		seen[string(m.Member)]++
	}
	if len(seen) < 15 || len(seen) > 20 {
		t.Fatalf("zrandmember -500 drew %d distinct members of 20", len(seen))
	}
	for _, c := range []int64{0, 3, -3} {
		if got, err := s.ZRandMember(ctx, 0, []byte("missing"), c); err != nil || len(got) != 0 {
			t.Fatalf("zrandmember missing %d = %v, %v", c, got, err)
		}
	}
	if _, err := s.ZRandMember(ctx, 0, k, math.MinInt64+1); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("zrandmember huge negative: %v", err)
	}
	if _, _, _, err := s.Set(ctx, 0, []byte("str"), []byte("v"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ZRandMember(ctx, 0, []byte("str"), 1); !errors.Is(err, ErrWrongType) {
		t.Fatalf("zrandmember on a string: %v", err)
	}
}

// TestZSetStoreInTxn: inside a transaction the algebra and ZRANGESTORE
// read the transaction's own changes, including a destination that is also
// a source, and nothing shows outside before Commit.
func TestZSetStoreInTxn(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	a, b, d := []byte("a"), []byte("b"), []byte("d")
	tx := s.Begin([]DBKey{{0, a}, {0, b}, {0, d}})
	ts := tx.Store()
	if _, err := ts.ZAdd(ctx, 0, a, ZAddOptions{}, ZMember{1, []byte("x")}, ZMember{2, []byte("y")}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.SAdd(ctx, 0, b, []byte("y"), []byte("z")); err != nil {
		t.Fatal(err)
	}
	if n, err := ts.ZUnionStore(ctx, 0, a, [][]byte{a, b}, nil, AggregateSum); err != nil || n != 3 {
		t.Fatalf("ZUNIONSTORE in txn = %d, %v", n, err)
	}
	if n, err := ts.ZRangeStore(ctx, 0, d, a, ZRangeSpec{By: ZRangeByScore, MinScore: ScoreBound{Value: 1}, MaxScore: ScoreBound{Value: 3}, Rev: true, Limit: true, Count: 1}); err != nil || n != 1 {
		t.Fatalf("ZRANGESTORE in txn = %d, %v", n, err)
	}
	if n, _ := s.ZCard(ctx, 0, a); n != 0 {
		t.Fatalf("txn writes visible before commit: ZCARD a = %d", n)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := s.ZRange(ctx, 0, a, 0, -1, false)
	if err != nil || fmt.Sprint(membersReply(got, true)) != "[x 1 z 1 y 3]" {
		t.Fatalf("a after commit = %v, %v", membersReply(got, true), err)
	}
	got, err = s.ZRange(ctx, 0, d, 0, -1, false)
	if err != nil || fmt.Sprint(membersReply(got, true)) != "[y 3]" {
		t.Fatalf("d after commit = %v, %v", membersReply(got, true), err)
	}
	for _, k := range [][]byte{a, b, d} {
		checkZSetRows(t, ctx, s, k)
	}
}
