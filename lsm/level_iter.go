package lsm

import (
	"context"

	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/manifest"
)

// levelIter iterates a sorted run (or one L0 SST) within bounds, opening
// its SSTs through the table cache one at a time. It is its own
// sst.ConcatParts, so making one is a single allocation.
type levelIter struct {
	sst.ConcatIter
	ctx          context.Context
	db           *DB
	ssts         []manifest.SST
	lower, upper []byte
}

func newLevelIter(ctx context.Context, db *DB, ssts []manifest.SST, lower, upper []byte) *levelIter {
	l := &levelIter{ctx: ctx, db: db, ssts: ssts, lower: lower, upper: upper}
	l.Init(l, lower, upper)
	return l
}

func (l *levelIter) Len() int { return len(l.ssts) }

func (l *levelIter) Bounds(i int) (smallest, largest []byte) {
	return l.ssts[i].Stats.Smallest, l.ssts[i].Stats.Largest
}

func (l *levelIter) Open(i int) (sst.Iterator, error) {
	rd, err := l.db.tables.get(l.ctx, l.ssts[i])
	if err != nil {
		return nil, err
	}
	return rd.NewIter(l.ctx, sst.IterOptions{LowerBound: l.lower, UpperBound: l.upper}), nil
}
