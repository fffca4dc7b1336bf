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
	return sst.NewConcatIter(&runParts{ctx: ctx, bkt: bkt, ssts: ssts}, nil, nil)
}

// runParts are a run's SSTs, read from the bucket.
type runParts struct {
	ctx  context.Context
	bkt  objstore.Bucket
	ssts []manifest.SST
}

func (r *runParts) Len() int { return len(r.ssts) }

func (r *runParts) Bounds(i int) (smallest, largest []byte) {
	return r.ssts[i].Stats.Smallest, r.ssts[i].Stats.Largest
}

func (r *runParts) Open(i int) (sst.Iterator, error) {
	name := blob.SSTName(r.ssts[i].ID)
	rd, err := sst.OpenReader(r.ctx, sst.BucketObject(r.bkt, name), name, int64(r.ssts[i].Size), nil)
	if err != nil {
		return nil, err
	}
	return rd.NewIter(r.ctx, sst.IterOptions{NoFillCache: true}), nil
}
