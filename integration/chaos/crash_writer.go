package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The crash workload's keys. Strings and the transaction counter belong to
// one writer, so its own sequence tells which of its values is the newest;
// the counters are shared by all writers; collections are per writer and per
// cycle, so each cycle's check reads a bounded amount.
const (
	crashStrKeys  = 8 // string keys per writer
	crashCounters = 4 // counters shared by all writers
)

func crashStrKey(w, k int) string           { return fmt.Sprintf("crash:s:%d:%d", w, k) }
func crashCounterKey(k int) string          { return fmt.Sprintf("crash:ctr:%d", k) }
func crashTxKey(w int) string               { return fmt.Sprintf("crash:tx:%d", w) }
func crashColKey(t string, c, w int) string { return fmt.Sprintf("crash:%s:%d:%d", t, c, w) }

// crashValue is the value of writer w's write seq: unique to the write, so
// a value read back names the one write that stored it, and padded (by a
// length the value itself determines) so the load fills memtables and the
// server flushes them between kills.
func crashValue(w int, seq uint64) string {
	return fmt.Sprintf("w%d.%d.", w, seq) + strings.Repeat("x", int(seq%160))
}

type crashOpKind int

const (
	opSet crashOpKind = iota
	opIncr
	opHSet
	opRPush
	opZAdd
	opSAdd
	opMulti // SET, INCR tx, HSET, RPUSH, ZADD, SADD in one MULTI/EXEC
)

// crashOpWeights is the workload's mix, indexed by crashOpKind.
var crashOpWeights = [...]int{opSet: 20, opIncr: 15, opHSet: 15, opRPush: 15, opZAdd: 10, opSAdd: 10, opMulti: 15}

// crashOp is one write command (or MULTI/EXEC block) a writer sent.
type crashOp struct {
	kind  crashOpKind
	seq   uint64 // the writer's own sequence: unique per writer, across cycles
	cycle int
	key   int // string key (opSet, opMulti) or counter (opIncr)
}

// crashCols is what a writer's acknowledged writes put into one cycle's
// collections, as sequence numbers in the order they were acknowledged.
type crashCols struct {
	hash, list, zset, set []uint64
}

func (c *crashCols) clone() *crashCols {
	return &crashCols{hash: cloneSeqs(c.hash), list: cloneSeqs(c.list), zset: cloneSeqs(c.zset), set: cloneSeqs(c.set)}
}

func cloneSeqs(s []uint64) []uint64 { return append([]uint64(nil), s...) }

// crashState is what a writer's writes must have left in the store.
type crashState struct {
	strs [crashStrKeys]uint64 // seq of the value each string key holds; 0: never set
	tx   int64                // the transaction counter
	cols map[int]*crashCols   // by cycle
}

// crashWriter is one client of the crash workload and its model. Its fields
// are only touched by its own goroutine during a cycle and by the checker
// between cycles.
type crashWriter struct {
	id  int
	rng *rand.Rand
	seq uint64

	state crashState
	incrs [crashCounters]int64 // acknowledged INCRs of each shared counter since the last check

	// inflight is the write whose reply never came (the server died under
	// it): it may or may not have been applied. The check resolves it.
	inflight *crashOp
	acked    int   // acknowledged writes since the last check
	replyErr error // an error reply: never expected from a healthy server
}

func newCrashWriter(id int, rng *rand.Rand) *crashWriter {
	return &crashWriter{id: id, rng: rng, state: crashState{cols: map[int]*crashCols{}}}
}

// run sends writes until one fails (the server was killed) or ctx ends.
func (w *crashWriter) run(ctx context.Context, rdb *redis.Client, cycle int) {
	if w.state.cols[cycle] == nil {
		w.state.cols[cycle] = &crashCols{}
	}
	for ctx.Err() == nil {
		op := w.next(cycle)
		w.inflight = &op
		if err := w.send(ctx, rdb, op); err != nil {
			var rerr redis.Error
			if errors.As(err, &rerr) {
				w.replyErr = fmt.Errorf("%v: %w", op, err)
			}
			return
		}
		w.ack(op)
		w.inflight = nil
	}
}

