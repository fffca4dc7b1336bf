package resp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/stratakv/strata/resp/resptest"
)

// What the corpus scripts (testdata/strings.txt, keys.txt) cannot show:
// pipelines and MULTI/EXEC through a real client, durability across a
// restart, concurrent increments, and SCAN's integer cursors over a large
// keyspace.

func newStringsClient(t *testing.T, ts *testServer) *redis.Client {
	t.Helper()
	rc := redis.NewClient(&redis.Options{
		Addr:                     ts.addr,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	t.Cleanup(func() { rc.Close() })
	return rc
}

func TestStringsKeysPipeline(t *testing.T) {
	ts := startServer(t, Config{})
	rc := newStringsClient(t, ts)
	ctx := context.Background()

	pipe := rc.Pipeline()
	set := pipe.Set(ctx, "a", "1", 0)
	setnx := pipe.SetNX(ctx, "a", "2", 0)
	mset := pipe.MSet(ctx, "b", "2", "c", "hello")
	msetnx := pipe.MSetNX(ctx, "c", "x", "d", "y")
	mget := pipe.MGet(ctx, "a", "b", "c", "missing")
	incr := pipe.Incr(ctx, "a")
	incrBy := pipe.IncrBy(ctx, "a", 10)
	decrBy := pipe.DecrBy(ctx, "a", 2)
	decr := pipe.Decr(ctx, "a")
	incrFloat := pipe.IncrByFloat(ctx, "f", 0.1)
	incrFloat2 := pipe.IncrByFloat(ctx, "f", 0.2)
	appendN := pipe.Append(ctx, "c", " world")
	strlen := pipe.StrLen(ctx, "c")
	getRange := pipe.GetRange(ctx, "c", -5, -1)
	setRange := pipe.SetRange(ctx, "c", 0, "J")
	getSet := pipe.GetSet(ctx, "b", "3")
	setEx := pipe.SetEx(ctx, "e", "v", time.Hour)
	ttl := pipe.TTL(ctx, "e")
	getEx := pipe.Do(ctx, "GETEX", "e") // no option: a plain GET (go-redis's GetEx(0) sends PERSIST)
	persist := pipe.Persist(ctx, "e")
	pttl := pipe.PTTL(ctx, "e")
	expireAt := pipe.ExpireAt(ctx, "e", time.Unix(4102444800, 0))
	expireTime := pipe.ExpireTime(ctx, "e")
	getDel := pipe.GetDel(ctx, "e")
	exists := pipe.Exists(ctx, "a", "b", "e", "a")
	typ := pipe.Type(ctx, "c")
	rename := pipe.Rename(ctx, "c", "c2")
	renameNX := pipe.RenameNX(ctx, "c2", "a")
	cp := pipe.Copy(ctx, "c2", "c3", 0, false)
	del := pipe.Del(ctx, "c3", "missing")
	badIncr := pipe.Incr(ctx, "c2")
	after := pipe.Get(ctx, "a")
	if _, err := pipe.Exec(ctx); err == nil {
		t.Fatal("pipeline: want the INCR error reported")
	}

	check := func(name string, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("SET", set.Val(), "OK")
	check("SETNX", setnx.Val(), false)
	check("MSET", mset.Val(), "OK")
	check("MSETNX", msetnx.Val(), false)
	check("MGET", mget.Val(), []any{"1", "2", "hello", nil})
	check("INCR", incr.Val(), 2)
	check("INCRBY", incrBy.Val(), 12)
	check("DECRBY", decrBy.Val(), 10)
	check("DECR", decr.Val(), 9)
	check("INCRBYFLOAT", incrFloat.Val(), 0.1)
	check("INCRBYFLOAT", incrFloat2.Val(), 0.3) // long double: 0.3, not 0.30000000000000004
	check("APPEND", appendN.Val(), 11)
	check("STRLEN", strlen.Val(), 11)
	check("GETRANGE", getRange.Val(), "world")
	check("SETRANGE", setRange.Val(), 11)
	check("GETSET", getSet.Val(), "2")
	check("SETEX", setEx.Val(), "OK")
	check("TTL", ttl.Val(), time.Hour)
	check("GETEX", getEx.Val(), "v")
	check("PERSIST", persist.Val(), true)
	check("PTTL", pttl.Val(), time.Duration(-1))
	check("EXPIREAT", expireAt.Val(), true)
	check("EXPIRETIME", expireTime.Val(), 4102444800*time.Second)
	check("GETDEL", getDel.Val(), "v")
	check("EXISTS", exists.Val(), 3)
	check("TYPE", typ.Val(), "string")
	check("RENAME", rename.Val(), "OK")
	check("RENAMENX", renameNX.Val(), false)
	check("COPY", cp.Val(), 1)
	check("DEL", del.Val(), 1)
	if err := badIncr.Err(); err == nil || !strings.Contains(err.Error(), "not an integer") {
		t.Errorf("INCR on a non-integer: %v", err)
	}
	check("GET after", after.Val(), "9")
}

func TestStringsKeysMultiExec(t *testing.T) {
	ts := startServer(t, Config{})
	rc := newStringsClient(t, ts)
	ctx := context.Background()

	cmds, err := rc.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.MSet(ctx, "k1", "10", "k2", "abc")
		p.IncrBy(ctx, "k1", 5)
		p.Append(ctx, "k2", "def")
		p.Expire(ctx, "k2", time.Hour)
		p.Rename(ctx, "k2", "k3")
		p.Copy(ctx, "k3", "k3", 1, false) // into database 1
		p.Move(ctx, "k1", 2)
		p.MGet(ctx, "k1", "k3")
		p.TTL(ctx, "k3")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"OK", "15", "6", "true", "OK", "1", "true", "[<nil> abcdef]", "1h0m0s"}
	for i, c := range cmds {
		if s := cmdVal(c); s != want[i] {
			t.Errorf("EXEC reply %d (%s) = %s, want %s", i, c.Name(), s, want[i])
		}
	}

	// The transaction's writes are there, in their databases.
	for _, tc := range []struct {
		db        int
		key, want string
	}{{0, "k3", "abcdef"}, {1, "k3", "abcdef"}, {2, "k1", "15"}} {
		rc := redis.NewClient(&redis.Options{Addr: ts.addr, DB: tc.db,
			MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
		if v, err := rc.Get(ctx, tc.key).Result(); err != nil || v != tc.want {
			t.Errorf("db %d GET %s = %q, %v; want %q", tc.db, tc.key, v, err, tc.want)
		}
		rc.Close()
	}

	// An error inside EXEC fails only its command.
	cmds, _ = rc.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "s", "x", 0)
		p.Incr(ctx, "s")
		p.GetDel(ctx, "s")
		return nil
	})
	if cmdVal(cmds[0]) != "OK" || cmds[1].Err() == nil || cmdVal(cmds[2]) != "x" {
		t.Errorf("EXEC with a failing INCR: %v", cmds)
	}

	// WATCH sees a MOVE into the watched key's database.
	rc2 := redis.NewClient(&redis.Options{Addr: ts.addr, DB: 2,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
	defer rc2.Close()
	rc.Set(ctx, "w", "from0", 0)
	err = rc2.Watch(ctx, func(tx *redis.Tx) error {
		if err := rc.Move(ctx, "w", 2).Err(); err != nil {
			return err
		}
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "w", "mine", 0)
			return nil
		})
		return err
	}, "w")
	if !errors.Is(err, redis.TxFailedErr) {
		t.Errorf("WATCH w in db 2, MOVE w 2 from db 0, EXEC: %v, want the transaction to fail", err)
	}
}

