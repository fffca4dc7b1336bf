package lsm

import (
	"context"

	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/manifest"
)

// levelIter iterates a sorted run (or one L0 SST) within bounds, opening
// its SSTs through the table cache one at a time. It is its own
// sst.ConcatParts, and it holds the table iterator it reopens on each SST
// in turn (the ConcatIter closes one part before it opens the next), so
// one held in an Iterator costs no allocation.
type levelIter struct {
	sst.ConcatIter
	ctx          context.Context
	db           *DB
	ssts         []manifest.SST
	lower, upper []byte
	table        sst.TableIter
}

// init makes l an unpositioned iterator over ssts, keeping the key buffer
// of its table iterator. REQUIRES: l was closed (or is new).
func (l *levelIter) init(ctx context.Context, db *DB, ssts []manifest.SST, lower, upper []byte) {
	l.ctx, l.db, l.ssts, l.lower, l.upper = ctx, db, ssts, lower, upper
	l.Init(l, lower, upper)
}

// release drops what l refers to; its closed table iterator keeps only a
// key buffer, for the next init. REQUIRES: l was closed.
func (l *levelIter) release() {
	l.ConcatIter = sst.ConcatIter{}
	l.ctx, l.db, l.ssts, l.lower, l.upper = nil, nil, nil, nil, nil
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
	rd.InitIter(&l.table, l.ctx, sst.IterOptions{LowerBound: l.lower, UpperBound: l.upper})
	return &l.table, nil
}
