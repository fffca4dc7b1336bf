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

// Redis's replies to a negative SPOP count and SINTERCARD LIMIT.
var (
	errSPopNegative     = errors.New("ERR value is out of range, must be positive")
	errSInterCardLimit  = errors.New("ERR LIMIT can't be negative")
	errSetAlgebraNoKeys = errors.New("keyspace: set algebra needs at least one key")
)

// SMIsMember reports for each member whether it is in the set at key, all
// false if the key is missing. It holds the key's stripe so the answers are
// of one moment.
func (s *Store) SMIsMember(ctx context.Context, db int, key []byte, members ...[]byte) ([]bool, error) {
	defer s.lock(db, key)()
	out := make([]bool, len(members))
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeSet, false)
	if err != nil || !ok {
		return out, err
	}
	for i, m := range members {
		if _, out[i], err = c.get(ctx, m); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SPop removes and returns up to count random distinct members of the set
// at key, in one batch; count >= SCARD pops the whole set (in member order)
// and deletes the key. SPOP without a count is SPop(1) with a single reply,
// the caller's to format. Like HRandField it walks the set up to the
// highest rank drawn: O(SCARD) time, O(count) memory.
func (s *Store) SPop(ctx context.Context, db int, key []byte, count int64) ([][]byte, error) {
	if count < 0 {
		return nil, errSPopNegative
	}
	defer s.lock(db, key)()
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeSet, false)
	if err != nil || !ok {
		return nil, err
	}
	if count == 0 {
		return [][]byte{}, nil
	}
	rows, err := c.rowsAtRanks(ctx, pickRandomRanks(c.meta.Count, count))
	if err != nil {
		return nil, err
	}
	b := lsm.NewBatch()
	defer b.Release()
	out := make([][]byte, len(rows))
	for i, r := range rows {
		out[i] = r[0]
		// Popping everything deletes the metadata row alone: the element
		// rows die with its version.
		if int64(len(rows)) < c.meta.Count {
			c.deleteElem(b, r[0])
		}
	}
	c.meta.Count -= int64(len(rows))
	return out, c.finish(ctx, b)
}

// SRandMember returns random members of the set at key without removing
// them: with count >= 0 up to count distinct members (the whole set, in
// member order, when count >= SCARD), with count < 0 exactly -count members
// that may repeat (repeats share memory). SRANDMEMBER without a count is
// SRandMember(1) with a single reply. O(SCARD) time, O(|count|) memory.
func (s *Store) SRandMember(ctx context.Context, db int, key []byte, count int64) ([][]byte, error) {
	if count == math.MinInt64 {
		return nil, errHashSetRandRange
	}
	defer s.lock(db, key)()
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeSet, false)
	if err != nil || !ok {
		return nil, err
	}
	rows, err := c.rowsAtRanks(ctx, pickRandomRanks(c.meta.Count, count))
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(rows))
	for i, r := range rows {
		out[i] = r[0]
	}
	return out, nil
}

// SMove moves member from the set at src to the set at dst, in one batch,
// and reports whether it was in src. As in Redis 7: a missing src gives
// false whatever dst holds; otherwise WRONGTYPE if src or dst (when it
// exists) is not a set, even if member is not in src; src == dst only
// checks membership. dst keeps its TTL; src is deleted if emptied.
func (s *Store) SMove(ctx context.Context, db int, src, dst, member []byte) (bool, error) {
	defer s.lock(db, src, dst)()
	sc, ok, err := s.openCollection(ctx, db, src, TypeSet, false)
	if err != nil || !ok {
		return false, err
	}
	dc, _, err := s.openCollection(ctx, db, dst, TypeSet, true)
	if err != nil {
		return false, err
	}
	if _, ok, err := sc.get(ctx, member); err != nil || !ok {
		return false, err
	}
	if bytes.Equal(src, dst) {
		return true, nil
	}
	_, inDst, err := dc.get(ctx, member)
	if err != nil {
		return false, err
	}
	b := lsm.NewBatch()
	defer b.Release()
	sc.deleteElem(b, member)
	sc.meta.Count--
	if !inDst {
		dc.putElem(b, member, nil)
		dc.meta.Count++
	}
	stageSetMeta(b, sc)
	stageSetMeta(b, dc)
	return true, s.commit(ctx, b)
}

