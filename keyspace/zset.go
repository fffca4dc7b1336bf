package keyspace

import (
	"bytes"
	"context"
	"errors"
	"math"
	"slices"

	"github.com/stratakv/strata/lsm"
)

// A sorted set keeps two rows per member: 'M' member → score, for ZSCORE
// and updates, and 'S' sortable-score member → empty, for ranges by score
// and rank in order.

// ZMember is a member with its score.
type ZMember struct {
	Score  float64
	Member []byte
}

// ZAddOptions are ZADD's flags.
type ZAddOptions struct{ NX, XX, GT, LT, CH bool }

// ScoreBound is one end of a score range; ±Inf for an open end.
type ScoreBound struct {
	Value     float64
	Exclusive bool
}

var (
	ErrZAddNXXX   = errors.New("ERR XX and NX options at the same time are not compatible")
	ErrZAddGTLTNX = errors.New("ERR GT, LT, and/or NX options at the same time are not compatible")
)

func memberSuffix(m []byte) []byte { return appendMemberSuffix(nil, m) }

// appendMemberSuffix appends the suffix of member m's row to dst.
func appendMemberSuffix(dst, m []byte) []byte { return append(append(dst, zsetMemberTag), m...) }

func scoreSuffix(score float64, m []byte) []byte { return appendScoreSuffix(nil, score, m) }

// appendScoreSuffix appends the suffix of the score row of member m at
// score to dst.
func appendScoreSuffix(dst []byte, score float64, m []byte) []byte {
	s := encodeScore(score)
	return append(append(append(dst, zsetScoreTag), s[:]...), m...)
}

// score returns the score of member m, if present.
func (c *collection) score(ctx context.Context, m []byte) (float64, bool, error) {
	var sbuf [64]byte // the suffix of a short member, on the stack
	v, ok, err := c.get(ctx, appendMemberSuffix(sbuf[:0], m))
	if err != nil || !ok {
		return 0, false, err
	}
	f, err := decodeScoreValue(v)
	return f, err == nil, err
}

// setScore adds to b the rows of m at score, replacing old if had.
func (c *collection) setScore(b *lsm.Batch, m []byte, score, old float64, had bool) {
	// The suffixes and the value of a short member are built on the stack:
	// the batch copies them.
	var sbuf [64]byte
	var vbuf [8]byte
	if had {
		c.deleteElem(b, appendScoreSuffix(sbuf[:0], old, m))
	}
	c.putElem(b, appendMemberSuffix(sbuf[:0], m), appendScoreValue(vbuf[:0], score))
	c.putElem(b, appendScoreSuffix(sbuf[:0], score, m), nil)
}

// ZAdd adds or updates members as ZADD does and returns the number added
// (or, with CH, added or changed).
func (s *Store) ZAdd(ctx context.Context, db int, key []byte, o ZAddOptions, pairs ...ZMember) (int64, error) {
	switch {
	case o.NX && o.XX:
		return 0, ErrZAddNXXX
	case (o.GT && o.LT) || (o.NX && (o.GT || o.LT)):
		return 0, ErrZAddGTLTNX
	}
	for _, p := range pairs {
		if math.IsNaN(p.Score) {
			return 0, ErrNotFloat
		}
	}
	defer s.lock(db, key)()
	var c collection
	_, err := s.openCollectionInto(&c, ctx, db, key, TypeZSet, true)
	if err != nil {
		return 0, err
	}
	b := lsm.NewBatch()
	defer b.Release()
	var added, changed int64
	// The scores set earlier in this command, for a member named twice;
	// a ZADD of one member needs none.
	var pending map[string]float64
	if len(pairs) > 1 {
		pending = make(map[string]float64, len(pairs))
	}
	for _, p := range pairs {
		p.Score = canonicalScore(p.Score)
		old, had := pending[string(p.Member)]
		if !had {
			if old, had, err = c.score(ctx, p.Member); err != nil {
				return 0, err
			}
		}
		switch {
		case had && (o.NX || (o.GT && p.Score <= old) || (o.LT && p.Score >= old) || p.Score == old):
			continue
		case !had && o.XX:
			continue
		case had:
			changed++
		default:
			added++
		}
		c.setScore(b, p.Member, p.Score, old, had)
		if pending != nil {
			pending[string(p.Member)] = p.Score
		}
	}
	c.meta.Count += added
	if o.CH {
		return added + changed, c.finish(ctx, b)
	}
	return added, c.finish(ctx, b)
}

// canonicalScore folds -0 into 0, as Redis compares them equal.
func canonicalScore(f float64) float64 {
	if f == 0 {
		return 0
	}
	return f
}

// ZIncrBy adds delta to member's score (0 if absent) and returns it.
func (s *Store) ZIncrBy(ctx context.Context, db int, key []byte, delta float64, member []byte) (float64, error) {
	if math.IsNaN(delta) {
		return 0, ErrNotFloat
	}
	defer s.lock(db, key)()
	var c collection
	_, err := s.openCollectionInto(&c, ctx, db, key, TypeZSet, true)
	if err != nil {
		return 0, err
	}
	old, had, err := c.score(ctx, member)
	if err != nil {
		return 0, err
	}
	score := old + delta
	if math.IsNaN(score) {
		return 0, ErrNaN
	}
	score = canonicalScore(score)
	b := lsm.NewBatch()
	defer b.Release()
	c.setScore(b, member, score, old, had)
	if !had {
		c.meta.Count++
	}
	return score, c.finish(ctx, b)
}

