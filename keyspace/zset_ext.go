package keyspace

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/stratakv/strata/lsm"
)

// The sorted-set commands beyond zset.go: ZMSCORE, ZCOUNT, the
// lexicographic ranges, removal by range, pops and ZRANDMEMBER. Ranges by
// rank and by lex walk the score rows from the start (the engine iterator
// only goes forward), so they are O(size) like ZRange.

var (
	// ErrPopCount is ZPOPMIN/ZPOPMAX's reply to a negative count.
	ErrPopCount = errors.New("ERR value is out of range, must be positive")
	// ErrMPopCount is ZMPOP's reply to a count below 1.
	ErrMPopCount = errors.New("ERR count should be greater than 0")
	// ErrOutOfRange is ZRANDMEMBER's reply to a count beyond ±2^62.
	ErrOutOfRange = errors.New("ERR value is out of range")
)

// LexBound is one end of a lexicographic range (ZRANGEBYLEX and friends):
// a member, inclusive ("[x") or exclusive ("(x"), or an open end: Inf < 0
// is "-", below every member, Inf > 0 is "+", above every member. Parsing
// the argument is the RESP layer's.
type LexBound struct {
	Inf       int8 // -1: "-", +1: "+", 0: Value
	Value     []byte
	Exclusive bool
}

// Open ends of lexicographic ranges.
var (
	LexMin = LexBound{Inf: -1} // "-"
	LexMax = LexBound{Inf: +1} // "+"
)

// cmpLex compares two bounds as Redis's sdscmplex does: "-" is below and
// "+" above every string, and each equals itself.
func cmpLex(a, b LexBound) int {
	switch {
	case a.Inf == b.Inf && a.Inf != 0:
		return 0
	case a.Inf < 0 || b.Inf > 0:
		return -1
	case a.Inf > 0 || b.Inf < 0:
		return 1
	}
	return bytes.Compare(a.Value, b.Value)
}

// lexGteMin reports whether member m is admitted by lo as a lower bound.
func lexGteMin(m []byte, lo LexBound) bool {
	c := cmpLex(LexBound{Value: m}, lo)
	if lo.Exclusive || lo.Inf != 0 {
		return c > 0
	}
	return c >= 0
}

// lexLteMax reports whether member m is admitted by hi as an upper bound.
func lexLteMax(m []byte, hi LexBound) bool {
	c := cmpLex(LexBound{Value: m}, hi)
	if hi.Exclusive || hi.Inf != 0 {
		return c < 0
	}
	return c <= 0
}

// lexSpan returns the indexes into members (a sorted set in score order)
// that a lexicographic range selects, in reply order. It follows Redis's
// walk of a sorted set exactly, so the reply matches Redis's even when the
// scores differ (Redis only promises a meaning when they are equal): the
// range is empty unless the last member is >= lo and the first <= hi; it
// starts at the first member >= lo (rev: the last <= hi), which must be in
// range; offset members are then skipped without looking at them; and it
// goes on, at most count members (count < 0: no limit), while members stay
// <= hi (rev: >= lo). A negative offset selects nothing.
func lexSpan(members [][]byte, lo, hi LexBound, offset, count int64, rev bool) []int {
	n := len(members)
	c := cmpLex(lo, hi)
	if n == 0 || offset < 0 || c > 0 || (c == 0 && (lo.Exclusive || hi.Exclusive || lo.Inf != 0)) ||
		!lexGteMin(members[n-1], lo) || !lexLteMax(members[0], hi) {
		return nil
	}
	i, step := 0, 1
	if rev {
		i, step = n-1, -1
		for i >= 0 && !lexLteMax(members[i], hi) {
			i--
		}
		if i < 0 || !lexGteMin(members[i], lo) {
			return nil
		}
	} else {
		for i < n && !lexGteMin(members[i], lo) {
			i++
		}
		if i == n || !lexLteMax(members[i], hi) {
			return nil
		}
	}
	if offset >= int64(n) {
		return nil
	}
	i += step * int(offset)
	var out []int
	for ; i >= 0 && i < n && count != 0; i += step {
		if (rev && !lexGteMin(members[i], lo)) || (!rev && !lexLteMax(members[i], hi)) {
			break
		}
		out = append(out, i)
		count--
	}
	return out
}