func (w *crashWriter) next(cycle int) crashOp {
	w.seq++
	op := crashOp{seq: w.seq, cycle: cycle}
	n := w.rng.IntN(100)
	for k, weight := range crashOpWeights {
		if n < weight {
			op.kind = crashOpKind(k)
			break
		}
		n -= weight
	}
	switch op.kind {
	case opSet, opMulti:
		op.key = w.rng.IntN(crashStrKeys)
	case opIncr:
		op.key = w.rng.IntN(crashCounters)
	}
	return op
}

func (w *crashWriter) send(ctx context.Context, rdb *redis.Client, op crashOp) error {
	v := crashValue(w.id, op.seq)
	field := strconv.FormatUint(op.seq, 10)
	c := op.cycle
	switch op.kind {
	case opSet:
		return rdb.Set(ctx, crashStrKey(w.id, op.key), v, 0).Err()
	case opIncr:
		return rdb.Incr(ctx, crashCounterKey(op.key)).Err()
	case opHSet:
		return rdb.HSet(ctx, crashColKey("h", c, w.id), field, v).Err()
	case opRPush:
		return rdb.RPush(ctx, crashColKey("l", c, w.id), v).Err()
	case opZAdd:
		return rdb.ZAdd(ctx, crashColKey("z", c, w.id), redis.Z{Score: float64(op.seq), Member: v}).Err()
	case opSAdd:
		return rdb.SAdd(ctx, crashColKey("x", c, w.id), v).Err()
	}
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, crashStrKey(w.id, op.key), v, 0)
		p.Incr(ctx, crashTxKey(w.id))
		p.HSet(ctx, crashColKey("h", c, w.id), field, v)
		p.RPush(ctx, crashColKey("l", c, w.id), v)
		p.ZAdd(ctx, crashColKey("z", c, w.id), redis.Z{Score: float64(op.seq), Member: v})
		p.SAdd(ctx, crashColKey("x", c, w.id), v)
		return nil
	})
	return err
}

// ack records an acknowledged write in the model.
func (w *crashWriter) ack(op crashOp) {
	w.acked++
	if op.kind == opIncr {
		w.incrs[op.key]++
		return
	}
	w.state.apply(op)
}

// apply adds op's effects (other than a shared counter's) to s.
func (s *crashState) apply(op crashOp) {
	cols := s.cols[op.cycle]
	switch op.kind {
	case opSet:
		s.strs[op.key] = op.seq
	case opHSet:
		cols.hash = append(cols.hash, op.seq)
	case opRPush:
		cols.list = append(cols.list, op.seq)
	case opZAdd:
		cols.zset = append(cols.zset, op.seq)
	case opSAdd:
		cols.set = append(cols.set, op.seq)
	case opMulti:
		s.strs[op.key] = op.seq
		s.tx++
		cols.hash = append(cols.hash, op.seq)
		cols.list = append(cols.list, op.seq)
		cols.zset = append(cols.zset, op.seq)
		cols.set = append(cols.set, op.seq)
	}
}

// with returns a copy of s with op applied, when applied (the in-flight
// write the store turned out to have).
func (s *crashState) with(op *crashOp, applied bool) crashState {
	if op == nil || !applied || op.kind == opIncr {
		return *s
	}
	c := crashState{strs: s.strs, tx: s.tx, cols: make(map[int]*crashCols, len(s.cols))}
	for k, v := range s.cols {
		c.cols[k] = v
	}
	c.cols[op.cycle] = s.cols[op.cycle].clone()
	c.apply(*op)
	return c
}

func (op crashOp) String() string {
	names := [...]string{"SET", "INCR", "HSET", "RPUSH", "ZADD", "SADD", "MULTI/EXEC"}
	return fmt.Sprintf("%s #%d (cycle %d)", names[op.kind], op.seq, op.cycle)
}
