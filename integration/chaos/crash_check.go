package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// crashCheck is what one check after a restart found.
type crashCheck struct {
	checked  int // acknowledged writes made since the previous check
	lost     int // acknowledged writes whose effect is missing
	inflight int // writes whose reply never came
	applied  int // of them, the ones the store turned out to have
	problems []string
	failures int
}

const crashMaxProblems = 20 // failures described per check; the rest are counted

func (k *crashCheck) fail(format string, args ...any) {
	k.failures++
	if len(k.problems) < crashMaxProblems {
		k.problems = append(k.problems, fmt.Sprintf(format, args...))
	}
}

// crashRead is one writer's keys as a check read them.
type crashRead struct {
	strs *redis.SliceCmd
	tx   *redis.StringCmd
	cols map[int]*crashColsRead
}

type crashColsRead struct {
	hash                     *redis.MapStringStringCmd
	list, set                *redis.StringSliceCmd
	zset                     *redis.ZSliceCmd
	hlen, llen, zcard, scard *redis.IntCmd
}

// checkCrash reads, through rdb, the shared counters and each writer's
// strings, transaction counter and collections of cycles, compares them
// with the model, and then resolves every in-flight write to what the store
// holds, so the next check expects exactly that. counters holds the shared
// counters' values at the previous check and is updated. An error means the
// store could not be read.
func checkCrash(ctx context.Context, rdb *redis.Client, writers []*crashWriter, counters *[crashCounters]int64, cycles []int) (*crashCheck, error) {
	k := &crashCheck{}
	if err := k.counters(ctx, rdb, writers, counters); err != nil {
		return nil, err
	}
	for _, w := range writers {
		r, err := readCrash(ctx, rdb, w, cycles)
		if err != nil {
			return nil, err
		}
		k.writer(w, r, cycles)
	}
	return k, nil
}

// counters checks each shared counter against the INCRs acknowledged since
// the previous check, allowing the in-flight ones.
func (k *crashCheck) counters(ctx context.Context, rdb *redis.Client, writers []*crashWriter, base *[crashCounters]int64) error {
	keys := make([]string, crashCounters)
	for c := range keys {
		keys[c] = crashCounterKey(c)
	}
	vals, err := rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return err
	}
	for c, v := range vals {
		got, err := crashInt(v)
		if err != nil {
			k.fail("%s: %v", keys[c], err)
			continue
		}
		want, slack := base[c], int64(0)
		for _, w := range writers {
			want += w.incrs[c]
			w.incrs[c] = 0
			if op := w.inflight; op != nil && op.kind == opIncr && op.key == c {
				slack++
			}
		}
		if got < want {
			k.lost += int(want - got)
		}
		if got < want || got > want+slack {
			k.fail("%s = %d, want %d acknowledged INCRs plus at most %d in flight", keys[c], got, want, slack)
		}
		base[c] = got
	}
	return nil
}

// crashInt parses a counter read by MGET; nil is a counter never set.
func crashInt(v any) (int64, error) {
	if v == nil {
		return 0, nil
	}
	s, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("unexpected %T %v", v, v)
	}
	return strconv.ParseInt(s, 10, 64)
}

func readCrash(ctx context.Context, rdb *redis.Client, w *crashWriter, cycles []int) (*crashRead, error) {
	p := rdb.Pipeline()
	keys := make([]string, crashStrKeys)
	for i := range keys {
		keys[i] = crashStrKey(w.id, i)
	}
	r := &crashRead{strs: p.MGet(ctx, keys...), tx: p.Get(ctx, crashTxKey(w.id)), cols: map[int]*crashColsRead{}}
	for _, c := range cycles {
		h, l, z, x := crashColKey("h", c, w.id), crashColKey("l", c, w.id), crashColKey("z", c, w.id), crashColKey("x", c, w.id)
		r.cols[c] = &crashColsRead{
			hash: p.HGetAll(ctx, h), hlen: p.HLen(ctx, h),
			list: p.LRange(ctx, l, 0, -1), llen: p.LLen(ctx, l),
			zset: p.ZRangeWithScores(ctx, z, 0, -1), zcard: p.ZCard(ctx, z),
			set: p.SMembers(ctx, x), scard: p.SCard(ctx, x),
		}
	}
	cmds, _ := p.Exec(ctx)
	for _, c := range cmds {
		if err := c.Err(); err != nil && !errors.Is(err, redis.Nil) {
			return nil, fmt.Errorf("%v: %w", c.Args(), err)
		}
	}
	return r, nil
}

// writer checks one writer's keys and resolves its in-flight write.
func (k *crashCheck) writer(w *crashWriter, r *crashRead, cycles []int) {
	k.checked += w.acked
	applied := w.applied(r)
	if w.inflight != nil {
		k.inflight++
		if applied {
			k.applied++
		}
	}
	// pending is the in-flight write's value when the store has it: the one
	// value whose absence elsewhere breaks atomicity rather than loses an
	// acknowledged write.
	pending := ""
	if applied {
		pending = crashValue(w.id, w.inflight.seq)
	}
	want := w.state.with(w.inflight, applied)
	k.strings(w, r, &want, pending)
	tx, _ := strconv.ParseInt(r.tx.Val(), 10, 64)
	if r.tx.Err() != nil && !errors.Is(r.tx.Err(), redis.Nil) || tx != want.tx {
		if tx < w.state.tx {
			k.lost += int(w.state.tx - tx)
		}
		k.fail("%s = %q, want %d acknowledged MULTI/EXEC blocks (in flight: %v)", crashTxKey(w.id), r.tx.Val(), want.tx, w.inflight)
	}
	for _, c := range cycles {
		if cols := want.cols[c]; cols != nil {
			k.collections(w, c, r.cols[c], cols, pending)
		}
	}
	w.state, w.inflight, w.acked = want, nil, 0
}

