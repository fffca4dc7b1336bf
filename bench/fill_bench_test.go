package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkFill measures durable single-key writes: b.N writes shared by the
// writer goroutines, each writing one key per batch and waiting until it is
// durable before the next. One op is one durable write.
func BenchmarkFill(b *testing.B) {
	for _, order := range []string{"seq", "random"} {
		for _, name := range engineNames {
			for _, writers := range []int{1, 16, 256} {
				b.Run(fmt.Sprintf("%s/%s/writers=%d", order, name, writers), func(b *testing.B) {
					benchFill(b, name, order == "random", writers)
				})
			}
		}
	}
}

func benchFill(b *testing.B, name string, random bool, writers int) {
	ctx := context.Background()
	e, err := openEngine(ctx, name, b.TempDir(), 0)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := e.close(); err != nil {
			b.Error(err)
		}
	}()
	var next atomic.Int64
	lat := make([][]time.Duration, writers)
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	b.ResetTimer()
	for w := range writers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				start := time.Now()
				err := e.putDurable(ctx, makeKey(uint64(i), random), makeValue(uint64(i), valueSize))
				if err != nil {
					errs <- err
					return
				}
				lat[w] = append(lat[w], time.Since(start))
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	reportLatency(b, slices.Concat(lat...))
	if se, ok := e.(*strataEngine); ok {
		m := se.db.Metrics()
		b.ReportMetric(float64(b.N)/float64(max(m.WAL.Objects, 1)), "writes/walput")
	}
}

// reportLatency reports the median and 99th percentile of per-op latency.
func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))]) / float64(time.Microsecond)
	}
	b.ReportMetric(pct(0.50), "p50-us")
	b.ReportMetric(pct(0.99), "p99-us")
}
