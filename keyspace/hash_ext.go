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

// errHashSetRandRange is Redis's reply when HRANDFIELD or SRANDMEMBER is
// given a count of -2^63, whose magnitude does not fit.
var errHashSetRandRange = errors.New("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")

// HSetNX sets field in the hash at key only if it is not there yet, and
// reports whether it did.
func (s *Store) HSetNX(ctx context.Context, db int, key, field, val []byte) (bool, error) {
	defer s.lock(db, key)()
	var c collection
	_, err := s.openCollectionInto(&c, ctx, db, key, TypeHash, true)
	if err != nil {
		return false, err
	}
	if _, ok, err := c.get(ctx, field); err != nil || ok {
		return false, err
	}
	b := lsm.NewBatch()
	defer b.Release()
	c.putElem(b, field, val)
	c.meta.Count++
	return true, c.finish(ctx, b)
}

// HStrLen returns the length of the value of field in the hash at key, 0
// if either is missing.
func (s *Store) HStrLen(ctx context.Context, db int, key, field []byte) (int64, error) {
	v, _, err := s.HGet(ctx, db, key, field)
	return int64(len(v)), err
}

// HKeys returns the fields of the hash at key, by field.
func (s *Store) HKeys(ctx context.Context, db int, key []byte) ([][]byte, error) {
	return s.hashColumn(ctx, db, key, 0)
}

// HVals returns the values of the hash at key, in the order of their fields.
func (s *Store) HVals(ctx context.Context, db int, key []byte) ([][]byte, error) {
	return s.hashColumn(ctx, db, key, 1)
}

// hashColumn returns the fields (col 0) or values (col 1) of the hash at
// key without copying the other half, as HGETALL would.
func (s *Store) hashColumn(ctx context.Context, db int, key []byte, col int) ([][]byte, error) {
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeHash, false)
	if err != nil || !ok {
		return nil, err
	}
	out := make([][]byte, 0, c.meta.Count)
	err = c.scan(ctx, func(field, value []byte) error {
		pair := [2][]byte{field, value}
		out = append(out, append([]byte{}, pair[col]...))
		return nil
	})
	return out, err
}

// HMGet returns the values of fields in the hash at key, in the order
// asked, nil for a missing field (an empty value is non-nil). It holds the
// key's stripe so the values are of one moment, as Redis's are.
func (s *Store) HMGet(ctx context.Context, db int, key []byte, fields ...[]byte) ([][]byte, error) {
	defer s.lock(db, key)()
	out := make([][]byte, len(fields))
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeHash, false)
	if err != nil || !ok {
		return out, err
	}
	for i, f := range fields {
		v, ok, err := c.get(ctx, f)
		if err != nil {
			return nil, err
		}
		if ok {
			out[i] = append([]byte{}, v...)
		}
	}
	return out, nil
}

// HRandField is HRANDFIELD: random (field, value) pairs of the hash at key.
// Without a count (withCount false) it returns one pair; with a positive
// count, up to count distinct pairs (the whole hash, by field, when count
// >= HLEN); with a negative one, exactly -count pairs that may repeat
// (repeats share memory). A missing key gives none. WITHVALUES is the
// caller's: it decides what to reply.
//
// Picks are uniform: it draws ranks from HLEN, then walks the hash once up
// to the highest rank drawn, so it keeps only the picks in memory but takes
// O(HLEN) time. Negative-count picks are independent, so a caller may ask
// for a huge -count in chunks and stream the reply.
func (s *Store) HRandField(ctx context.Context, db int, key []byte, count int64, withCount bool) ([][2][]byte, error) {
	if count == math.MinInt64 {
		return nil, errHashSetRandRange
	}
	if !withCount {
		count = 1
	}
	// The stripe keeps the count equal to the rows walked.
	defer s.lock(db, key)()
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeHash, false)
	if err != nil || !ok {
		return nil, err
	}
	return c.rowsAtRanks(ctx, pickRandomRanks(c.meta.Count, count))
}

// pickRandomRanks draws the ranks (0..n-1) of elements of a collection of
// n elements, with Redis's count semantics: count >= 0 picks min(count, n)
// distinct ranks (all of them in order when count >= n, else in random
// order), count < 0 picks -count ranks with repeats, in draw order.
// REQUIRES: n >= 0, count != math.MinInt64.
func pickRandomRanks(n, count int64) []int64 {
	if n == 0 || count == 0 {
		return []int64{}
	}
	if count < 0 {
		ranks := make([]int64, -count)
		for i := range ranks {
			ranks[i] = rand.Int64N(n)
		}
		return ranks
	}
	if count >= n {
		ranks := make([]int64, n)
		for i := range ranks {
			ranks[i] = int64(i)
		}
		return ranks
	}
	// Floyd's sampling: count distinct ranks in count draws, then shuffled
	// because Floyd's order is not uniform.
	chosen := make(map[int64]bool, count)
	ranks := make([]int64, 0, count)
	for j := n - count; j < n; j++ {
		r := rand.Int64N(j + 1)
		if chosen[r] {
			r = j
		}
		chosen[r] = true
		ranks = append(ranks, r)
	}
	rand.Shuffle(len(ranks), func(i, j int) { ranks[i], ranks[j] = ranks[j], ranks[i] })
	return ranks
}

// rowsAtRanks returns the (suffix, value) rows at the given ranks of c, in
// the order of ranks. It walks c once, up to the highest rank, keeping only
// the rows asked for; a rank repeated shares its row's memory.
// REQUIRES: every rank is in 0..c.meta.Count-1, and c's stripe is held so
// the count matches the rows.
func (c *collection) rowsAtRanks(ctx context.Context, ranks []int64) ([][2][]byte, error) {
	want := slices.Clone(ranks)
	slices.Sort(want)
	want = slices.Compact(want)
	rows := make(map[int64][2][]byte, len(want))
	var rank int64
	err := c.scanWhile(ctx, func(suffix, value []byte) (bool, error) {
		if len(want) == 0 {
			return false, nil
		}
		if rank == want[0] {
			rows[rank] = [2][]byte{bytes.Clone(suffix), append([]byte{}, value...)}
			want = want[1:]
		}
		rank++
		return len(want) > 0, nil
	})
	if err != nil {
		return nil, err
	}
	if len(want) > 0 {
		return nil, corruptionf("collection", int(rank), "key %q has %d element rows, metadata count %d", c.key, rank, c.meta.Count)
	}
	out := make([][2][]byte, len(ranks))
	for i, r := range ranks {
		out[i] = rows[r]
	}
	return out, nil
}

// scanWhile calls fn for the element rows (suffix, value) of c in order
// until fn reports false or fails.
func (c *collection) scanWhile(ctx context.Context, fn func(suffix, value []byte) (bool, error)) error {
	it := c.s.newIter(ctx, lsm.IterOptions{Prefix: c.prefix()})
	for ok := it.First(); ok; ok = it.Next() {
		more, err := fn(it.Key()[len(c.prefix()):], it.Value())
		if err != nil {
			it.Close()
			return err
		}
		if !more {
			break
		}
	}
	return it.Close()
}
