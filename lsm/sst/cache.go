package sst

import (
	"sync"
	"sync/atomic"
)

const (
	cacheShards = 16
	// cacheEntryOverhead is charged per entry on top of its value, for the
	// entry struct and its map slot, so many tiny blocks cannot exceed the
	// byte budget by their bookkeeping.
	cacheEntryOverhead = 96
	// maxSecondChances bounds the marked entries one insert moves to the
	// front before it evicts from the back regardless.
	maxSecondChances = 8
)

// Cache is a byte-bounded block cache shared by Readers: a sharded LRU whose
// values are decoded (checksum-verified, decompressed) blocks. Index and
// filter blocks are high priority: in each shard they are evicted only when
// no normal entry is left. It is safe for concurrent use.
//
// Recency is kept CLOCK-style: a hit only marks its entry, and eviction
// gives a marked entry at the back of its list a second chance at the front
// (at most maxSecondChances per insert, so an insert's work is bounded). A
// hit used to move its entry to the front, writing to both neighbours: two
// cache misses on random entries under the shard's lock, on every read.
//
// Cached slices are never modified or reused, so a caller may keep using a
// block after it was evicted.
type Cache struct {
	capacity int64
	nextID   atomic.Uint64
	shards   [cacheShards]cacheShard
}

// CacheMetrics is a snapshot of a Cache's counters.
type CacheMetrics struct {
	// Hits and Misses count reads of data blocks. Index and filter blocks,
	// which their Readers reach through references (getRef), count neither.
	Hits, Misses uint64
	Bytes        int64 // charged bytes: values plus per-entry overhead
	Entries      int64
	Capacity     int64
}

type cacheKey struct {
	id  uint64 // Reader id, unique per Cache
	off uint64 // block offset within the object
}

type cacheEntry struct {
	key        cacheKey
	value      []byte
	charge     int64
	high       bool
	used       bool // hit since it was last put at the front
	prev, next *cacheEntry
	// ref, if set, is a Reader's reference to value, cleared when the entry
	// leaves the cache (see getRef).
	ref *atomic.Pointer[[]byte]
}

// lruList is a circular doubly-linked list with a sentinel; front is newest.
type lruList struct{ root cacheEntry }

func (l *lruList) init()             { l.root.prev, l.root.next = &l.root, &l.root }
func (l *lruList) empty() bool       { return l.root.next == &l.root }
func (l *lruList) back() *cacheEntry { return l.root.prev }

func (l *lruList) pushFront(e *cacheEntry) {
	e.prev, e.next = &l.root, l.root.next
	e.prev.next, e.next.prev = e, e
}

func unlink(e *cacheEntry) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

type cacheShard struct {
	mu           sync.Mutex
	capacity     int64
	used         int64
	m            map[cacheKey]*cacheEntry
	normal, high lruList
	hits, misses uint64
}

// NewCache returns a cache holding at most capacityBytes (charged bytes, see
// CacheMetrics.Bytes). A block larger than a shard's share of the capacity is
// never cached.
func NewCache(capacityBytes int64) *Cache {
	c := &Cache{capacity: max(capacityBytes, 0)}
	for i := range c.shards {
		s := &c.shards[i]
		s.capacity = c.capacity / cacheShards
		s.m = make(map[cacheKey]*cacheEntry)
		s.normal.init()
		s.high.init()
	}
	return c
}

// Metrics returns the cache's counters.
func (c *Cache) Metrics() CacheMetrics {
	m := CacheMetrics{Capacity: c.capacity}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		m.Hits += s.hits
		m.Misses += s.misses
		m.Bytes += s.used
		m.Entries += int64(len(s.m))
		s.mu.Unlock()
	}
	return m
}

// newID returns an id no other Reader of this cache has, so cache keys of
// different objects never collide.
func (c *Cache) newID() uint64 { return c.nextID.Add(1) }

// fits reports whether a value of n bytes can be cached at all.
func (c *Cache) fits(n int) bool {
	return int64(n)+cacheEntryOverhead <= c.capacity/cacheShards
}

func (c *Cache) shard(k cacheKey) *cacheShard {
	h := k.id*0x9E3779B97F4A7C15 ^ k.off*0xC2B2AE3D27D4EB4F
	h ^= h >> 29
	return &c.shards[h%cacheShards]
}

