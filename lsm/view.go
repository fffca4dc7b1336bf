package lsm

import (
	"context"
	"sync/atomic"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/manifest"
)

// View reads the rows flushed as of one manifest: its SSTs only, no
// memtable or WAL. A compaction filter uses one to look up other keys (the
// Redis filter reads a collection's metadata) as of the compaction's
// manifest. It is safe for concurrent use.
type View struct {
	man        *manifest.Manifest
	tables     *tableCache
	bloomSkips atomic.Uint64
}

// NewView returns a view of man's SSTs in bkt with a block cache of
// cacheBytes.
func NewView(bkt objstore.Bucket, man *manifest.Manifest, cacheBytes int64) *View {
	return &View{man: man, tables: newTableCache(bkt, sst.NewCache(cacheBytes))}
}

// Get returns the newest row of key in the view, of any kind and whatever
// its expiry: the caller judges it by its own clock. The row shares the
// SST block's memory (see sst.Reader.Lookup): valid while held, not to be
// modified.
func (v *View) Get(ctx context.Context, key []byte) (sst.Row, bool, error) {
	return v.tables.lookup(ctx, v.man, key, &v.bloomSkips)
}
