package resp

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func newHashSetClient(t *testing.T, ts *testServer) *redis.Client {
	t.Helper()
	// A generous read timeout: TestRandomMembers reads a reply of a million
	// members, which under -race on a loaded machine took over go-redis's
	// default 3 s.
	rdb := redis.NewClient(&redis.Options{Addr: ts.addr, Protocol: 2, DisableIdentity: true, ReadTimeout: 30 * time.Second})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// TestHashSetPipelineAndRestart writes hashes and sets in a pipeline,
// restarts the server, and checks that every acknowledged write is there.
func TestHashSetPipelineAndRestart(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	rdb := newHashSetClient(t, ts)

	cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range 100 {
			p.HSet(ctx, "h", fmt.Sprintf("f%03d", i), fmt.Sprintf("v%d", i))
			p.SAdd(ctx, "s", fmt.Sprintf("m%03d", i))
		}
		p.HIncrBy(ctx, "h", "counter", 7)
		p.HIncrByFloat(ctx, "h", "float", 0.1)
		p.HIncrByFloat(ctx, "h", "float", 0.2)
		p.HDel(ctx, "h", "f000")
		p.SRem(ctx, "s", "m000")
		p.SAdd(ctx, "t", "m001", "m002", "other")
		p.SInterStore(ctx, "inter", "s", "t")
		p.SMove(ctx, "t", "moved", "other")
		p.HGet(ctx, "h", "f001")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := cmds[len(cmds)-1].(*redis.StringCmd).Val(); got != "v1" {
		t.Fatalf("pipelined HGET = %q", got)
	}

	ts.restart()
	rdb = newHashSetClient(t, ts)
	if n := rdb.HLen(ctx, "h").Val(); n != 101 {
		t.Errorf("HLEN after restart = %d, want 101", n)
	}
	if v := rdb.HGet(ctx, "h", "float").Val(); v != "0.3" {
		t.Errorf("HINCRBYFLOAT result after restart = %q, want 0.3", v)
	}
	if v := rdb.HGet(ctx, "h", "counter").Val(); v != "7" {
		t.Errorf("HINCRBY result after restart = %q", v)
	}
	if rdb.HExists(ctx, "h", "f000").Val() {
		t.Error("HDEL'd field is back after restart")
	}
	if n := rdb.SCard(ctx, "s").Val(); n != 99 {
		t.Errorf("SCARD after restart = %d, want 99", n)
	}
	if got := rdb.SMembers(ctx, "inter").Val(); !equalSorted(got, []string{"m001", "m002"}) {
		t.Errorf("SINTERSTORE result after restart = %v", got)
	}
	if got := rdb.SMembers(ctx, "moved").Val(); !equalSorted(got, []string{"other"}) {
		t.Errorf("SMOVE destination after restart = %v", got)
	}
	if rdb.SIsMember(ctx, "t", "other").Val() {
		t.Error("SMOVE source still has the member after restart")
	}
}

// TestHashSetMultiExec runs set algebra and hash writes in MULTI/EXEC, and
// checks that WATCH on a set sees a SINTERSTORE into it.
func TestHashSetMultiExec(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	rdb := newHashSetClient(t, ts)
	rdb.SAdd(ctx, "a", "1", "2", "3")
	rdb.SAdd(ctx, "b", "2", "3", "4")

	cmds, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.SInterStore(ctx, "i", "a", "b")
		p.SUnionStore(ctx, "u", "a", "b")
		p.SDiffStore(ctx, "d", "a", "b")
		p.SInterCard(ctx, 0, "a", "b")
		p.SMembers(ctx, "i")
		p.HSet(ctx, "h", "card", "2")
		p.HIncrBy(ctx, "h", "card", 1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := cmds[0].(*redis.IntCmd).Val(); n != 2 {
		t.Errorf("SINTERSTORE in EXEC = %d", n)
	}
	if n := cmds[1].(*redis.IntCmd).Val(); n != 4 {
		t.Errorf("SUNIONSTORE in EXEC = %d", n)
	}
	if n := cmds[3].(*redis.IntCmd).Val(); n != 2 {
		t.Errorf("SINTERCARD in EXEC = %d", n)
	}
	// The transaction sees its own earlier writes.
	if got := cmds[4].(*redis.StringSliceCmd).Val(); !equalSorted(got, []string{"2", "3"}) {
		t.Errorf("SMEMBERS of a set stored earlier in EXEC = %v", got)
	}
	if n := cmds[6].(*redis.IntCmd).Val(); n != 3 {
		t.Errorf("HINCRBY after HSET in EXEC = %d", n)
	}
	if got := rdb.SMembers(ctx, "d").Val(); !equalSorted(got, []string{"1"}) {
		t.Errorf("SDIFFSTORE after EXEC = %v", got)
	}

	// WATCH i; another client overwrites it with SINTERSTORE; EXEC fails.
	other := newHashSetClient(t, ts)
	err = rdb.Watch(ctx, func(tx *redis.Tx) error {
		if err := other.SInterStore(ctx, "i", "a").Err(); err != nil {
			return err
		}
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.SAdd(ctx, "i", "x")
			return nil
		})
		return err
	}, "i")
	if err != redis.TxFailedErr {
		t.Fatalf("EXEC after a watched key was changed by SINTERSTORE: err = %v", err)
	}
	if rdb.SIsMember(ctx, "i", "x").Val() {
		t.Error("the aborted transaction's SADD happened")
	}
	// WATCH on SINTERCARD's keys (a numkeys command): a write to a key it
	// names through the keys func makes EXEC fail too.
	err = rdb.Watch(ctx, func(tx *redis.Tx) error {
		if err := other.SAdd(ctx, "b", "1").Err(); err != nil {
			return err
		}
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.SInterCard(ctx, 0, "a", "b")
			return nil
		})
		return err
	}, "b")
	if err != redis.TxFailedErr {
		t.Fatalf("EXEC after a watched key was changed by SADD: err = %v", err)
	}
}

