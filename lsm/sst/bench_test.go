package sst

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchRows returns n rows with keys shaped like the keyspace's (a common
// prefix, a big-endian counter) and 100-byte values.
func benchRows(n int) []Row {
	rng := rand.New(rand.NewPCG(1, 1))
	rows := make([]Row, n)
	for i := range rows {
		v := make([]byte, 100)
		for j := range v {
			v[j] = byte('a' + rng.IntN(8))
		}
		rows[i] = Row{Key: fmt.Appendf(nil, "h\x00user:%010d", i), Seq: uint64(n - i), Kind: KindPut, Value: v}
	}
	return rows
}

func BenchmarkBuild(b *testing.B) {
	rows := benchRows(100_000)
	for _, comp := range compressions {
		b.Run(comp.String(), func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				bl := NewBuilder(BuilderOptions{BloomBitsPerKey: 10, Compression: comp})
				for _, r := range rows {
					if err := bl.Add(r); err != nil {
						b.Fatal(err)
					}
				}
				data, _, err := bl.Finish()
				if err != nil {
					b.Fatal(err)
				}
				size = len(data)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)), "ns/row")
			b.ReportMetric(float64(size), "bytes/sst")
		})
	}
}

func BenchmarkGet(b *testing.B) {
	rows := benchRows(100_000)
	for _, comp := range compressions {
		b.Run(comp.String(), func(b *testing.B) {
			data, _ := build(b, rows, BuilderOptions{BloomBitsPerKey: 10, Compression: comp})
			r := openBytes(b, data, NewCache(256<<20))
			ctx := context.Background()
			for _, row := range rows { // warm the cache
				if _, ok, err := r.Get(ctx, row.Key); !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, ok, err := r.Get(ctx, rows[i%len(rows)].Key); !ok || err != nil {
					b.Fatal(ok, err)
				}
				i += 7919
			}
		})
	}
	// Get copies the row it finds; Lookup, the engine's point read, shares
	// the block's memory.
	b.Run("lookup", func(b *testing.B) {
		data, _ := build(b, rows, BuilderOptions{BloomBitsPerKey: 10, Compression: CompressionS2})
		r := openBytes(b, data, NewCache(256<<20))
		ctx := context.Background()
		for _, row := range rows { // warm the cache
			if _, ok, _, err := r.Lookup(ctx, row.Key); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, ok, _, err := r.Lookup(ctx, rows[i%len(rows)].Key); !ok || err != nil {
				b.Fatal(ok, err)
			}
			i += 7919
		}
	})
	b.Run("absent", func(b *testing.B) {
		data, _ := build(b, rows, BuilderOptions{BloomBitsPerKey: 10})
		r := openBytes(b, data, NewCache(256<<20))
		ctx := context.Background()
		b.ReportAllocs()
		key := []byte("h\x00user:absent000")
		for b.Loop() {
			if _, ok, err := r.Get(ctx, key); ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
}

func BenchmarkIterate(b *testing.B) {
	rows := benchRows(100_000)
	for _, comp := range compressions {
		for _, cached := range []bool{true, false} {
			b.Run(fmt.Sprintf("%v/cached=%v", comp, cached), func(b *testing.B) {
				data, _ := build(b, rows, BuilderOptions{Compression: comp})
				var cache *Cache
				if cached {
					cache = NewCache(256 << 20)
				}
				r := openBytes(b, data, cache)
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					it := r.NewIter(ctx, IterOptions{})
					n := 0
					for ok := it.First(); ok; ok = it.Next() {
						n++
					}
					if err := it.Close(); err != nil || n != len(rows) {
						b.Fatal(n, err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)), "ns/row")
			})
		}
	}
}

// BenchmarkCacheGet reads blocks that are all cached, from every P: the
// block cache's cost on a read that hits, as under a working set that fits.
func BenchmarkCacheGet(b *testing.B) {
	const n = 1 << 16
	c := NewCache(n * (512 + cacheEntryOverhead) * 2)
	for i := range n {
		c.set(uint64(i%64), uint64(i), make([]byte, 512), i%8 == 0)
	}
	b.RunParallel(func(pb *testing.PB) {
		x := uint64(rand.Uint32())
		for pb.Next() {
			x = x*6364136223846793005 + 1442695040888963407
			i := (x >> 33) % n
			if _, ok := c.get(i%64, i); !ok {
				b.Fatal("miss")
			}
		}
	})
}
