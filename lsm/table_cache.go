package lsm

import (
	"context"
	"sync"
	"sync/atomic"

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

	mu      sync.RWMutex
	readers map[ulid.ULID]*tableEntry
}

type tableEntry struct {
	once sync.Once
	r    atomic.Pointer[sst.Reader] // set once opened: read without c.mu
	err  error
}

func newTableCache(bkt objstore.Bucket, cache *sst.Cache) *tableCache {
	return &tableCache{bkt: bkt, cache: cache, readers: make(map[ulid.ULID]*tableEntry)}
}

// get returns the reader of t, opening it on first use. A failed open is not
// remembered, so a transient storage error does not stick.
//
// Every SST lookup of every read comes here, so an open reader is found
// under the read lock only.
func (c *tableCache) get(ctx context.Context, t manifest.SST) (*sst.Reader, error) {
	c.mu.RLock()
	e, ok := c.readers[t.ID]
	c.mu.RUnlock()
	if ok {
		if r := e.r.Load(); r != nil {
			return r, nil
		}
	}
	c.mu.Lock()
	if e, ok = c.readers[t.ID]; !ok {
		e = &tableEntry{}
		c.readers[t.ID] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		name := blob.SSTName(t.ID)
		r, err := sst.OpenReader(ctx, sst.BucketObject(c.bkt, name), name, int64(t.Size), c.cache)
		e.r.Store(r)
		e.err = err
	})
	if e.err != nil {
		c.mu.Lock()
		if c.readers[t.ID] == e {
			delete(c.readers, t.ID)
		}
		c.mu.Unlock()
	}
	return e.r.Load(), e.err
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
