package sst

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

func TestBloomFalsePositiveRate(t *testing.T) {
	const n, probes = 20000, 200000
	var hashes []uint64
	for i := range n {
		hashes = append(hashes, bloomHash(fmt.Appendf(nil, "present-%d", i)))
	}
	f, err := parseBloomFilter(appendBloomFilter(nil, hashes, 10, &Yielder{}))
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if !f.mayContain(bloomHash(fmt.Appendf(nil, "present-%d", i))) {
			t.Fatalf("false negative for key %d", i)
		}
	}
	fp := 0
	for i := range probes {
		if f.mayContain(bloomHash(fmt.Appendf(nil, "absent-%d", i))) {
			fp++
		}
	}
	rate := float64(fp) / probes
	t.Logf("false-positive rate at 10 bits/key: %.3f%%", 100*rate)
	if rate < 0.003 || rate > 0.015 {
		t.Fatalf("false-positive rate %.3f%%, want about 1%%", 100*rate)
	}
}

func TestBloomThroughReader(t *testing.T) {
	rows := sortedRows(rand.New(rand.NewPCG(8, 8)), 3000, 1<<20)
	data, _ := build(t, rows, BuilderOptions{BloomBitsPerKey: 10})
	r := openBytes(t, data, nil)
	fp := 0
	for i := range 20000 {
		_, ok, filtered, err := r.Lookup(context.Background(), fmt.Appendf(nil, "nope-%d", i))
		if err != nil || ok {
			t.Fatalf("Lookup of an absent key: ok %v, %v", ok, err)
		}
		if !filtered {
			fp++
		}
	}
	if fp > 400 { // 2%
		t.Fatalf("%d of 20000 absent keys pass the filter", fp)
	}
}

func sameShardKeys(c *Cache, n int) []cacheKey {
	want := c.shard(cacheKey{1, 0})
	var keys []cacheKey
	for off := uint64(0); len(keys) < n; off++ {
		if k := (cacheKey{1, off}); c.shard(k) == want {
			keys = append(keys, k)
		}
	}
	return keys
}

func TestCacheEvictionBound(t *testing.T) {
	const capacity = 1 << 20
	c := NewCache(capacity)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range 20000 {
		c.set(uint64(rng.IntN(8)), uint64(i), make([]byte, rng.IntN(8000)), rng.IntN(10) == 0)
		if m := c.Metrics(); m.Bytes > capacity {
			t.Fatalf("cache holds %d bytes, capacity %d", m.Bytes, capacity)
		}
	}
	m := c.Metrics()
	if m.Bytes < capacity/2 || m.Entries == 0 {
		t.Fatalf("cache nearly empty after filling: %+v", m)
	}
	// A block larger than a shard is never cached.
	c.set(99, 0, make([]byte, capacity/cacheShards), false)
	if _, ok := c.get(99, 0); ok {
		t.Fatal("oversized block cached")
	}
}

func TestCacheLRUAndPriority(t *testing.T) {
	const capacity = cacheShards * 10 * (1000 + cacheEntryOverhead) // 10 entries of 1000 bytes per shard
	c := NewCache(capacity)
	keys := sameShardKeys(c, 40)
	val := make([]byte, 1000)
	c.set(keys[0].id, keys[0].off, val, true) // high priority
	for _, k := range keys[1:10] {
		c.set(k.id, k.off, val, false)
	}
	c.get(keys[1].id, keys[1].off)  // keys[1] becomes the newest normal entry
	for _, k := range keys[10:18] { // evicts keys[2:10], the least recently used
		c.set(k.id, k.off, val, false)
	}
	if _, ok := c.get(keys[0].id, keys[0].off); !ok {
		t.Fatal("high-priority entry evicted while normal entries remained")
	}
	if _, ok := c.get(keys[1].id, keys[1].off); !ok {
		t.Fatal("recently used entry evicted before older ones")
	}
	if _, ok := c.get(keys[2].id, keys[2].off); ok {
		t.Fatal("least recently used entry survived")
	}
	// With only high-priority entries left, they are evicted LRU too.
	for _, k := range keys[18:40] {
		c.set(k.id, k.off, val, true)
	}
	if _, ok := c.get(keys[0].id, keys[0].off); ok {
		t.Fatal("oldest high-priority entry survived a shard full of newer ones")
	}
	m := c.Metrics()
	if m.Hits == 0 || m.Misses == 0 || m.Entries != 10 {
		t.Fatalf("metrics %+v", m)
	}
}

func TestCacheReplace(t *testing.T) {
	c := NewCache(1 << 20)
	c.set(1, 1, make([]byte, 100), false)
	c.set(1, 1, make([]byte, 300), false)
	v, ok := c.get(1, 1)
	if m := c.Metrics(); !ok || len(v) != 300 || m.Entries != 1 || m.Bytes != 300+cacheEntryOverhead {
		t.Fatalf("after replace: %d %v %+v", len(v), ok, m)
	}
}

func TestCacheConcurrent(t *testing.T) {
	c := NewCache(256 << 10)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 0))
			for range 5000 {
				id, off := uint64(rng.IntN(4)), uint64(rng.IntN(500))
				if v, ok := c.get(id, off); ok && len(v) != int(off) {
					panic("cache returned another block's value")
				}
				c.set(id, off, make([]byte, off), rng.IntN(5) == 0)
			}
		}()
	}
	wg.Wait()
	if m := c.Metrics(); m.Bytes > 256<<10 {
		t.Fatalf("over capacity: %+v", m)
	}
}

// TestCacheAllRecentlyUsed: when every entry of a full shard was hit, an
// insert still evicts just what it needs (one entry here), and the shard
// stays within its capacity. The second chances are bounded: the oldest
// maxSecondChances entries go back to the front and the next one is
// evicted, rather than a pass over the whole shard that would end by
// evicting the oldest.
func TestCacheAllRecentlyUsed(t *testing.T) {
	const capacity = cacheShards * 10 * (1000 + cacheEntryOverhead)
	c := NewCache(capacity)
	keys := sameShardKeys(c, 11)
	val := make([]byte, 1000)
	for _, k := range keys[:10] {
		c.set(k.id, k.off, val, false)
	}
	for _, k := range keys[:10] {
		if _, ok := c.get(k.id, k.off); !ok {
			t.Fatal("entry missing before the shard was full")
		}
	}
	c.set(keys[10].id, keys[10].off, val, false)
	var gone []int
	for i, k := range keys[:10] {
		if _, ok := c.get(k.id, k.off); !ok {
			gone = append(gone, i)
		}
	}
	if m := c.Metrics(); len(gone) != 1 || m.Entries != 10 || m.Bytes > capacity {
		t.Fatalf("entries %v evicted for one insert; metrics %+v", gone, m)
	}
	if gone[0] != maxSecondChances {
		t.Fatalf("evicted entry %d, want %d: the %d oldest get a second chance, no more", gone[0], maxSecondChances, maxSecondChances)
	}
}