// TestHScanBigHash iterates a 10,000-field hash with HSCAN, through cursors
// both inline (short names) and from the table (long names), and checks
// that every field comes back exactly once with its value. SSCAN likewise.
func TestHScanBigHash(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	rdb := newHashSetClient(t, ts)
	const n = 10000
	want := make(map[string]string, n)
	var args []any
	for i := range n {
		f := strconv.Itoa(i) // short names: inline cursors
		if i%2 == 1 {
			f = fmt.Sprintf("a-rather-long-field-name-%05d", i) // table cursors
		}
		want[f] = "v" + strconv.Itoa(i)
		args = append(args, f, want[f])
	}
	if err := rdb.HSet(ctx, "big", args...).Err(); err != nil {
		t.Fatal(err)
	}
	members := make([]any, 0, n)
	for f := range want {
		members = append(members, f)
	}
	if err := rdb.SAdd(ctx, "bigset", members...).Err(); err != nil {
		t.Fatal(err)
	}

	for _, count := range []int64{0, 7, 100, 20000} {
		seen := make(map[string]int, n)
		var cursor uint64
		calls := 0
		for {
			fields, next, err := rdb.HScan(ctx, "big", cursor, "", count).Result()
			if err != nil {
				t.Fatalf("COUNT %d: HSCAN cursor %d: %v", count, cursor, err)
			}
			calls++
			if len(fields)%2 != 0 {
				t.Fatalf("HSCAN returned %d items, not pairs", len(fields))
			}
			for i := 0; i < len(fields); i += 2 {
				seen[fields[i]]++
				if want[fields[i]] != fields[i+1] {
					t.Fatalf("HSCAN field %q = %q, want %q", fields[i], fields[i+1], want[fields[i]])
				}
			}
			if next == 0 {
				break
			}
			cursor = next
		}
		checkOnce(t, fmt.Sprintf("HSCAN COUNT %d", count), seen, want)
		if count == 7 && calls < n/7 {
			t.Errorf("HSCAN COUNT 7 took %d calls for %d fields", calls, n)
		}

		seen = make(map[string]int, n)
		cursor = 0
		for {
			ms, next, err := rdb.SScan(ctx, "bigset", cursor, "", count).Result()
			if err != nil {
				t.Fatalf("SSCAN: %v", err)
			}
			for _, m := range ms {
				seen[m]++
			}
			if next == 0 {
				break
			}
			cursor = next
		}
		checkOnce(t, fmt.Sprintf("SSCAN COUNT %d", count), seen, want)
	}

	// MATCH filters, and a scan survives writes: fields present throughout
	// are returned exactly once.
	seen := make(map[string]int)
	var cursor uint64
	for i := 0; ; i++ {
		fields, next, err := rdb.HScan(ctx, "big", cursor, "a-rather-*", 50).Result()
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < len(fields); j += 2 {
			seen[fields[j]]++
		}
		rdb.HSet(ctx, "big", fmt.Sprintf("zz-added-%d", i), "x")
		if next == 0 {
			break
		}
		cursor = next
	}
	for f := range want {
		if strings.HasPrefix(f, "a-rather-") && seen[f] != 1 {
			t.Fatalf("HSCAN MATCH during writes returned %q %d times", f, seen[f])
		}
	}
	for f := range seen {
		if !strings.HasPrefix(f, "a-rather-") {
			t.Fatalf("HSCAN MATCH returned %q", f)
		}
	}
}