// ZRem removes members and returns how many existed.
func (s *Store) ZRem(ctx context.Context, db int, key []byte, members ...[]byte) (int64, error) {
	defer s.lock(db, key)()
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeZSet, false)
	if err != nil || !ok {
		return 0, err
	}
	b := lsm.NewBatch()
	defer b.Release()
	var n int64
	for _, m := range distinct(members) {
		score, had, err := c.score(ctx, m)
		if err != nil {
			return 0, err
		}
		if had {
			c.deleteElem(b, memberSuffix(m))
			c.deleteElem(b, scoreSuffix(score, m))
			n++
		}
	}
	c.meta.Count -= n
	return n, c.finish(ctx, b)
}

// ZCard returns the number of members: O(1).
func (s *Store) ZCard(ctx context.Context, db int, key []byte) (int64, error) {
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeZSet, false)
	if err != nil || !ok {
		return 0, err
	}
	return c.meta.Count, nil
}

// ZScore returns member's score.
func (s *Store) ZScore(ctx context.Context, db int, key, member []byte) (float64, bool, error) {
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeZSet, false)
	if err != nil || !ok {
		return 0, false, err
	}
	return c.score(ctx, member)
}

// byScore walks members in (score, member) order from the lowest score at
// or above lo, until fn returns false.
func (c *collection) byScore(ctx context.Context, lo float64, fn func(ZMember) bool) error {
	sp := c.elem([]byte{zsetScoreTag})
	it := c.s.newIter(ctx, lsm.IterOptions{Prefix: sp})
	ok := it.First()
	if !math.IsInf(lo, -1) {
		ok = it.SeekGE(c.elem(scoreSuffix(canonicalScore(lo), nil)))
	}
	var cp copier // members of one walk share chunks; every caller's result is short-lived
	for ; ok; ok = it.Next() {
		score, member, err := decodeScore(it.Key()[len(sp):])
		if err != nil {
			it.Close()
			return err
		}
		if !fn(ZMember{Score: score, Member: cp.copy(member)}) {
			break
		}
	}
	return it.Close()
}

// ZRange returns members by rank from start to stop inclusive (negative:
// from the end), lowest score first, or highest first with rev.
func (s *Store) ZRange(ctx context.Context, db int, key []byte, start, stop int64, rev bool) ([]ZMember, error) {
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeZSet, false)
	if err != nil || !ok {
		return nil, err
	}
	n := c.meta.Count
	if start < 0 {
		start = max(start+n, 0)
	}
	if stop < 0 {
		stop += n
	}
	stop = min(stop, n-1)
	if start > stop {
		return []ZMember{}, nil
	}
	lo, hi := start, stop
	if rev {
		lo, hi = n-1-stop, n-1-start
	}
	var out []ZMember
	rank := int64(0)
	err = c.byScore(ctx, math.Inf(-1), func(m ZMember) bool {
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

func (b ScoreBound) below(f float64) bool { // b < f, as a lower bound admits f
	if b.Exclusive {
		return b.Value < f
	}
	return b.Value <= f
}

func (b ScoreBound) above(f float64) bool { // f admitted by b as an upper bound
	if b.Exclusive {
		return f < b.Value
	}
	return f <= b.Value
}

// ZRangeByScore returns members with min <= score <= max (bounds may be
// exclusive), lowest first (rev: highest first, min and max as given by
// the caller in ascending sense), skipping offset and returning at most
// count (count < 0: all).
func (s *Store) ZRangeByScore(ctx context.Context, db int, key []byte, lo, hi ScoreBound, offset, count int64, rev bool) ([]ZMember, error) {
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeZSet, false)
	if err != nil || !ok {
		return nil, err
	}
	var in []ZMember
	err = c.byScore(ctx, lo.Value, func(m ZMember) bool {
		if !hi.above(m.Score) {
			return false
		}
		if lo.below(m.Score) {
			in = append(in, m)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if rev {
		slices.Reverse(in)
	}
	if offset < 0 || offset >= int64(len(in)) {
		return []ZMember{}, nil
	}
	in = in[offset:]
	if count >= 0 && count < int64(len(in)) {
		in = in[:count]
	}
	return in, nil
}

// ZRank returns member's rank (0 = lowest score; with rev, 0 = highest).
func (s *Store) ZRank(ctx context.Context, db int, key, member []byte, rev bool) (int64, bool, error) {
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeZSet, false)
	if err != nil || !ok {
		return 0, false, err
	}
	score, had, err := c.score(ctx, member)
	if err != nil || !had {
		return 0, false, err
	}
	var rank int64
	err = c.byScore(ctx, math.Inf(-1), func(m ZMember) bool {
		if m.Score == score && bytes.Equal(m.Member, member) {
			return false
		}
		rank++
		return true
	})
	if rev {
		rank = c.meta.Count - 1 - rank
	}
	return rank, true, err
}
