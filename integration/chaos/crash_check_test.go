package main

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestCrashCheckFindsLosses feeds the crash checker stores that lost an
// acknowledged write, applied half a transaction, hold a value nobody
// wrote, or miscount a collection, and stores that are right with the
// in-flight write applied or not: the checker must tell them apart, or the
// campaign could pass over a real loss.
func TestCrashCheckFindsLosses(t *testing.T) {
	const cycle = 1
	cases := []struct {
		name            string
		applied         bool // the store has the in-flight MULTI/EXEC
		edit            func(s *crashState)
		editRead        func(r *crashRead)
		wantFail        bool
		wantLost        int
		wantTxAfter     int64 // the model's transaction counter after the check
		wantAppliedSeen int
	}{
		{name: "exact, in flight not applied", wantTxAfter: 1},
		{name: "exact, in flight applied", applied: true, wantTxAfter: 2, wantAppliedSeen: 1},
		{name: "acknowledged hash field lost", wantFail: true, wantLost: 1, wantTxAfter: 1,
			edit: func(s *crashState) { s.cols[cycle].hash = s.cols[cycle].hash[1:] }},
		{name: "acknowledged SET lost", wantFail: true, wantLost: 1, wantTxAfter: 1,
			edit: func(s *crashState) { s.strs[1] = 0 }},
		{name: "half of the in-flight transaction", applied: true, wantFail: true, wantTxAfter: 2, wantAppliedSeen: 1,
			edit: func(s *crashState) { l := s.cols[cycle].list; s.cols[cycle].list = l[:len(l)-1] }},
		{name: "a set member nobody wrote", wantFail: true, wantTxAfter: 1,
			edit: func(s *crashState) { s.cols[cycle].set = append(s.cols[cycle].set, 999) }},
		{name: "HLEN disagrees with HGETALL", wantFail: true, wantTxAfter: 1,
			editRead: func(r *crashRead) { r.cols[cycle].hlen = redis.NewIntResult(r.cols[cycle].hlen.Val()+1, nil) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newCrashWriter(3, rand.New(rand.NewPCG(1, 2)))
			w.state.cols[cycle] = &crashCols{}
			for _, kind := range []crashOpKind{opSet, opHSet, opRPush, opZAdd, opSAdd, opMulti, opHSet} {
				w.seq++
				w.ack(crashOp{kind: kind, seq: w.seq, cycle: cycle, key: int(w.seq) % crashStrKeys})
			}
			w.seq++
			w.inflight = &crashOp{kind: opMulti, seq: w.seq, cycle: cycle, key: 0}
			store := w.state.with(w.inflight, tc.applied)
			if tc.edit != nil {
				// with shares the model's map when nothing was applied.
				store.cols = map[int]*crashCols{cycle: store.cols[cycle].clone()}
				tc.edit(&store)
			}
			r := crashView(w.id, &store, cycle)
			if tc.editRead != nil {
				tc.editRead(r)
			}
			k := &crashCheck{}
			k.writer(w, r, []int{cycle})
			if (k.failures > 0) != tc.wantFail || k.lost != tc.wantLost {
				t.Errorf("failures %d, lost %d; want failure %v, lost %d; problems: %q", k.failures, k.lost, tc.wantFail, tc.wantLost, k.problems)
			}
			if k.checked != 7 || k.inflight != 1 || k.applied != tc.wantAppliedSeen {
				t.Errorf("checked %d, in flight %d, applied %d; want 7, 1, %d", k.checked, k.inflight, k.applied, tc.wantAppliedSeen)
			}
			if w.inflight != nil || w.acked != 0 || w.state.tx != tc.wantTxAfter {
				t.Errorf("after the check: in flight %v, acked %d, tx %d; want nil, 0, %d", w.inflight, w.acked, w.state.tx, tc.wantTxAfter)
			}
		})
	}
}

// crashView is what a store holding s shows the checker for writer w.
func crashView(w int, s *crashState, cycle int) *crashRead {
	strs := make([]any, crashStrKeys)
	for i, seq := range s.strs {
		if seq != 0 {
			strs[i] = crashValue(w, seq)
		}
	}
	c := s.cols[cycle]
	hash := map[string]string{}
	for _, seq := range c.hash {
		hash[strconv.FormatUint(seq, 10)] = crashValue(w, seq)
	}
	var list, set []string
	var zset []redis.Z
	for _, seq := range c.list {
		list = append(list, crashValue(w, seq))
	}
	for _, seq := range c.set {
		set = append(set, crashValue(w, seq))
	}
	for _, seq := range c.zset {
		zset = append(zset, redis.Z{Score: float64(seq), Member: crashValue(w, seq)})
	}
	n := func(k int) *redis.IntCmd { return redis.NewIntResult(int64(k), nil) }
	return &crashRead{
		strs: redis.NewSliceResult(strs, nil),
		tx:   redis.NewStringResult(strconv.FormatInt(s.tx, 10), nil),
		cols: map[int]*crashColsRead{cycle: {
			hash: redis.NewMapStringStringResult(hash, nil), hlen: n(len(hash)),
			list: redis.NewStringSliceResult(list, nil), llen: n(len(list)),
			zset: redis.NewZSliceCmdResult(zset, nil), zcard: n(len(zset)),
			set: redis.NewStringSliceResult(set, nil), scard: n(len(set)),
		}},
	}
}
