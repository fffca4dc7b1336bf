package lsm

import (
	"context"
	"maps"
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
//
// Every SST lookup of every read finds its Reader here, up to one per table
// a point read walks: the map is copied on write (an open, a manifest that
// drops SSTs) and read through an atomic pointer, with no lock. An
// RWMutex's read lock here was an atomic add on a word every reader shares.
type tableCache struct {
	bkt   objstore.Bucket
	cache *sst.Cache

	readers atomic.Pointer[map[ulid.ULID]*tableEntry] // never modified once stored
	mu      sync.Mutex                                // serializes the writers of readers
}

type tableEntry struct {
	once sync.Once
	r    atomic.Pointer[sst.Reader] // set once opened
	err  error
}

func newTableCache(bkt objstore.Bucket, cache *sst.Cache) *tableCache {
	c := &tableCache{bkt: bkt, cache: cache}
	c.readers.Store(&map[ulid.ULID]*tableEntry{})
	return c
}

// get returns the reader of t, opening it on first use. A failed open is not
// remembered, so a transient storage error does not stick.
func (c *tableCache) get(ctx context.Context, t manifest.SST) (*sst.Reader, error) {
	e, ok := (*c.readers.Load())[t.ID]
	if ok {
		if r := e.r.Load(); r != nil {
			return r, nil
		}
	} else {
		e = c.entry(t.ID)
	}
	e.once.Do(func() {
		name := blob.SSTName(t.ID)
		r, err := sst.OpenReader(ctx, sst.BucketObject(c.bkt, name), name, int64(t.Size), c.cache)
		e.r.Store(r)
		e.err = err
	})
	if e.err != nil {
		c.update(func(m map[ulid.ULID]*tableEntry) {
			if m[t.ID] == e {
				delete(m, t.ID)
			}
		})
	}
	return e.r.Load(), e.err
}

// entry returns id's entry, adding an unopened one if there is none.
func (c *tableCache) entry(id ulid.ULID) *tableEntry {
	var e *tableEntry
	c.update(func(m map[ulid.ULID]*tableEntry) {
		var ok bool
		if e, ok = m[id]; !ok {
			e = &tableEntry{}
			m[id] = e
		}
	})
	return e
}

// update stores a copy of the readers map changed by fn.
func (c *tableCache) update(fn func(map[ulid.ULID]*tableEntry)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := maps.Clone(*c.readers.Load())
	fn(m)
	c.readers.Store(&m)
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
	c.update(func(m map[ulid.ULID]*tableEntry) {
		for id := range m {
			if !live[id] {
				delete(m, id)
			}
		}
	})
}
