package compactor

import (
	"context"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/manifest"
)

// newRunIter reads a sorted run (or one L0 SST) one SST at a time, so a
// compaction holds one open reader per input group. It uses no block cache:
// compaction reads every block once, and must not evict the blocks the
// server's readers use.
func newRunIter(ctx context.Context, bkt objstore.Bucket, ssts []manifest.SST) sst.Iterator {
	return sst.NewConcatIter(sst.ConcatSource{
		N: len(ssts),
		Bounds: func(i int) ([]byte, []byte) {
			return ssts[i].Stats.Smallest, ssts[i].Stats.Largest
		},
		Open: func(i int) (sst.Iterator, error) {
			name := blob.SSTName(ssts[i].ID)
			rd, err := sst.OpenReader(ctx, sst.BucketObject(bkt, name), name, int64(ssts[i].Size), nil)
			if err != nil {
				return nil, err
			}
			return rd.NewIter(ctx, sst.IterOptions{NoFillCache: true}), nil
		},
	})
}