// all returns every member of the sorted set c in (score, member) order.
func (c *collection) all(ctx context.Context) ([]ZMember, error) {
	out := make([]ZMember, 0, c.meta.Count)
	err := c.byScore(ctx, math.Inf(-1), func(m ZMember) bool {
		out = append(out, m)
		return true
	})
	return out, err
}

// lexRange returns the members of c that a lexicographic range selects
// (see lexSpan), in reply order.
func (c *collection) lexRange(ctx context.Context, lo, hi LexBound, offset, count int64, rev bool) ([]ZMember, error) {
	all, err := c.all(ctx)
	if err != nil {
		return nil, err
	}
	names := make([][]byte, len(all))
	for i, m := range all {
		names[i] = m.Member
	}
	idx := lexSpan(names, lo, hi, offset, count, rev)
	out := make([]ZMember, len(idx))
	for i, j := range idx {
		out[i] = all[j]
	}
	return out, nil
}

// delMember adds to b the deletion of both rows of m.
func (c *collection) delMember(b *lsm.Batch, m ZMember) {
	c.deleteElem(b, memberSuffix(m.Member))
	c.deleteElem(b, scoreSuffix(m.Score, m.Member))
}

// ZMScore returns the score of each member; ok[i] is false where member i
// is absent (or the key is).
func (s *Store) ZMScore(ctx context.Context, db int, key []byte, members ...[]byte) (scores []float64, ok []bool, err error) {
	scores, ok = make([]float64, len(members)), make([]bool, len(members))
	c, exists, err := s.openCollection(ctx, db, key, TypeZSet, false)
	if err != nil || !exists {
		return scores, ok, err
	}
	for i, m := range members {
		if scores[i], ok[i], err = c.score(ctx, m); err != nil {
			return nil, nil, err
		}
	}
	return scores, ok, nil
}

// ZCount returns the number of members with a score within [lo, hi]
// (either end may be exclusive).
func (s *Store) ZCount(ctx context.Context, db int, key []byte, lo, hi ScoreBound) (int64, error) {
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeZSet, false)
	if err != nil || !ok || scoreRangeNaN(lo, hi) {
		return 0, err
	}
	var n int64
	err = c.byScore(ctx, lo.Value, func(m ZMember) bool {
		if !hi.above(m.Score) {
			return false
		}
		if lo.below(m.Score) {
			n++
		}
		return true
	})
	return n, err
}

// ZRangeByLex returns the members within [lo, hi] by member bytes, as
// ZRANGEBYLEX (rev: ZREVRANGEBYLEX, lo and hi still in ascending sense)
// does, skipping offset and returning at most count (count < 0: all).
// Redis defines this for members of equal score; with differing scores the
// reply is Redis's all the same (see lexSpan).
func (s *Store) ZRangeByLex(ctx context.Context, db int, key []byte, lo, hi LexBound, offset, count int64, rev bool) ([][]byte, error) {
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeZSet, false)
	if err != nil || !ok {
		return nil, err
	}
	in, err := c.lexRange(ctx, lo, hi, offset, count, rev)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(in))
	for i, m := range in {
		out[i] = m.Member
	}
	return out, nil
}

// ZLexCount returns the number of members ZRangeByLex(lo, hi) returns.
func (s *Store) ZLexCount(ctx context.Context, db int, key []byte, lo, hi LexBound) (int64, error) {
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeZSet, false)
	if err != nil || !ok {
		return 0, err
	}
	in, err := c.lexRange(ctx, lo, hi, 0, -1, false)
	return int64(len(in)), err
}

// rankSpan clamps the rank range start..stop (negative: from the end) to a
// set of n members as Redis does; ok is false when it selects nothing.
func rankSpan(start, stop, n int64) (lo, hi int64, ok bool) {
	if start < 0 {
		start = max(start+n, 0)
	}
	if stop < 0 {
		stop += n
	}
	stop = min(stop, n-1)
	return start, stop, start <= stop
}