func checkOnce(t *testing.T, what string, seen map[string]int, want map[string]string) {
	t.Helper()
	if len(seen) != len(want) {
		t.Fatalf("%s returned %d distinct names, want %d", what, len(seen), len(want))
	}
	for f, k := range seen {
		if k != 1 {
			t.Fatalf("%s returned %q %d times", what, f, k)
		}
		if _, ok := want[f]; !ok {
			t.Fatalf("%s returned %q, which is not there", what, f)
		}
	}
}

// TestElemCursorTable checks the integer cursor encoding: inline cursors
// round-trip without state, long ones through the table until evicted,
// and anything else is invalid.
func TestElemCursorTable(t *testing.T) {
	tab := newCursorTable(3, 1<<20)
	for _, cur := range [][]byte{nil, {0}, []byte("a\x00"), []byte("abcdef\x00"), {0xff, 0, 0, 0, 0, 0, 0}} {
		s := tab.encode(cur)
		got, ok := tab.decode([]byte(s))
		if !ok || string(got) != string(cur) || (cur == nil) != (got == nil) {
			t.Errorf("inline %q: encode %s, decode %q %v", cur, s, got, ok)
		}
		if v, err := strconv.ParseUint(s, 10, 64); err != nil || v >= 1<<63 {
			t.Errorf("cursor %s is not below 2^63", s)
		}
	}
	if len(tab.ids) != 0 {
		t.Errorf("inline cursors used the table: %d entries", len(tab.ids))
	}
	var issued []string
	for i := range 5 {
		cur := []byte(fmt.Sprintf("long-cursor-%d\x00", i))
		s := tab.encode(cur)
		issued = append(issued, s)
		if got, ok := tab.decode([]byte(s)); !ok || string(got) != string(cur) {
			t.Errorf("table cursor %s: decode %q %v", s, got, ok)
		}
	}
	if _, ok := tab.decode([]byte(issued[0])); ok {
		t.Error("the oldest table cursor was not evicted")
	}
	if _, ok := tab.decode([]byte(issued[4])); !ok {
		t.Error("the newest table cursor was evicted")
	}
	for _, bad := range []string{"x", "-1", "+1", " 0", "1", "18446744073709551616", strconv.FormatUint(1<<59, 10),
		strconv.FormatUint(1<<56|1, 10), strconv.FormatUint(1<<63, 10)} {
		if _, ok := tab.decode([]byte(bad)); ok {
			t.Errorf("cursor %q decoded", bad)
		}
	}
	if cur, ok := tab.decode([]byte("")); !ok || cur != nil {
		t.Errorf(`cursor "" (strtoul reads 0) = %q %v`, cur, ok)
	}
}

