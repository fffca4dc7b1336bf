package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// The read benchmarks share one preloaded database per engine, built on
// first use. At most one handle per engine is open at a time: Strata fences
// an older writer on open, and Pebble locks its directory.

type openFixture struct {
	variant string // "hot" or "cold"
	e       engine
}

var (
	builtFixtures = map[string]bool{}
	openFixtures  = map[string]*openFixture{}
)

func fixtureKey(i int) []byte   { return makeKey(uint64(i), true) }
func fixtureValue(i int) []byte { return makeValue(uint64(i), valueSize) }

// fixture returns engine name's preloaded database opened for variant: hot
// has a block cache holding everything and is warmed by reading every key
// once; cold has a tiny cache, so reads go to the files.
func fixture(b *testing.B, name, variant string) engine {
	ctx := context.Background()
	dir := filepath.Join(fixtureRoot, name)
	if !builtFixtures[name] {
		if err := buildFixture(ctx, name, dir); err != nil {
			b.Fatal(err)
		}
		builtFixtures[name] = true
	}
	if f := openFixtures[name]; f != nil {
		if f.variant == variant {
			return f.e
		}
		delete(openFixtures, name)
		if err := f.e.close(); err != nil {
			b.Fatal(err)
		}
	}
	cache := *flagHotCache
	if variant == "cold" {
		cache = *flagColdCache
	}
	e, err := openEngine(ctx, name, dir, cache)
	if err != nil {
		b.Fatal(err)
	}
	openFixtures[name] = &openFixture{variant: variant, e: e}
	if variant == "hot" {
		for i := range *flagGetKeys {
			if _, ok, err := e.get(ctx, fixtureKey(i)); err != nil || !ok {
				b.Fatalf("warm %s: key %d: ok=%v err=%v", name, i, ok, err)
			}
		}
	}
	return e
}

func buildFixture(ctx context.Context, name, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	e, err := openEngine(ctx, name, dir, 0)
	if err != nil {
		return err
	}
	if err := e.load(ctx, *flagGetKeys, fixtureKey, fixtureValue); err != nil {
		e.close()
		return fmt.Errorf("bench: preload %s: %w", name, err)
	}
	return e.close()
}

func closeFixtures() error {
	var errs []error
	for name, f := range openFixtures {
		errs = append(errs, f.e.close())
		delete(openFixtures, name)
	}
	return errors.Join(errs...)
}

// BenchmarkGet measures random point reads of present keys from SSTs, one
// goroutine. One op is one Get.
func BenchmarkGet(b *testing.B) {
	for _, variant := range []string{"hot", "cold"} {
		for _, name := range engineNames {
			b.Run(variant+"/"+name, func(b *testing.B) { benchGet(b, name, variant) })
		}
	}
}

func benchGet(b *testing.B, name, variant string) {
	ctx := context.Background()
	e := fixture(b, name, variant)
	r := rand.New(rand.NewPCG(uint64(b.N), 7))
	hits0, misses0 := e.cacheStats()
	reads0 := objectReads(e)
	b.ResetTimer()
	for range b.N {
		i := r.IntN(*flagGetKeys)
		v, ok, err := e.get(ctx, fixtureKey(i))
		if err != nil || !ok || !bytes.Equal(v, fixtureValue(i)) {
			b.Fatalf("get key %d: ok=%v err=%v", i, ok, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	reportCache(b, e, hits0, misses0)
	if reads0 >= 0 {
		b.ReportMetric(float64(objectReads(e)-reads0)/float64(b.N), "objgets/op")
	}
}

// objectReads returns Strata's bucket GET count, or -1 for Pebble, which
// reads files directly.
func objectReads(e engine) int64 {
	if se, ok := e.(*strataEngine); ok {
		return int64(se.objectReads())
	}
	return -1
}

// reportCache reports the block cache hit rate since the given counters.
func reportCache(b *testing.B, e engine, hits0, misses0 uint64) {
	hits, misses := e.cacheStats()
	if total := (hits - hits0) + (misses - misses0); total > 0 {
		b.ReportMetric(100*float64(hits-hits0)/float64(total), "cachehit-%")
	}
}

// BenchmarkScan measures short range scans from a random present key with a
// fresh iterator each, over the hot fixture. One op is one scan.
func BenchmarkScan(b *testing.B) {
	for _, name := range engineNames {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			e := fixture(b, name, "hot")
			r := rand.New(rand.NewPCG(uint64(b.N), 11))
			total := 0
			b.ResetTimer()
			for range b.N {
				start := fixtureKey(r.IntN(*flagGetKeys))
				keys, _, err := e.scan(ctx, start, *flagScanKeys)
				if err != nil || keys == 0 {
					b.Fatalf("scan from %s: %d keys, err %v", start, keys, err)
				}
				total += keys
			}
			b.StopTimer()
			b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "keys/s")
		})
	}
}
