package keyspace

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"

	"github.com/stratakv/strata/lsm"
)

// The list commands that change the middle of a list: LTRIM, LREM, LINSERT,
// and the ones that scan it: LPOS, or touch two lists: LMOVE.
//
// Element positions must stay contiguous (head..tail-1, format.go), so
// removing or inserting in the middle moves elements. Every such command
// keeps in place the longest run of elements it does not touch and rewrites
// the others to close the gaps (or open one): for one element at index i of
// n that is min(i, n-1-i) rows, so work at either end stays O(1). All of a command's
// rows go in one batch, so a huge list makes a huge batch; Redis does the
// same work in memory (LREM and LINSERT are O(N) there too).

// LPOS option errors, with Redis's text. RANK math.MinInt64 is rejected as
// Redis 7.2 does (7.0.15 negates it with signed overflow: it then matches
// from the tail and ignores COUNT).
var (
	ErrRankZero       = errors.New("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
	ErrRankOutOfRange = errors.New("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
	ErrCountNegative  = errors.New("ERR COUNT can't be negative")
	ErrMaxlenNegative = errors.New("ERR MAXLEN can't be negative")
)

// LTrim keeps the elements from start to stop inclusive (Redis's indexes:
// negative from the end, clamped to the list) and deletes the rest, which
// deletes the key when nothing is left. A missing key is not an error.
// Cost: O(removed) row deletions, O(1) when the whole list goes.
func (s *Store) LTrim(ctx context.Context, db int, key []byte, start, stop int64) error {
	defer s.lock(db, key)()
	var c collection
	ok, err := s.openListInto(&c, ctx, db, key, false)
	if err != nil || !ok {
		return err
	}
	n := c.meta.Count
	if start < 0 {
		start += n
	}
	if stop < 0 {
		stop += n
	}
	start = max(start, 0)
	left, right := n, int64(0) // elements dropped at the head and at the tail
	if start <= stop && start < n {
		left, right = start, n-min(stop, n-1)-1
	}
	if left+right == 0 {
		return nil
	}
	b := lsm.NewBatch()
	defer b.Release()
	if left+right < n { // an emptied list is deleted by its metadata alone
		for i := range left {
			c.deleteElem(b, posSuffix(c.meta.Head+uint64(i)))
		}
		for i := range right {
			c.deleteElem(b, posSuffix(c.meta.Tail-1-uint64(i)))
		}
	}
	c.meta.Head += uint64(left)
	c.meta.Tail -= uint64(right)
	c.meta.Count -= left + right
	return c.finish(ctx, b)
}

// LRem removes the elements equal to val, at most count of them from the
// head (count > 0), -count from the tail (count < 0), or all (count 0;
// math.MinInt64 also removes all, as in Redis), and returns how many it
// removed. Cost: it reads the list from the chosen end until count matches
// are found, then rewrites every survivor outside the longest run left
// untouched between (or beside) the removed elements; see removeAt.
func (s *Store) LRem(ctx context.Context, db int, key []byte, count int64, val []byte) (int64, error) {
	defer s.lock(db, key)()
	var c collection
	ok, err := s.openListInto(&c, ctx, db, key, false)
	if err != nil || !ok {
		return 0, err
	}
	fromTail, limit := count < 0, count
	if fromTail {
		limit = -count // math.MinInt64 stays negative: no limit, as in Redis
	}
	var idx []int64
	err = c.walkList(ctx, fromTail, 0, func(i int64, v []byte) bool {
		if bytes.Equal(v, val) {
			idx = append(idx, i)
		}
		return limit <= 0 || int64(len(idx)) < limit
	})
	if err != nil || len(idx) == 0 {
		return 0, err
	}
	if fromTail {
		for i, j := 0, len(idx)-1; i < j; i, j = i+1, j-1 {
			idx[i], idx[j] = idx[j], idx[i]
		}
	}
	b := lsm.NewBatch()
	defer b.Release()
	if err := c.removeAt(ctx, b, idx); err != nil {
		return 0, err
	}
	return int64(len(idx)), c.finish(ctx, b)
}

// removeAt adds to b the removal of the elements at the ascending indexes
// idx and updates c.meta. The survivors form runs between the removed
// elements; the longest run stays where it is, the runs before it move
// towards the tail and the runs after it towards the head, each by the
// number of removed elements between it and the longest run, and the
// positions vacated at both ends are deleted. Writes: len(idx) deletions
// (or puts over removed positions) plus one put per moved survivor.
func (c *collection) removeAt(ctx context.Context, b *lsm.Batch, idx []int64) error {
	n, k := c.meta.Count, int64(len(idx))
	if k == n { // the list goes: its metadata row is all there is to delete
		c.meta.Count = 0
		return nil
	}
	bounds := func(j int64) (lo, hi int64) { // run j: survivors before idx[j]
		lo, hi = 0, n
		if j > 0 {
			lo = idx[j-1] + 1
		}
		if j < k {
			hi = idx[j]
		}
		return lo, hi
	}
	keep, keepLen := int64(0), int64(-1)
	for j := range k + 1 {
		if lo, hi := bounds(j); hi-lo > keepLen {
			keep, keepLen = j, hi-lo
		}
	}
	for j := range k + 1 {
		if lo, hi := bounds(j); j != keep && lo < hi {
			if err := c.shift(ctx, b, lo, hi, keep-j); err != nil {
				return err
			}
		}
	}
	for i := range keep {
		c.deleteElem(b, posSuffix(c.meta.Head+uint64(i)))
	}
	for i := range k - keep {
		c.deleteElem(b, posSuffix(c.meta.Tail-1-uint64(i)))
	}
	c.meta.Head += uint64(keep)
	c.meta.Tail -= uint64(k - keep)
	c.meta.Count -= k
	return nil
}

// shift adds to b the elements at indexes lo..hi-1 rewritten delta
// positions over (negative: towards the head). It reads them from the
// engine, which b does not change until it is committed.
func (c *collection) shift(ctx context.Context, b *lsm.Batch, lo, hi, delta int64) error {
	return c.walkRange(ctx, lo, hi, func(i int64, v []byte) bool {
		c.putElem(b, posSuffix(c.meta.Head+uint64(i+delta)), v)
		return true
	})
}

// LInsert inserts val just before or after the first element equal to
// pivot and returns the new length: -1 if there is no such element, 0 if
// the key is missing. Cost: it reads up to the pivot, then moves the
// shorter side of the insertion point one position outwards.
func (s *Store) LInsert(ctx context.Context, db int, key []byte, before bool, pivot, val []byte) (int64, error) {
	defer s.lock(db, key)()
	var c collection
	ok, err := s.openListInto(&c, ctx, db, key, false)
	if err != nil || !ok {
		return 0, err
	}
	at := int64(-1)
	err = c.walkList(ctx, false, 0, func(i int64, v []byte) bool {
		if bytes.Equal(v, pivot) {
			at = i
		}
		return at < 0
	})
	if err != nil || at < 0 {
		return -1, err
	}
	if !before {
		at++ // the new element's index
	}
	b := lsm.NewBatch()
	defer b.Release()
	n := c.meta.Count
	if at < n-at {
		if err := c.shift(ctx, b, 0, at, -1); err != nil {
			return 0, err
		}
		c.meta.Head--
	} else {
		if err := c.shift(ctx, b, at, n, 1); err != nil {
			return 0, err
		}
		c.meta.Tail++
	}
	c.putElem(b, posSuffix(c.meta.Head+uint64(at)), val)
	c.meta.Count++
	return c.meta.Count, c.finish(ctx, b)
}

// LPos returns the indexes (from the head) of the elements equal to val:
// from the rank-th match on (rank < 0: counting matches from the tail, and
// the indexes come tail first), at most count of them (0: all), looking at
// no more than maxlen elements from that end (0: all). A missing key or no
// match gives none. For LPOS without COUNT the RESP layer passes count 1
// and replies with the one index or nil.
//
// LPos validates its options with Redis's errors, before looking at the key
// as Redis does: rank 0 (ErrRankZero), rank math.MinInt64
// (ErrRankOutOfRange), count < 0 (ErrCountNegative), maxlen < 0
// (ErrMaxlenNegative). Redis reports the first bad option in argument
// order, so a RESP layer that wants that order when several are bad must
// check while parsing. Cost: O(elements looked at).
func (s *Store) LPos(ctx context.Context, db int, key []byte, val []byte, rank, count, maxlen int64) ([]int64, error) {
	switch {
	case rank == 0:
		return nil, ErrRankZero
	case rank == math.MinInt64:
		return nil, ErrRankOutOfRange
	case count < 0:
		return nil, ErrCountNegative
	case maxlen < 0:
		return nil, ErrMaxlenNegative
	}
	var c collection
	ok, err := s.openListInto(&c, ctx, db, key, false)
	if err != nil || !ok {
		return nil, err
	}
	fromTail := rank < 0
	skip := max(rank, -rank) - 1 // matches to pass over before the first reported
	var out []int64
	err = c.walkList(ctx, fromTail, maxlen, func(i int64, v []byte) bool {
		if !bytes.Equal(v, val) {
			return true
		}
		if skip > 0 {
			skip--
			return true
		}
		out = append(out, i)
		return count == 0 || int64(len(out)) < count
	})
	return out, err
}

// walkList calls fn with the index (from the head) and value of each
// element, from the head or from the tail, until fn returns false or limit
// elements were seen (0: no limit). The value is valid only during the call.
func (c *collection) walkList(ctx context.Context, fromTail bool, limit int64, fn func(i int64, v []byte) bool) error {
	n := c.meta.Count
	if limit > 0 {
		n = min(n, limit)
	}
	if !fromTail {
		return c.walkRange(ctx, 0, n, fn)
	}
	// The engine iterates forward only: walk windows from the tail back,
	// each in reverse, growing them so a long walk costs O(1) seeks per
	// 1024 elements while a short one reads little past what it needs.
	var vals [][]byte
	window := int64(16)
	for hi := c.meta.Count; hi > c.meta.Count-n; {
		lo := max(hi-window, c.meta.Count-n)
		vals = vals[:0]
		if err := c.walkRange(ctx, lo, hi, func(_ int64, v []byte) bool {
			vals = append(vals, bytes.Clone(v))
			return true
		}); err != nil {
			return err
		}
		for j := len(vals) - 1; j >= 0; j-- {
			if !fn(lo+int64(j), vals[j]) {
				return nil
			}
		}
		hi, window = lo, min(window*2, 1024)
	}
	return nil
}

// walkRange calls fn for the elements at indexes lo..hi-1 in order until
// it returns false. A missing position is corruption.
func (c *collection) walkRange(ctx context.Context, lo, hi int64, fn func(i int64, v []byte) bool) error {
	if lo >= hi {
		return nil
	}
	it := c.s.newIter(ctx, lsm.IterOptions{
		LowerBound: c.elem(posSuffix(c.meta.Head + uint64(lo))),
		UpperBound: c.elem(posSuffix(c.meta.Head + uint64(hi))),
	})
	i := lo
	for ok := it.First(); ok; ok = it.Next() {
		if binary.BigEndian.Uint64(it.Key()[len(c.prefix()):]) != c.meta.Head+uint64(i) {
			it.Close()
			return errCorruptList(c.key, c.meta.Head+uint64(i))
		}
		if !fn(i, it.Value()) {
			return it.Close()
		}
		i++
	}
	if err := it.Close(); err != nil {
		return err
	}
	if i != hi {
		return errCorruptList(c.key, c.meta.Head+uint64(i))
	}
	return nil
}

// LMove pops an element from one end of src and pushes it at one end of
// dst (left = head), in one batch under both keys' stripes, and returns it;
// false if src is missing. As in Redis 7, dst's type is checked only once
// src has an element (a missing src replies nil even if dst is a string),
// and src == dst rotates the list (the same end is a no-op that returns the
// end element). An emptied src is deleted; dst keeps its expiry, a created
// dst has none. RPOPLPUSH is LMove(src, dst, false, true). Cost: O(1).
func (s *Store) LMove(ctx context.Context, db int, src, dst []byte, srcLeft, dstLeft bool) ([]byte, bool, error) {
	defer s.lock(db, src, dst)()
	sc, ok, err := s.openList(ctx, db, src, false)
	if err != nil || !ok {
		return nil, false, err
	}
	pos := sc.meta.Tail - 1
	if srcLeft {
		pos = sc.meta.Head
	}
	v, ok, err := sc.get(ctx, posSuffix(pos))
	if err != nil {
		return nil, false, err
	}
	if !ok {
		return nil, false, errCorruptList(src, pos)
	}
	dc := sc
	if !bytes.Equal(src, dst) {
		if dc, _, err = s.openList(ctx, db, dst, true); err != nil {
			return nil, false, err
		}
	} else if srcLeft == dstLeft {
		return v, true, nil // popped and pushed back where it was
	}
	b := lsm.NewBatch()
	defer b.Release()
	if sc.meta.Count > 1 || sc == dc { // an emptied src goes with its metadata
		sc.deleteElem(b, posSuffix(pos))
	}
	if srcLeft {
		sc.meta.Head++
	} else {
		sc.meta.Tail--
	}
	sc.meta.Count--
	if dstLeft {
		dc.meta.Head--
		dc.putElem(b, posSuffix(dc.meta.Head), v)
	} else {
		dc.putElem(b, posSuffix(dc.meta.Tail), v)
		dc.meta.Tail++
	}
	dc.meta.Count++
	if sc != dc {
		stageListMeta(b, dc)
	}
	return v, true, sc.finish(ctx, b)
}

// stageListMeta adds c's metadata change to b as finish would, without
// committing: for a command that changes two lists in one batch.
func stageListMeta(b *lsm.Batch, c *collection) {
	switch {
	case c.meta.Count > 0:
		putMeta(b, c.gen, c.key, c.meta, c.old, c.exists)
	case c.exists:
		deleteMeta(b, c.gen, c.key, c.old)
	}
}