// TestRandomMembers checks the properties of random replies that the
// corpus compares only by length, and the guard on huge negative counts.
func TestRandomMembers(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	rdb := newHashSetClient(t, ts)
	fields := map[string]string{}
	var members []any
	for i := range 20 {
		fields[fmt.Sprintf("f%d", i)] = fmt.Sprintf("v%d", i)
		members = append(members, fmt.Sprintf("m%d", i))
	}
	rdb.HSet(ctx, "h", fields)
	rdb.SAdd(ctx, "s", members...)

	got := rdb.HRandField(ctx, "h", 5).Val()
	if len(got) != 5 || hasDup(got) {
		t.Errorf("HRANDFIELD 5 = %v: want 5 distinct fields", got)
	}
	for _, f := range got {
		if _, ok := fields[f]; !ok {
			t.Errorf("HRANDFIELD returned %q", f)
		}
	}
	kv := rdb.HRandFieldWithValues(ctx, "h", -50).Val()
	if len(kv) != 50 {
		t.Errorf("HRANDFIELD -50 WITHVALUES gave %d pairs", len(kv))
	}
	for _, p := range kv {
		if fields[p.Key] != p.Value {
			t.Errorf("HRANDFIELD pair %q=%q", p.Key, p.Value)
		}
	}
	ms := rdb.SRandMemberN(ctx, "s", 7).Val()
	if len(ms) != 7 || hasDup(ms) {
		t.Errorf("SRANDMEMBER 7 = %v", ms)
	}
	if n := len(rdb.SRandMemberN(ctx, "s", -100).Val()); n != 100 {
		t.Errorf("SRANDMEMBER -100 gave %d", n)
	}
	popped := rdb.SPopN(ctx, "s", 8).Val()
	if len(popped) != 8 || hasDup(popped) {
		t.Errorf("SPOP 8 = %v", popped)
	}
	for _, m := range popped {
		if rdb.SIsMember(ctx, "s", m).Val() {
			t.Errorf("SPOP'd member %q is still in the set", m)
		}
	}
	if n := rdb.SCard(ctx, "s").Val(); n != 12 {
		t.Errorf("SCARD after SPOP 8 = %d", n)
	}

	// Huge negative counts are refused rather than built in memory.
	for _, args := range [][]any{
		{"hrandfield", "h", "-9223372036854775807"},
		{"hrandfield", "h", "-1048577", "withvalues"},
		{"srandmember", "s", "-9223372036854775807"},
	} {
		err := rdb.Do(ctx, args...).Err()
		if err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("%v: err = %v, want out of range", args, err)
		}
	}
	if picks, err := rdb.SRandMemberN(ctx, "s", -maxRandPicks).Result(); err != nil || len(picks) != maxRandPicks {
		t.Errorf("SRANDMEMBER -%d gave %d: %v", maxRandPicks, len(picks), err)
	}
	// A reply over the byte budget is refused before it is written.
	big := strings.Repeat("x", 1<<20)
	rdb.HSet(ctx, "hbig", "f", big)
	err := rdb.Do(ctx, "hrandfield", "hbig", "-300", "withvalues").Err()
	if err == nil || !strings.Contains(err.Error(), "256 MiB") {
		t.Errorf("HRANDFIELD of a 300 MiB reply: err = %v", err)
	}
	if v := rdb.HRandFieldWithValues(ctx, "hbig", -3).Val(); len(v) != 3 || v[2].Value != big {
		t.Errorf("HRANDFIELD -3 WITHVALUES of a big value: %d pairs", len(v))
	}
	// The connection is still usable.
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
}

func hasDup(xs []string) bool {
	s := slices.Clone(xs)
	slices.Sort(s)
	return len(slices.Compact(s)) != len(xs)
}

func equalSorted(got, want []string) bool {
	g := slices.Clone(got)
	slices.Sort(g)
	w := slices.Clone(want)
	slices.Sort(w)
	return slices.Equal(g, w)
}