// stageSetMeta adds c's metadata change to b without committing, for a
// command that changes two collections in one batch: as collection.finish,
// an emptied collection is deleted.
func stageSetMeta(b *lsm.Batch, c *collection) {
	switch {
	case c.meta.Count > 0:
		putMeta(b, c.gen, c.key, c.meta, c.old, c.exists)
	case c.exists:
		deleteMeta(b, c.gen, c.key, c.old)
	}
}

// SInter returns the members common to the sets at keys, in member order.
// A missing key is an empty set, so the result is empty; every key is
// still type-checked first, so a wrong-typed key anywhere is WRONGTYPE, as
// in Redis 7.
func (s *Store) SInter(ctx context.Context, db int, keys ...[]byte) ([][]byte, error) {
	return s.setAlgebra(ctx, db, keys, func(sets []*collection) ([][]byte, error) {
		return interSets(ctx, sets, 0)
	})
}

// SUnion returns the members of any of the sets at keys, in member order.
func (s *Store) SUnion(ctx context.Context, db int, keys ...[]byte) ([][]byte, error) {
	return s.setAlgebra(ctx, db, keys, func(sets []*collection) ([][]byte, error) {
		return unionSets(ctx, sets)
	})
}

// SDiff returns the members of the set at keys[0] that are in none of the
// sets at the other keys, in member order.
func (s *Store) SDiff(ctx context.Context, db int, keys ...[]byte) ([][]byte, error) {
	return s.setAlgebra(ctx, db, keys, func(sets []*collection) ([][]byte, error) {
		return diffSets(ctx, sets)
	})
}

// SInterStore stores SInter(keys) at dst and returns its size; see
// storeSetAlgebra.
func (s *Store) SInterStore(ctx context.Context, db int, dst []byte, keys ...[]byte) (int64, error) {
	return s.storeSetAlgebra(ctx, db, dst, keys, func(sets []*collection) ([][]byte, error) {
		return interSets(ctx, sets, 0)
	})
}

// SUnionStore stores SUnion(keys) at dst and returns its size; see
// storeSetAlgebra.
func (s *Store) SUnionStore(ctx context.Context, db int, dst []byte, keys ...[]byte) (int64, error) {
	return s.storeSetAlgebra(ctx, db, dst, keys, func(sets []*collection) ([][]byte, error) {
		return unionSets(ctx, sets)
	})
}

// SDiffStore stores SDiff(keys) at dst and returns its size; see
// storeSetAlgebra.
func (s *Store) SDiffStore(ctx context.Context, db int, dst []byte, keys ...[]byte) (int64, error) {
	return s.storeSetAlgebra(ctx, db, dst, keys, func(sets []*collection) ([][]byte, error) {
		return diffSets(ctx, sets)
	})
}

// SInterCard returns the size of SInter(keys), counting no further than
// limit (0: no limit).
func (s *Store) SInterCard(ctx context.Context, db int, limit int64, keys ...[]byte) (int64, error) {
	if limit < 0 {
		return 0, errSInterCardLimit
	}
	var n int64
	_, err := s.setAlgebra(ctx, db, keys, func(sets []*collection) ([][]byte, error) {
		members, err := interSets(ctx, sets, limit)
		n = int64(len(members))
		return nil, err
	})
	return n, err
}

// setAlgebra opens every key as a set, under the stripes of all of them
// so the result is of one moment, and runs op on them.
func (s *Store) setAlgebra(ctx context.Context, db int, keys [][]byte, op func([]*collection) ([][]byte, error)) ([][]byte, error) {
	if len(keys) == 0 {
		return nil, errSetAlgebraNoKeys
	}
	defer s.lock(db, keys...)()
	sets, err := s.openSets(ctx, db, keys)
	if err != nil {
		return nil, err
	}
	return op(sets)
}

