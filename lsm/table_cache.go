package lsm

import (
	"context"
	"sync"

	"github.com/oklog/ulid/v2"
	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/manifest"
)

// tableCache keeps an open sst.Reader (footer, index and filter) per SST of
// the current manifest. Readers hold no file handles, so one dropped from the
// cache stays usable by iterators still holding it.
type tableCache struct {
	bkt   objstore.Bucket
	cache *sst.Cache

	mu      sync.Mutex
	readers map[ulid.ULID]*tableEntry
}

type tableEntry struct {
	once sync.Once
	r    *sst.Reader
	err  error
}

func newTableCache(bkt objstore.Bucket, cache *sst.Cache) *tableCache {
	return &tableCache{bkt: bkt, cache: cache, readers: make(map[ulid.ULID]*tableEntry)}
}

// get returns the reader of t, opening it on first use. A failed open is not
// remembered, so a transient storage error does not stick.
func (c *tableCache) get(ctx context.Context, t manifest.SST) (*sst.Reader, error) {
	c.mu.Lock()
	e, ok := c.readers[t.ID]
	if !ok {
		e = &tableEntry{}
		c.readers[t.ID] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		name := blob.SSTName(t.ID)
		e.r, e.err = sst.OpenReader(ctx, sst.BucketObject(c.bkt, name), name, int64(t.Size), c.cache)
	})
	if e.err != nil {
		c.mu.Lock()
		if c.readers[t.ID] == e {
			delete(c.readers, t.ID)
		}
		c.mu.Unlock()
	}
	return e.r, e.err
}

// retain drops readers of SSTs that man no longer lists.
func (c *tableCache) retain(man *manifest.Manifest) {
	live := make(map[ulid.ULID]bool)
	for _, t := range man.L0 {
		live[t.ID] = true
	}
	for _, r := range man.Runs {
		for _, t := range r.SSTs {
			live[t.ID] = true
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.readers {
		if !live[id] {
			delete(c.readers, id)
		}
	}
}
