package compactor

import (
	"context"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/manifest"
)

// concatIter reads a sorted sequence of non-overlapping SSTs (a run) one SST
// at a time, so a compaction holds one open reader per input group.
type concatIter struct {
	ctx  context.Context
	bkt  objstore.Bucket
	ssts []manifest.SST
	idx  int
	cur  sst.Iterator
	err  error
}

var _ sst.Iterator = (*concatIter)(nil)

func newConcatIter(ctx context.Context, bkt objstore.Bucket, ssts []manifest.SST) *concatIter {
	return &concatIter{ctx: ctx, bkt: bkt, ssts: ssts}
}

// open positions on SST i with a fresh iterator; false past the end.
func (c *concatIter) open(i int) bool {
	if c.cur != nil {
		if err := c.cur.Close(); err != nil && c.err == nil {
			c.err = err
		}
		c.cur = nil
	}
	c.idx = i
	if i >= len(c.ssts) || c.err != nil {
		return false
	}
	t := c.ssts[i]
	name := blob.SSTName(t.ID)
	// No cache: compaction reads every block once, and must not evict the
	// blocks the server's readers use.
	rd, err := sst.OpenReader(c.ctx, sst.BucketObject(c.bkt, name), name, int64(t.Size), nil)
	if err != nil {
		c.err = err
		return false
	}
	c.cur = rd.NewIter(c.ctx, sst.IterOptions{NoFillCache: true})
	return true
}

func (c *concatIter) advance(valid bool) bool {
	for !valid {
		if c.cur != nil {
			if err := c.cur.Error(); err != nil {
				c.err = err
				return false
			}
		}
		if !c.open(c.idx + 1) {
			return false
		}
		valid = c.cur.First()
	}
	return true
}

func (c *concatIter) First() bool {
	c.err = nil
	if !c.open(0) {
		return false
	}
	return c.advance(c.cur.First())
}

// SeekGE is supported for the contract's sake; compaction only scans.
func (c *concatIter) SeekGE(key []byte) bool {
	c.err = nil
	i := 0
	for i < len(c.ssts) && string(c.ssts[i].Stats.Largest) < string(key) {
		i++
	}
	if !c.open(i) {
		return false
	}
	return c.advance(c.cur.SeekGE(key))
}

func (c *concatIter) Next() bool {
	if c.cur == nil {
		return false
	}
	return c.advance(c.cur.Next())
}

func (c *concatIter) Valid() bool  { return c.cur != nil && c.cur.Valid() }
func (c *concatIter) Row() sst.Row { return c.cur.Row() }
func (c *concatIter) Error() error { return c.err }

func (c *concatIter) Close() error {
	c.open(len(c.ssts))
	return c.err
}
