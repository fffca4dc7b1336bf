package keyspace

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"math"
	"slices"

	"github.com/stratakv/strata/lsm"
)

// Sorted-set algebra (ZUNION, ZINTER, ZDIFF, ZINTERCARD and their STORE
// forms) and ZRANGESTORE. Sources may be sorted sets or sets (each set
// member scoring 1) and missing keys are empty, as in Redis; the STORE
// forms replace the destination, whatever it held, with a new sorted set
// without TTL, or delete it when the result is empty, in one batch.

// Aggregate is how ZUNION and ZINTER combine a member's scores.
type Aggregate uint8

const (
	AggregateSum Aggregate = iota
	AggregateMin
	AggregateMax
)

// aggregate folds val into *target as Redis's zunionInterAggregate does:
// a sum of opposite infinities is 0, and MIN and MAX keep *target when
// val is NaN (which only an intersection lets through).
func (a Aggregate) aggregate(target *float64, val float64) {
	switch a {
	case AggregateSum:
		*target += val
		if math.IsNaN(*target) {
			*target = 0
		}
	case AggregateMin:
		if val < *target {
			*target = val
		}
	case AggregateMax:
		if val > *target {
			*target = val
		}
	}
}

// zsource is one input of the algebra: a sorted set, a set, or nothing.
type zsource struct {
	c      *collection // nil: missing key
	weight float64
}

// openSources reads the metadata of every key, as Redis does before any
// work: a key holding neither a sorted set nor a set is ErrWrongType.
// weights[i] weighs keys[i]; missing weights are 1.
// REQUIRES: the keys' stripes are locked.
func (s *Store) openSources(ctx context.Context, db int, keys [][]byte, weights []float64) ([]zsource, error) {
	if err := checkDB(db); err != nil {
		return nil, err
	}
	gen := s.gen(db)
	src := make([]zsource, len(keys))
	for i, k := range keys {
		src[i].weight = 1
		if i < len(weights) {
			src[i].weight = weights[i]
		}
		m, ok, err := s.getMeta(ctx, gen, k)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if m.Type != TypeZSet && m.Type != TypeSet {
			return nil, ErrWrongType
		}
		kind, _ := elementKind(m.Type)
		src[i].c = &collection{s: s, gen: gen, key: k, meta: m, old: m, exists: true,
			long: elementPrefix(kind, gen, k, m.Version)}
	}
	return src, nil
}

func (z *zsource) card() int64 {
	if z.c == nil {
		return 0
	}
	return z.c.meta.Count
}

// each calls fn with every member and its score (1 in a set). member is
// valid only during the call.
func (z *zsource) each(ctx context.Context, fn func(member []byte, score float64) error) error {
	if z.c == nil {
		return nil
	}
	if z.c.meta.Type == TypeSet {
		return z.c.scan(ctx, func(member, _ []byte) error { return fn(member, 1) })
	}
	mp := z.c.elem([]byte{zsetMemberTag})
	it := z.c.s.newIter(ctx, lsm.IterOptions{Prefix: mp})
	for ok := it.First(); ok; ok = it.Next() {
		score, err := decodeScoreValue(it.Value())
		if err == nil {
			err = fn(it.Key()[len(mp):], score)
		}
		if err != nil {
			it.Close()
			return err
		}
	}
	return it.Close()
}

// find returns member's score in z (1 in a set).
func (z *zsource) find(ctx context.Context, member []byte) (float64, bool, error) {
	if z.c == nil {
		return 0, false, nil
	}
	if z.c.meta.Type == TypeSet {
		_, ok, err := z.c.get(ctx, member)
		return 1, ok, err
	}
	return z.c.score(ctx, member)
}

// weighted returns w*score, 0 where that is NaN (0 × ±inf), as Redis does.
func weighted(w, score float64) float64 {
	if v := w * score; !math.IsNaN(v) {
		return v
	}
	return 0
}

// bySize orders sources smallest first, keeping the given order among
// equals, as Redis does (a stable qsort): with infinities the order of a
// sum decides its result.
func bySize(src []zsource) {
	slices.SortStableFunc(src, func(a, b zsource) int { return cmp.Compare(a.card(), b.card()) })
}