// storeSetAlgebra runs op on the sets at keys and stores the result at dst
// in one batch, replacing whatever dst held (its TTL too), and deleting it
// if the result is empty. dst may be one of keys: the result is computed
// before anything is written, and stored under a new version. WRONGTYPE
// from a source leaves dst as it was.
func (s *Store) storeSetAlgebra(ctx context.Context, db int, dst []byte, keys [][]byte, op func([]*collection) ([][]byte, error)) (int64, error) {
	if len(keys) == 0 {
		return 0, errSetAlgebraNoKeys
	}
	defer s.lock(db, append(slices.Clone(keys), dst)...)()
	sets, err := s.openSets(ctx, db, keys)
	if err != nil {
		return 0, err
	}
	members, err := op(sets)
	if err != nil {
		return 0, err
	}
	gen := s.gen(db)
	old, had, err := s.getMeta(ctx, gen, dst)
	if err != nil {
		return 0, err
	}
	b := lsm.NewBatch()
	defer b.Release()
	if len(members) == 0 {
		if had {
			deleteMeta(b, gen, dst, old)
		}
		return 0, s.commit(ctx, b)
	}
	m := Meta{Type: TypeSet, Version: s.newVersion(), Count: int64(len(members))}
	prefix := elementPrefix(kindSet, gen, dst, m.Version)
	for _, mem := range members {
		b.Put(append(slices.Clip(prefix), mem...), nil)
	}
	putMeta(b, gen, dst, m, old, had)
	return m.Count, s.commit(ctx, b)
}

// openSets opens keys as sets, nil for a missing key. Every key is
// type-checked, even after a missing one: Redis 7 replies WRONGTYPE for
// SINTER missing wrongtyped, it no longer short-circuits before checking.
func (s *Store) openSets(ctx context.Context, db int, keys [][]byte) ([]*collection, error) {
	sets := make([]*collection, len(keys))
	for i, k := range keys {
		c, ok, err := s.openCollection(ctx, db, k, TypeSet, false)
		if err != nil {
			return nil, err
		}
		if ok {
			sets[i] = c
		}
	}
	return sets, nil
}

// interSets returns the members of every set, walking the smallest and
// looking each member up in the others, up to limit members (0: all).
// A missing set (nil) makes the result empty.
func interSets(ctx context.Context, sets []*collection, limit int64) ([][]byte, error) {
	if slices.Contains(sets, nil) {
		return nil, nil
	}
	sets = slices.Clone(sets)
	slices.SortStableFunc(sets, func(a, b *collection) int { return cmp.Compare(a.meta.Count, b.meta.Count) })
	var out [][]byte
	err := sets[0].scanWhile(ctx, func(member, _ []byte) (bool, error) {
		for _, o := range sets[1:] {
			_, ok, err := o.get(ctx, member)
			if err != nil {
				return false, err
			}
			if !ok {
				return true, nil // not common: next member
			}
		}
		out = append(out, bytes.Clone(member))
		return limit == 0 || int64(len(out)) < limit, nil
	})
	return out, err
}

// unionSets returns the members of any of sets (nil: missing), sorted.
func unionSets(ctx context.Context, sets []*collection) ([][]byte, error) {
	seen := make(map[string]bool)
	var out [][]byte
	for _, c := range sets {
		if c == nil {
			continue
		}
		err := c.scan(ctx, func(member, _ []byte) error {
			if !seen[string(member)] {
				seen[string(member)] = true
				out = append(out, bytes.Clone(member))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, bytes.Compare)
	return out, nil
}

// diffSets returns the members of sets[0] in none of the others (nil:
// missing), in member order.
func diffSets(ctx context.Context, sets []*collection) ([][]byte, error) {
	if sets[0] == nil {
		return nil, nil
	}
	var out [][]byte
	err := sets[0].scan(ctx, func(member, _ []byte) error {
		for _, o := range sets[1:] {
			if o == nil {
				continue
			}
			if _, ok, err := o.get(ctx, member); err != nil || ok {
				return err
			}
		}
		out = append(out, bytes.Clone(member))
		return nil
	})
	return out, err
}