// applied tells whether the store has w's in-flight write, from the one
// place that decides it: the transaction counter for a MULTI/EXEC block
// (whose other effects must then all agree), else the write's own key.
func (w *crashWriter) applied(r *crashRead) bool {
	op := w.inflight
	if op == nil || op.kind == opIncr {
		return false
	}
	v := crashValue(w.id, op.seq)
	cols := r.cols[op.cycle]
	switch op.kind {
	case opSet:
		return r.strs.Val()[op.key] == v
	case opMulti:
		tx, _ := strconv.ParseInt(r.tx.Val(), 10, 64)
		return tx == w.state.tx+1
	case opHSet:
		_, ok := cols.hash.Val()[strconv.FormatUint(op.seq, 10)]
		return ok
	case opRPush:
		l := cols.list.Val()
		return len(l) > 0 && l[len(l)-1] == v
	case opZAdd:
		return slices.ContainsFunc(cols.zset.Val(), func(z redis.Z) bool { return z.Member == v })
	}
	return slices.Contains(cols.set.Val(), v)
}

func (k *crashCheck) strings(w *crashWriter, r *crashRead, want *crashState, pending string) {
	for i, got := range r.strs.Val() {
		var exp any
		if want.strs[i] != 0 {
			exp = crashValue(w.id, want.strs[i])
		}
		if got == exp {
			continue
		}
		if exp != nil && exp != pending {
			k.lost++
		}
		k.fail("%s = %.40v, want %.40v (the newest acknowledged or applied in-flight SET; in flight: %v)",
			crashStrKey(w.id, i), got, exp, w.inflight)
	}
}

// collections compares one cycle's hash, list, sorted set and set of w with
// the model, and each one's count with its elements.
func (k *crashCheck) collections(w *crashWriter, c int, r *crashColsRead, want *crashCols, pending string) {
	hash := map[string]string{}
	for _, s := range want.hash {
		hash[strconv.FormatUint(s, 10)] = crashValue(w.id, s)
	}
	pendingField := ""
	if pending != "" {
		pendingField = strconv.FormatUint(w.inflight.seq, 10)
	}
	k.members(crashColKey("h", c, w.id), hash, r.hash.Val(), pendingField, r.hlen.Val())

	zset := map[string]string{}
	for _, s := range want.zset {
		zset[crashValue(w.id, s)] = strconv.FormatUint(s, 10)
	}
	gotZ := map[string]string{}
	for _, z := range r.zset.Val() {
		gotZ[fmt.Sprint(z.Member)] = strconv.FormatFloat(z.Score, 'f', -1, 64)
	}
	k.members(crashColKey("z", c, w.id), zset, gotZ, pending, r.zcard.Val())
	if n := len(r.zset.Val()); n != len(gotZ) {
		k.fail("%s: ZRANGE returned %d entries for %d members", crashColKey("z", c, w.id), n, len(gotZ))
	}

	set, gotSet := map[string]string{}, map[string]string{}
	for _, s := range want.set {
		set[crashValue(w.id, s)] = ""
	}
	for _, m := range r.set.Val() {
		gotSet[m] = ""
	}
	k.members(crashColKey("x", c, w.id), set, gotSet, pending, r.scard.Val())

	k.list(w, crashColKey("l", c, w.id), want.list, r.list.Val(), pending, r.llen.Val())
}

// members compares a collection read back (member → value) with want. A
// member that is wanted and missing is lost unless it is pending (then
// atomicity broke); a member nobody acknowledged or sent is a failure too.
func (k *crashCheck) members(key string, want, got map[string]string, pending string, count int64) {
	for m, v := range want {
		g, ok := got[m]
		if ok && g == v {
			continue
		}
		if !ok && m != pending {
			k.lost++
		}
		k.fail("%s: member %.40q is %.40q (present: %v), want %.40q", key, m, g, ok, v)
	}
	for m := range got {
		if _, ok := want[m]; !ok {
			k.fail("%s: holds %.40q, which no acknowledged or applied in-flight write added", key, m)
		}
	}
	if count != int64(len(got)) {
		k.fail("%s: count %d, but %d members read", key, count, len(got))
	}
}

// list checks that a list is exactly its acknowledged pushes in order (one
// writer pushes them one at a time), with the in-flight one when applied.
func (k *crashCheck) list(w *crashWriter, key string, want []uint64, got []string, pending string, count int64) {
	exp := make([]string, len(want))
	for i, s := range want {
		exp[i] = crashValue(w.id, s)
	}
	if count != int64(len(got)) {
		k.fail("%s: LLEN %d, but LRANGE returned %d elements", key, count, len(got))
	}
	if slices.Equal(exp, got) {
		return
	}
	for _, e := range exp {
		if e != pending && !slices.Contains(got, e) {
			k.lost++
		}
	}
	k.fail("%s: %d elements, want %d acknowledged pushes in order (in flight: %v)", key, len(got), len(exp), w.inflight)
}
