package lsm

import (
	"context"

	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/manifest"
)

// newLevelIter iterates a sorted run (or one L0 SST) within bounds, opening
// its SSTs through the table cache one at a time.
func newLevelIter(ctx context.Context, db *DB, ssts []manifest.SST, lower, upper []byte) sst.Iterator {
	return sst.NewConcatIter(sst.ConcatSource{
		N: len(ssts),
		Bounds: func(i int) ([]byte, []byte) {
			return ssts[i].Stats.Smallest, ssts[i].Stats.Largest
		},
		Open: func(i int) (sst.Iterator, error) {
			rd, err := db.tables.get(ctx, ssts[i])
			if err != nil {
				return nil, err
			}
			return rd.NewIter(ctx, sst.IterOptions{LowerBound: lower, UpperBound: upper}), nil
		},
		Lower: lower,
		Upper: upper,
	})
}