// removeWhere deletes the members of the sorted set at key that pick
// selects from all its members in order, in one batch, and returns how
// many it deleted. The key is deleted when emptied.
func (s *Store) removeWhere(ctx context.Context, db int, key []byte, pick func(c *collection) ([]ZMember, error)) (int64, error) {
	defer s.lock(db, key)()
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeZSet, false)
	if err != nil || !ok {
		return 0, err
	}
	gone, err := pick(&c)
	if err != nil || len(gone) == 0 {
		return 0, err
	}
	b := lsm.NewBatch()
	defer b.Release()
	for _, m := range gone {
		c.delMember(b, m)
	}
	c.meta.Count -= int64(len(gone))
	return int64(len(gone)), c.finish(ctx, b)
}

// ZRemRangeByRank removes the members ranked start..stop (negative: from
// the end, lowest score first) and returns how many it removed.
func (s *Store) ZRemRangeByRank(ctx context.Context, db int, key []byte, start, stop int64) (int64, error) {
	return s.removeWhere(ctx, db, key, func(c *collection) ([]ZMember, error) {
		return c.rankRange(ctx, start, stop, false)
	})
}

// ZRemRangeByScore removes the members with a score within [lo, hi]
// (either end may be exclusive) and returns how many it removed.
func (s *Store) ZRemRangeByScore(ctx context.Context, db int, key []byte, lo, hi ScoreBound) (int64, error) {
	return s.removeWhere(ctx, db, key, func(c *collection) ([]ZMember, error) {
		return c.scoreRange(ctx, lo, hi, 0, -1, false)
	})
}

// ZRemRangeByLex removes the members ZRangeByLex(lo, hi) returns and
// returns how many it removed.
func (s *Store) ZRemRangeByLex(ctx context.Context, db int, key []byte, lo, hi LexBound) (int64, error) {
	return s.removeWhere(ctx, db, key, func(c *collection) ([]ZMember, error) {
		return c.lexRange(ctx, lo, hi, 0, -1, false)
	})
}

// rankRange returns the members ranked start..stop (negative: from the
// end; rev: rank 0 is the highest score), in reply order.
func (c *collection) rankRange(ctx context.Context, start, stop int64, rev bool) ([]ZMember, error) {
	n := c.meta.Count
	lo, hi, ok := rankSpan(start, stop, n)
	if !ok {
		return nil, nil
	}
	if rev {
		lo, hi = n-1-hi, n-1-lo
	}
	out := make([]ZMember, 0, hi-lo+1)
	rank := int64(0)
	err := c.byScore(ctx, math.Inf(-1), func(m ZMember) bool {
		if rank >= lo {
			out = append(out, m)
		}
		rank++
		return rank <= hi
	})
	if rev {
		slices.Reverse(out)
	}
	return out, err
}

// scoreRange returns the members with a score within [lo, hi], in reply
// order (rev: highest first), skipping offset and at most count (count < 0:
// all). A negative offset selects nothing.
func (c *collection) scoreRange(ctx context.Context, lo, hi ScoreBound, offset, count int64, rev bool) ([]ZMember, error) {
	if scoreRangeNaN(lo, hi) {
		return nil, nil
	}
	var in []ZMember
	err := c.byScore(ctx, lo.Value, func(m ZMember) bool {
		if !hi.above(m.Score) {
			return false
		}
		if lo.below(m.Score) {
			in = append(in, m)
		}
		return true
	})
	if err != nil || offset < 0 || offset >= int64(len(in)) {
		return nil, err
	}
	if rev {
		slices.Reverse(in)
	}
	in = in[offset:]
	if count >= 0 && count < int64(len(in)) {
		in = in[:count]
	}
	return in, nil
}

// scoreRangeNaN reports a NaN bound, which admits no score. Redis rejects
// one when parsing ("min or max is not a float"); here it must not reach
// encodeScore, which panics on NaN.
func scoreRangeNaN(lo, hi ScoreBound) bool {
	return math.IsNaN(lo.Value) || math.IsNaN(hi.Value)
}

// ZPopMin removes and returns up to count members of lowest score, lowest
// first. A missing key or count 0 returns none; a negative count is
// ErrPopCount.
func (s *Store) ZPopMin(ctx context.Context, db int, key []byte, count int64) ([]ZMember, error) {
	return s.zpop(ctx, db, key, count, false)
}