func (s *Store) union(ctx context.Context, src []zsource, agg Aggregate) ([]ZMember, error) {
	bySize(src)
	acc := map[string]float64{}
	for i := range src {
		err := src[i].each(ctx, func(member []byte, score float64) error {
			v := weighted(src[i].weight, score)
			if t, ok := acc[string(member)]; ok {
				agg.aggregate(&t, v)
				v = t
			}
			acc[string(member)] = v
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return sortedMembers(acc), nil
}

// inter walks the smallest source and looks each member up in the others,
// as Redis does; with limit > 0 it stops after limit members. Only the
// first source's weighted score is cleared of NaN (Redis's rule).
func (s *Store) inter(ctx context.Context, src []zsource, agg Aggregate, limit int64) ([]ZMember, error) {
	bySize(src)
	acc := map[string]float64{}
	if len(src) == 0 || src[0].card() == 0 {
		return []ZMember{}, nil
	}
	err := src[0].each(ctx, func(member []byte, score float64) error {
		t := weighted(src[0].weight, score)
		for j := 1; j < len(src); j++ {
			v, ok, err := src[j].find(ctx, member)
			if err != nil || !ok {
				return err
			}
			agg.aggregate(&t, v*src[j].weight)
		}
		acc[string(member)] = t
		if limit > 0 && int64(len(acc)) >= limit {
			return errStopWalk
		}
		return nil
	})
	if err != nil && err != errStopWalk {
		return nil, err
	}
	return sortedMembers(acc), nil
}

// errStopWalk stops a walk early; it never leaves this file.
var errStopWalk = errors.New("keyspace: walk stopped")

// diff returns the members of the first source in none of the others,
// with their scores in the first (no weights).
func (s *Store) diff(ctx context.Context, src []zsource) ([]ZMember, error) {
	acc := map[string]float64{}
	if len(src) == 0 {
		return []ZMember{}, nil
	}
	err := src[0].each(ctx, func(member []byte, score float64) error {
		for j := 1; j < len(src); j++ {
			if _, ok, err := src[j].find(ctx, member); err != nil || ok {
				return err
			}
		}
		acc[string(member)] = score
		return nil
	})
	if err != nil {
		return nil, err
	}
	return sortedMembers(acc), nil
}

// sortedMembers returns acc's members ordered by score, then member bytes:
// a sorted set's order.
func sortedMembers(acc map[string]float64) []ZMember {
	out := make([]ZMember, 0, len(acc))
	for m, score := range acc {
		out = append(out, ZMember{Score: score, Member: []byte(m)})
	}
	slices.SortFunc(out, compareZMember)
	return out
}

func compareZMember(a, b ZMember) int {
	if c := cmp.Compare(a.Score, b.Score); c != 0 {
		return c
	}
	return bytes.Compare(a.Member, b.Member)
}

// algebra runs op over the sources at keys under their locks (so the
// result is one consistent view of them) and, with dst, stores it there.
func (s *Store) algebra(ctx context.Context, db int, dst []byte, keys [][]byte, weights []float64, op func([]zsource) ([]ZMember, error)) ([]ZMember, error) {
	if dst != nil {
		defer s.lock(db, append([][]byte{dst}, keys...)...)()
	} else {
		defer s.lock(db, keys...)()
	}
	src, err := s.openSources(ctx, db, keys, weights)
	if err != nil {
		return nil, err
	}
	out, err := op(src)
	if err != nil || dst == nil {
		return out, err
	}
	return out, s.storeZSet(ctx, db, dst, out)
}

// storeZSet replaces dst, whatever it holds, with a new sorted set of
// members (distinct, scores not NaN), without TTL; with none it deletes
// dst. One batch.
// REQUIRES: dst's stripe locked.
func (s *Store) storeZSet(ctx context.Context, db int, dst []byte, members []ZMember) error {
	gen := s.gen(db)
	old, had, err := s.getMeta(ctx, gen, dst)
	if err != nil {
		return err
	}
	b := lsm.NewBatch()
	defer b.Release()
	if len(members) == 0 {
		if had {
			deleteMeta(b, gen, dst, old)
		}
		return s.commit(ctx, b)
	}
	m := Meta{Type: TypeZSet, Version: s.newVersion(), Count: int64(len(members))}
	c := &collection{s: s, gen: gen, key: dst, meta: m, long: elementPrefix(kindZSet, gen, dst, m.Version)}
	for _, zm := range members {
		c.setScore(b, zm.Member, canonicalScore(zm.Score), 0, false)
	}
	putMeta(b, gen, dst, m, old, had)
	return s.commit(ctx, b)
}

// ZUnion returns the union of the sorted sets (or sets) at keys, as ZUNION
// does: each member's scores times the key's weight (weights[i] for
// keys[i]; nil: all 1), combined by agg, ordered by score then member.
func (s *Store) ZUnion(ctx context.Context, db int, keys [][]byte, weights []float64, agg Aggregate) ([]ZMember, error) {
	return s.algebra(ctx, db, nil, keys, weights, func(src []zsource) ([]ZMember, error) {
		return s.union(ctx, src, agg)
	})
}

// ZInter returns the intersection of the sorted sets (or sets) at keys, as
// ZINTER does; weights and agg as in ZUnion.
func (s *Store) ZInter(ctx context.Context, db int, keys [][]byte, weights []float64, agg Aggregate) ([]ZMember, error) {
	return s.algebra(ctx, db, nil, keys, weights, func(src []zsource) ([]ZMember, error) {
		return s.inter(ctx, src, agg, 0)
	})
}

// ZDiff returns the members of the first key's sorted set (or set) that
// are in none of the others, with their scores there, as ZDIFF does (which
// takes no weights or aggregate).
func (s *Store) ZDiff(ctx context.Context, db int, keys [][]byte) ([]ZMember, error) {
	return s.algebra(ctx, db, nil, keys, nil, func(src []zsource) ([]ZMember, error) {
		return s.diff(ctx, src)
	})
}

// ZInterCard returns the size of ZInter(keys), counting no further than
// limit (0: no limit), as ZINTERCARD does.
// REQUIRES: limit >= 0 (the RESP layer replies "LIMIT can't be negative").
func (s *Store) ZInterCard(ctx context.Context, db int, keys [][]byte, limit int64) (int64, error) {
	out, err := s.algebra(ctx, db, nil, keys, nil, func(src []zsource) ([]ZMember, error) {
		return s.inter(ctx, src, AggregateSum, limit)
	})
	return int64(len(out)), err
}

// ZUnionStore stores ZUnion(keys, weights, agg) at dst (dst may be one of
// keys) and returns its size; an empty result deletes dst.
func (s *Store) ZUnionStore(ctx context.Context, db int, dst []byte, keys [][]byte, weights []float64, agg Aggregate) (int64, error) {
	out, err := s.algebra(ctx, db, dst, keys, weights, func(src []zsource) ([]ZMember, error) {
		return s.union(ctx, src, agg)
	})
	return int64(len(out)), err
}

// ZInterStore stores ZInter(keys, weights, agg) at dst, as ZUnionStore.
func (s *Store) ZInterStore(ctx context.Context, db int, dst []byte, keys [][]byte, weights []float64, agg Aggregate) (int64, error) {
	out, err := s.algebra(ctx, db, dst, keys, weights, func(src []zsource) ([]ZMember, error) {
		return s.inter(ctx, src, agg, 0)
	})
	return int64(len(out)), err
}

// ZDiffStore stores ZDiff(keys) at dst, as ZUnionStore.
func (s *Store) ZDiffStore(ctx context.Context, db int, dst []byte, keys [][]byte) (int64, error) {
	out, err := s.algebra(ctx, db, dst, keys, nil, func(src []zsource) ([]ZMember, error) {
		return s.diff(ctx, src)
	})
	return int64(len(out)), err
}

// ZRangeBy names the kind of a ZRANGE range.
type ZRangeBy uint8

const (
	ZRangeByRank ZRangeBy = iota
	ZRangeByScore
	ZRangeByLex
)

// ZRangeSpec is a parsed ZRANGE range: by rank (Start..Stop, negative from
// the end), by score (MinScore..MaxScore) or by lex (MinLex..MaxLex).
// Bounds are in ascending sense even with Rev (the RESP layer swaps
// ZRANGE's REV BYSCORE/BYLEX arguments). With Limit, Offset members are
// skipped and at most Count returned (Count < 0: all); Limit applies to
// score and lex ranges only.
type ZRangeSpec struct {
	By                 ZRangeBy
	Start, Stop        int64
	MinScore, MaxScore ScoreBound
	MinLex, MaxLex     LexBound
	Rev                bool
	Limit              bool
	Offset, Count      int64
}

// rangeSpec returns the members r selects from c, in reply order.
func (c *collection) rangeSpec(ctx context.Context, r ZRangeSpec) ([]ZMember, error) {
	offset, count := int64(0), int64(-1)
	if r.Limit {
		offset, count = r.Offset, r.Count
	}
	switch r.By {
	case ZRangeByScore:
		return c.scoreRange(ctx, r.MinScore, r.MaxScore, offset, count, r.Rev)
	case ZRangeByLex:
		return c.lexRange(ctx, r.MinLex, r.MaxLex, offset, count, r.Rev)
	}
	return c.rankRange(ctx, r.Start, r.Stop, r.Rev)
}

// ZRangeWith returns the members r selects from the sorted set at key, in
// reply order: ZRANGE with any of its range forms.
func (s *Store) ZRangeWith(ctx context.Context, db int, key []byte, r ZRangeSpec) ([]ZMember, error) {
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeZSet, false)
	if err != nil || !ok {
		return nil, err
	}
	return c.rangeSpec(ctx, r)
}

// ZRangeStore stores the members r selects from the sorted set at src
// (only a sorted set: a set is ErrWrongType) at dst, replacing whatever dst
// holds, and returns how many; an empty result deletes dst. dst may be src.
func (s *Store) ZRangeStore(ctx context.Context, db int, dst, src []byte, r ZRangeSpec) (int64, error) {
	defer s.lock(db, dst, src)()
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, src, TypeZSet, false)
	if err != nil {
		return 0, err
	}
	var out []ZMember
	if ok {
		if out, err = c.rangeSpec(ctx, r); err != nil {
			return 0, err
		}
	}
	return int64(len(out)), s.storeZSet(ctx, db, dst, out)
}