func cmdVal(c redis.Cmder) string {
	switch c := c.(type) {
	case *redis.StatusCmd:
		return c.Val()
	case *redis.IntCmd:
		return fmt.Sprint(c.Val())
	case *redis.BoolCmd:
		return fmt.Sprint(c.Val())
	case *redis.StringCmd:
		return c.Val()
	case *redis.SliceCmd:
		return fmt.Sprint(c.Val())
	case *redis.DurationCmd:
		return c.Val().String()
	}
	return fmt.Sprintf("%T", c)
}

// TestStringsKeysRestart writes with every kind of string and key command,
// restarts the server, and checks that everything acknowledged is there.
func TestStringsKeysRestart(t *testing.T) {
	ts := startServer(t, Config{})
	rc := newStringsClient(t, ts)
	ctx := context.Background()

	pipe := rc.Pipeline()
	pipe.MSet(ctx, "m1", "a", "m2", "b", "gone", "x")
	pipe.SetNX(ctx, "nx", "1", 0)
	pipe.SetEx(ctx, "ex", "v", time.Hour)
	pipe.Do(ctx, "PSETEX", "px", 3600000, "v")
	pipe.IncrBy(ctx, "n", 41)
	pipe.Incr(ctx, "n")
	pipe.IncrByFloat(ctx, "f", 1.5)
	pipe.Do(ctx, "INCRBYFLOAT", "f", "12.34567890123456789")
	pipe.Append(ctx, "ap", "hello")
	pipe.SetRange(ctx, "ap", 10, "!")
	pipe.ExpireAt(ctx, "m1", time.Unix(4102444800, 0))
	pipe.PExpireAt(ctx, "m2", time.UnixMilli(4102444800123))
	pipe.Rename(ctx, "m2", "m2r")
	pipe.Copy(ctx, "m1", "m1c", 3, false)
	pipe.Move(ctx, "nx", 4)
	pipe.Del(ctx, "gone")
	pipe.GetEx(ctx, "ex", 2*time.Hour)
	pipe.SetEx(ctx, "pers", "v", time.Hour)
	pipe.Persist(ctx, "pers")
	pipe.Expire(ctx, "n", -time.Second) // in the past: deletes
	pipe.GetSet(ctx, "gs", "new")
	for i := range 200 {
		pipe.Set(ctx, fmt.Sprintf("bulk:%03d", i), i, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) { // GETSET of a new key is nil
		t.Fatal(err)
	}

	ts.restart()
	rc = newStringsClient(t, ts)

	get := func(db int, key string) (string, time.Duration) {
		t.Helper()
		c := redis.NewClient(&redis.Options{Addr: ts.addr, DB: db,
			MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
		defer c.Close()
		v, err := c.Get(ctx, key).Result()
		if errors.Is(err, redis.Nil) {
			return "<nil>", 0
		}
		if err != nil {
			t.Fatalf("db %d GET %s: %v", db, key, err)
		}
		return v, c.PTTL(ctx, key).Val()
	}
	for _, tc := range []struct {
		db        int
		key, want string
		ttl       bool
	}{
		{0, "m1", "a", true}, {0, "m2", "<nil>", false}, {0, "m2r", "b", true}, {3, "m1c", "a", true},
		{0, "nx", "<nil>", false}, {4, "nx", "1", false}, {0, "ex", "v", true}, {0, "px", "v", true},
		{0, "n", "<nil>", false}, {0, "f", "13.84567890123456789", false},
		{0, "ap", "hello\x00\x00\x00\x00\x00!", false}, {0, "gone", "<nil>", false},
		{0, "pers", "v", false}, {0, "gs", "new", false}, {0, "bulk:199", "199", false},
	} {
		v, ttl := get(tc.db, tc.key)
		if v != tc.want || (ttl > 0) != tc.ttl {
			t.Errorf("after restart, db %d %s = %q (pttl %v), want %q (ttl %v)", tc.db, tc.key, v, ttl, tc.want, tc.ttl)
		}
	}
	if at := rc.PExpireTime(ctx, "m2r").Val(); at != 4102444800123*time.Millisecond {
		t.Errorf("PEXPIRETIME m2r after RENAME and restart = %v", at)
	}
	if ttl := rc.TTL(ctx, "ex").Val(); ttl <= time.Hour || ttl > 2*time.Hour {
		t.Errorf("TTL ex after GETEX EX 2h and restart = %v", ttl)
	}
	if n := rc.DBSize(ctx).Val(); n != 200+8 {
		t.Errorf("DBSIZE after restart = %d, want 208", n)
	}
	keys, err := rc.Keys(ctx, "bulk:*").Result()
	if err != nil || len(keys) != 200 {
		t.Errorf("KEYS bulk:* after restart: %d keys, %v", len(keys), err)
	}
}

// TestStringsConcurrentIncr checks INCR and INCRBYFLOAT from many clients
// at once lose no increment.
func TestStringsConcurrentIncr(t *testing.T) {
	ts := startServer(t, Config{})
	rc := newStringsClient(t, ts)
	ctx := context.Background()
	const clients, each = 8, 50
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pipe := rc.Pipeline()
			for range each {
				pipe.Incr(ctx, "ci")
				pipe.IncrByFloat(ctx, "cf", 0.5)
			}
			if _, err := pipe.Exec(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if v := rc.Get(ctx, "ci").Val(); v != fmt.Sprint(clients*each) {
		t.Errorf("INCR total = %s, want %d", v, clients*each)
	}
	if v := rc.Get(ctx, "cf").Val(); v != fmt.Sprint(clients*each/2) {
		t.Errorf("INCRBYFLOAT total = %s, want %d", v, clients*each/2)
	}
}

// TestScanIteration scans a keyspace of short keys (inline cursors) and
// long ones (table cursors) with a small COUNT and checks every key comes
// back exactly once, with MATCH and TYPE too; a scan of short keys goes on
// across a restart.
func TestScanIteration(t *testing.T) {
	ts := startServer(t, Config{})
	rc := newStringsClient(t, ts)
	ctx := context.Background()
	want := map[string]bool{}
	pipe := rc.Pipeline()
	for i := range 300 {
		k := fmt.Sprintf("%d", i) // up to 3 bytes: inline cursors
		if i%2 == 1 {
			k = fmt.Sprintf("a-rather-long-key-name:%05d", i) // table cursors
		}
		want[k] = true
		pipe.Set(ctx, k, "v", 0)
	}
	pipe.RPush(ctx, "zlist", "x") // only if the list group is in; ignored otherwise
	if _, err := pipe.Exec(ctx); err != nil && !strings.Contains(err.Error(), "unknown command") {
		t.Fatal(err)
	}
	hasList := rc.Exists(ctx, "zlist").Val() == 1

	scanAll := func(match, typ string, count int64) []string {
		t.Helper()
		var got []string
		var cursor uint64
		for calls := 0; ; calls++ {
			if calls > 1000 {
				t.Fatal("SCAN does not end")
			}
			var keys []string
			var err error
			if typ != "" {
				keys, cursor, err = rc.ScanType(ctx, cursor, match, count, typ).Result()
			} else {
				keys, cursor, err = rc.Scan(ctx, cursor, match, count).Result()
			}
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(keys)) > count {
				t.Fatalf("SCAN COUNT %d returned %d keys", count, len(keys))
			}
			if cursor > math.MaxInt64 {
				t.Fatalf("cursor %d does not fit a signed 64-bit integer", cursor)
			}
			got = append(got, keys...)
			if cursor == 0 {
				return got
			}
		}
	}
	got := scanAll("", "", 7)
	slices.Sort(got)
	if len(got) != len(want)+boolToIntT(hasList) || len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Fatalf("SCAN returned %d keys (%d distinct), want %d", len(got), len(slices.Compact(slices.Clone(got))), len(want))
	}
	for _, k := range got {
		if !want[k] && k != "zlist" {
			t.Fatalf("SCAN returned %q, never written", k)
		}
	}
	if got := scanAll("a-rather-*", "", 5); len(got) != 150 {
		t.Errorf("SCAN MATCH a-rather-*: %d keys, want 150", len(got))
	}
	if got := scanAll("", "string", 9); len(got) != 300 {
		t.Errorf("SCAN TYPE string: %d keys, want 300", len(got))
	}

	// Keys made of short names only: a scan resumes after a restart.
	rc.FlushAll(ctx)
	for i := range 50 {
		rc.Set(ctx, fmt.Sprintf("s%02d", i), "v", 0)
	}
	first, cursor, err := rc.Scan(ctx, 0, "", 10).Result()
	if err != nil || cursor == 0 {
		t.Fatal(first, cursor, err)
	}
	ts.restart()
	rc = newStringsClient(t, ts)
	seen := map[string]bool{}
	for _, k := range first {
		seen[k] = true
	}
	for cursor != 0 {
		var keys []string
		if keys, cursor, err = rc.Scan(ctx, cursor, "", 10).Result(); err != nil {
			t.Fatalf("SCAN after restart: %v", err)
		}
		for _, k := range keys {
			if seen[k] {
				t.Fatalf("SCAN returned %q twice across the restart", k)
			}
			seen[k] = true
		}
	}
	if len(seen) != 50 {
		t.Errorf("SCAN across a restart saw %d keys, want 50", len(seen))
	}
}

func boolToIntT(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestCursorTable(t *testing.T) {
	tab := newCursorTable(3, 1<<20)
	for _, cur := range [][]byte{{0}, {'a', 0}, []byte("abcdef\x00"), {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		[]byte("eight by"), []byte(strings.Repeat("k", 1000))} {
		text := tab.encode(cur)
		got, ok := tab.decode([]byte(text))
		if !ok || string(got) != string(cur) {
			t.Errorf("decode(encode(%q)) = %q (%s), %v", cur, got, text, ok)
		}
	}
	if tab.encode(nil) != "0" {
		t.Error("encode(nil) != 0")
	}
	for _, arg := range []string{"0", ""} {
		if cur, ok := tab.decode([]byte(arg)); !ok || cur != nil {
			t.Errorf("decode(%q) = %q, %v; want a fresh scan", arg, cur, ok)
		}
	}
	for _, arg := range []string{"1", "-1", "+1", " 1", "abc", "1.5", "18446744073709551615", "18446744073709551616",
		fmt.Sprint(uint64(1) << 63), fmt.Sprint(uint64(1)<<56 | 1), fmt.Sprint(uint64(1) << 59)} {
		if _, ok := tab.decode([]byte(arg)); ok {
			t.Errorf("decode(%q) accepted", arg)
		}
	}
	// Table cursors are evicted oldest first.
	long := func(i int) []byte { return []byte(fmt.Sprintf("a long cursor %d", i)) }
	var texts []string
	for i := range 5 {
		texts = append(texts, tab.encode(long(i)))
	}
	for i, text := range texts {
		_, ok := tab.decode([]byte(text))
		if ok != (i >= 2) {
			t.Errorf("cursor %d of 5 in a table of 3: found %v", i, ok)
		}
	}
	// And by size: one cursor over the byte budget evicts all others.
	small := newCursorTable(100, 64)
	a := small.encode([]byte(strings.Repeat("a", 40)))
	b := small.encode([]byte(strings.Repeat("b", 40)))
	if _, ok := small.decode([]byte(a)); ok {
		t.Error("byte budget not enforced")
	}
	if _, ok := small.decode([]byte(b)); !ok {
		t.Error("newest cursor evicted")
	}
}

// TestPipelinedGets: a pipeline of GETs and writes, whose keys the server
// warms as a group before running them (client.warmKeys), answers exactly
// as the commands run one by one would: writes between them are seen by the GETs after them
// and not before, a GET of another type fails alone, and GETs after a
// SELECT read the new database. The model is the pipeline run in order.
func TestPipelinedGets(t *testing.T) {
	ts := startServer(t, Config{})
	rc := newStringsClient(t, ts)
	ctx := context.Background()
	for i := range 40 {
		rc.Set(ctx, fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i), 0)
	}
	rc.HSet(ctx, "h", "f", "v")

	model := map[int]map[string]string{0: {}, 1: {}}
	for i := range 40 {
		model[0][fmt.Sprintf("k%d", i)] = fmt.Sprintf("v%d", i)
	}
	db := 0
	pipe := rc.Pipeline()
	var gets []*redis.StringCmd
	var want []string
	get := func(k string) {
		gets = append(gets, pipe.Get(ctx, k))
		switch v, ok := model[db][k]; {
		case k == "h" && db == 0:
			want = append(want, "WRONGTYPE")
		case ok:
			want = append(want, v)
		default:
			want = append(want, "nil")
		}
	}
	for i := range 40 { // more than one warmed group, from the first command on
		get(fmt.Sprintf("k%d", (i*7)%45))
	}
	pipe.Set(ctx, "k3", "new", 0)
	model[0]["k3"] = "new"
	pipe.Del(ctx, "k4")
	delete(model[0], "k4")
	for _, k := range []string{"k3", "k4", "h", "k5", "k3"} {
		get(k)
	}
	pipe.Select(ctx, 1)
	db = 1
	pipe.Set(ctx, "k5", "one", 0)
	model[1]["k5"] = "one"
	for _, k := range []string{"k5", "k6", "k5"} {
		get(k)
	}
	pipe.Exec(ctx)
	for i, cmd := range gets {
		got := cmd.Val()
		switch err := cmd.Err(); {
		case err == redis.Nil:
			got = "nil"
		case err != nil:
			got, _, _ = strings.Cut(err.Error(), " ")
		}
		if got != want[i] {
			t.Errorf("GET %d (%v) = %q, want %q", i, cmd.Args(), got, want[i])
		}
	}
}

// TestPipelinedMemberCommands: a pipeline of commands on members of
// hashes, sets and sorted sets, whose member rows the server warms as a
// group first (client.warmKeys, keyspace.Store.WarmMembers), answers
// byte for byte as the same commands sent one at a time to a second server
// do: through keys of the wrong type, a collection deleted and made again
// as another type mid-pipeline, members too long for the warm's budget,
// more commands than one warm covers, and a SELECT.
func TestPipelinedMemberCommands(t *testing.T) {
	var cmds [][]string
	add := func(args ...string) { cmds = append(cmds, args) }
	long := strings.Repeat("m", 3000)
	add("SET", "str", "v")
	add("RPUSH", "list", "a")
	for i := range 40 { // several warmed groups, from the first command on
		add("HSET", "h", fmt.Sprintf("f%d", i%13), fmt.Sprint(i))
		add("SADD", "s", fmt.Sprintf("m%d", i%11))
		add("ZADD", "z", fmt.Sprint(i), fmt.Sprintf("z%d", i%7))
	}
	for i := range 20 {
		add("HGET", "h", fmt.Sprintf("f%d", i))
		add("SISMEMBER", "s", fmt.Sprintf("m%d", i))
		add("ZSCORE", "z", fmt.Sprintf("z%d", i))
		add("ZINCRBY", "z", "1.5", fmt.Sprintf("z%d", i))
		add("HINCRBY", "h", fmt.Sprintf("n%d", i%3), "2")
	}
	for _, k := range []string{"str", "list", "absent"} {
		add("HSET", k, "f", "v")
		add("SADD", k, "m")
		add("ZSCORE", k, "m")
		add("HGET", k, "f")
	}
	add("DEL", "h")
	add("SADD", "h", "f1")
	add("HGET", "h", "f1")
	add("SISMEMBER", "h", "f1")
	add("HSET", "h2", long, "v")
	add("HGET", "h2", long)
	add("SADD", "s", long)
	add("SISMEMBER", "s", long)
	add("ZADD", "z", "9", long)
	add("ZSCORE", "z", long)
	add("HDEL", "h2", long)
	add("HEXISTS", "h2", long)
	add("SELECT", "1")
	add("HSET", "h", "f1", "other")
	add("HGET", "h", "f1")
	add("SISMEMBER", "s", "m1")

	piped := startServer(t, Config{})
	c := resptest.Dial(t, piped.addr)
	var buf []byte
	for _, args := range cmds {
		buf = resptest.AppendCommand(buf, args...)
	}
	c.SendRaw(buf)
	got := make([][]byte, len(cmds))
	for i := range cmds {
		got[i] = c.ReadReply()
	}

	oneByOne := startServer(t, Config{})
	d := resptest.Dial(t, oneByOne.addr)
	for i, args := range cmds {
		if want := d.Do(args...); !bytes.Equal(got[i], want) {
			t.Errorf("%q pipelined = %q, alone = %q", args, got[i], want)
		}
	}
}