func (c *Cache) get(id, off uint64) ([]byte, bool) {
	return c.lookup(id, off, true, true)
}

// Capacity is the most bytes the cache holds.
func (c *Cache) Capacity() int64 { return c.capacity }

// peek is get that counts neither a hit nor a miss: it asks whether a
// block is cached.
func (c *Cache) peek(id, off uint64) ([]byte, bool) {
	return c.lookup(id, off, false, false)
}

// getNoMiss is get that counts a hit but no miss: for a lookup that, on a
// miss, leaves the block to a batch's fetch, which counts it (setFetched).
func (c *Cache) getNoMiss(id, off uint64) ([]byte, bool) {
	return c.lookup(id, off, true, false)
}

// lookup is get, peek and getNoMiss: a found entry is marked used, and
// counted a hit if countHit; an absent one counted a miss if countMiss.
func (c *Cache) lookup(id, off uint64, countHit, countMiss bool) ([]byte, bool) {
	k := cacheKey{id, off}
	s := c.shard(k)
	s.mu.Lock()
	e, ok := s.m[k]
	var v []byte
	switch {
	case ok:
		if countHit {
			s.hits++
		}
		e.used = true
		v = e.value
	case countMiss:
		s.misses++
	}
	s.mu.Unlock()
	return v, ok
}

// getRef returns a cached index or filter block and points ref at it until
// the entry leaves the cache, so that its Reader finds it with one atomic
// load instead of a lookup under a shard's lock (a point read checks a
// filter per table it walks). The block then stays accounted for while the
// Reader reads it without the cache; it is not marked used by those reads,
// which high priority makes up for. Neither getRef nor the reads through
// ref count a hit or a miss: Hits and Misses count data blocks.
func (c *Cache) getRef(id, off uint64, ref *atomic.Pointer[[]byte]) ([]byte, bool) {
	k := cacheKey{id, off}
	s := c.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[k]
	if !ok {
		return nil, false
	}
	e.used = true
	e.ref = ref
	ref.Store(&e.value)
	return e.value, true
}

// setRef caches a high-priority index or filter block and points ref at it
// as getRef does.
func (c *Cache) setRef(id, off uint64, value []byte, ref *atomic.Pointer[[]byte]) {
	c.insert(id, off, value, true, ref)
}

// setFetched is set for a block fetched because lookups missed it, which
// counts as one miss however many lookups wait for it.
func (c *Cache) setFetched(id, off uint64, value []byte) {
	s := c.shard(cacheKey{id, off})
	s.mu.Lock()
	s.misses++
	s.mu.Unlock()
	c.set(id, off, value, false)
}

// set inserts or replaces a block. High-priority entries outlive every
// normal entry of their shard.
func (c *Cache) set(id, off uint64, value []byte, high bool) {
	c.insert(id, off, value, high, nil)
}

// insert is set, and setRef if ref is not nil.
func (c *Cache) insert(id, off uint64, value []byte, high bool, ref *atomic.Pointer[[]byte]) {
	if !c.fits(len(value)) {
		return
	}
	k := cacheKey{id, off}
	charge := int64(len(value)) + cacheEntryOverhead
	s := c.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[k]; ok {
		s.remove(e)
	}
	chances := maxSecondChances
	for s.used+charge > s.capacity {
		l := &s.normal
		if l.empty() {
			l = &s.high
		}
		victim := l.back()
		if victim.used && chances > 0 {
			chances--
			victim.used = false
			unlink(victim)
			l.pushFront(victim)
			continue
		}
		s.remove(victim)
	}
	e := &cacheEntry{key: k, value: value, charge: charge, high: high, ref: ref}
	s.m[k] = e
	s.used += charge
	s.list(high).pushFront(e)
	if ref != nil {
		ref.Store(&e.value)
	}
}

// REQUIRES: s.mu held.
func (s *cacheShard) list(high bool) *lruList {
	if high {
		return &s.high
	}
	return &s.normal
}

// REQUIRES: s.mu held; e is in the shard.
func (s *cacheShard) remove(e *cacheEntry) {
	unlink(e)
	delete(s.m, e.key)
	s.used -= e.charge
	if e.ref != nil {
		e.ref.Store(nil)
	}
}
