package lsm

import (
	"bytes"
	"context"

	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/manifest"
)

// levelIter iterates a sorted run: SSTs in key order with disjoint ranges,
// opening one SST at a time, so a bounded scan touches only the SSTs that
// overlap its bounds.
type levelIter struct {
	ctx          context.Context
	db           *DB
	ssts         []manifest.SST
	lower, upper []byte
	idx          int
	cur          sst.Iterator
	err          error
}

var _ sst.Iterator = (*levelIter)(nil)

func newLevelIter(ctx context.Context, db *DB, ssts []manifest.SST, lower, upper []byte) *levelIter {
	return &levelIter{ctx: ctx, db: db, ssts: ssts, lower: lower, upper: upper}
}

// open positions on SST i (or past the end) with a fresh child iterator.
func (l *levelIter) open(i int) bool {
	if l.cur != nil {
		if err := l.cur.Close(); err != nil && l.err == nil {
			l.err = err
		}
		l.cur = nil
	}
	l.idx = i
	if i >= len(l.ssts) || l.err != nil {
		return false
	}
	t := l.ssts[i]
	if l.upper != nil && bytes.Compare(t.Stats.Smallest, l.upper) >= 0 {
		l.idx = len(l.ssts)
		return false
	}
	rd, err := l.db.tables.get(l.ctx, t)
	if err != nil {
		l.err = err
		return false
	}
	l.cur = rd.NewIter(l.ctx, sst.IterOptions{LowerBound: l.lower, UpperBound: l.upper})
	return true
}

// skipEmpty moves to following SSTs while the current one is exhausted.
func (l *levelIter) skipEmpty(valid bool) bool {
	for !valid {
		if l.cur != nil {
			if err := l.cur.Error(); err != nil {
				l.err = err
				return false
			}
		}
		if !l.open(l.idx + 1) {
			return false
		}
		valid = l.cur.First()
	}
	return true
}

func (l *levelIter) First() bool {
	l.err = nil
	if !l.open(0) {
		return false
	}
	if l.lower != nil {
		return l.SeekGE(l.lower)
	}
	return l.skipEmpty(l.cur.First())
}

func (l *levelIter) SeekGE(key []byte) bool {
	l.err = nil
	if l.lower != nil && bytes.Compare(key, l.lower) < 0 {
		key = l.lower
	}
	// The first SST whose largest key is >= key.
	lo, hi := 0, len(l.ssts)
	for lo < hi {
		mid := (lo + hi) / 2
		if bytes.Compare(l.ssts[mid].Stats.Largest, key) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if !l.open(lo) {
		return false
	}
	return l.skipEmpty(l.cur.SeekGE(key))
}

func (l *levelIter) Next() bool {
	if l.cur == nil {
		return false
	}
	return l.skipEmpty(l.cur.Next())
}

func (l *levelIter) Valid() bool  { return l.cur != nil && l.cur.Valid() }
func (l *levelIter) Row() sst.Row { return l.cur.Row() }
func (l *levelIter) Error() error { return l.err }

func (l *levelIter) Close() error {
	l.open(len(l.ssts))
	return l.err
}