// ZPopMax removes and returns up to count members of highest score,
// highest first, as ZPopMin otherwise.
func (s *Store) ZPopMax(ctx context.Context, db int, key []byte, count int64) ([]ZMember, error) {
	return s.zpop(ctx, db, key, count, true)
}

func (s *Store) zpop(ctx context.Context, db int, key []byte, count int64, highest bool) ([]ZMember, error) {
	if count < 0 {
		return nil, ErrPopCount
	}
	defer s.lock(db, key)()
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeZSet, false)
	if err != nil || !ok || count == 0 {
		return nil, err
	}
	return c.pop(ctx, count, highest)
}

// pop removes up to count members from one end of c and commits.
// REQUIRES: c's stripe locked; count > 0.
func (c *collection) pop(ctx context.Context, count int64, highest bool) ([]ZMember, error) {
	out, err := c.rankRange(ctx, 0, count-1, highest)
	if err != nil {
		return nil, err
	}
	b := lsm.NewBatch()
	defer b.Release()
	for _, m := range out {
		c.delMember(b, m)
	}
	c.meta.Count -= int64(len(out))
	return out, c.finish(ctx, b)
}

// ZMPop pops up to count members (count > 0) from the first of keys that
// holds a non-empty sorted set, as ZMPOP does (highest: MAX), and returns
// that key; none when no key holds one. A key of another type before it is
// ErrWrongType.
func (s *Store) ZMPop(ctx context.Context, db int, keys [][]byte, count int64, highest bool) ([]byte, []ZMember, error) {
	if count <= 0 {
		return nil, nil, ErrMPopCount
	}
	defer s.lock(db, keys...)()
	for _, k := range keys {
		c, ok, err := s.openCollection(ctx, db, k, TypeZSet, false)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			out, err := c.pop(ctx, count, highest)
			return k, out, err
		}
	}
	return nil, nil, nil
}

// ZRandMember returns random members with their scores, as ZRANDMEMBER
// with a count does: count > 0 gives min(count, size) distinct members
// (all of them, highest score first, when count >= size, as Redis walks
// them); count < 0 gives -count members, repeats allowed. A count beyond
// ±2^62 is ErrOutOfRange (Redis 7 checks this with WITHSCORES; without, it
// would try to build the reply and run out of memory).
func (s *Store) ZRandMember(ctx context.Context, db int, key []byte, count int64) ([]ZMember, error) {
	if count < -math.MaxInt64/2 || count > math.MaxInt64/2 {
		return nil, ErrOutOfRange
	}
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeZSet, false)
	if err != nil || !ok || count == 0 {
		return nil, err
	}
	n := c.meta.Count
	if count >= n {
		return c.rankRange(ctx, 0, -1, true)
	}
	ranks := sampleRanks(n, count)
	wanted := slices.Clone(ranks)
	slices.Sort(wanted)
	wanted = slices.Compact(wanted)
	byRank := make(map[int64]ZMember, len(wanted))
	rank, next := int64(0), 0
	err = c.byScore(ctx, math.Inf(-1), func(m ZMember) bool {
		if rank == wanted[next] {
			byRank[rank] = m
			next++
		}
		rank++
		return next < len(wanted)
	})
	if err != nil {
		return nil, err
	}
	out := make([]ZMember, len(ranks))
	for i, r := range ranks {
		out[i] = byRank[r]
	}
	return out, nil
}

// sampleRanks returns random ranks below n: count distinct ones in random
// order for 0 < count < n (Floyd's algorithm, O(count)), -count with
// repeats for count < 0.
func sampleRanks(n, count int64) []int64 {
	if count < 0 {
		out := make([]int64, 0, min(-count, 1<<20))
		for range -count {
			out = append(out, rand.Int64N(n))
		}
		return out
	}
	seen := make(map[int64]bool, count)
	out := make([]int64, 0, count)
	for j := n - count; j < n; j++ {
		r := rand.Int64N(j + 1)
		if seen[r] {
			r = j
		}
		seen[r] = true
		out = append(out, r)
	}
	rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
