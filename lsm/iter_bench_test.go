package lsm

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stratakv/strata/blob"
)

// BenchmarkIterScan reads 100 consecutive keys from a random start, as
// LRANGE key 0 99 does, over 100k keys each written in versions rounds:
// every round but the last is flushed to an L0 SST, so a scan merges the
// memtable with versions-1 SSTs and passes over every key's older
// versions (a list whose head positions were popped and pushed again).
func BenchmarkIterScan(b *testing.B) {
	const keys, span = 100_000, 100
	for _, versions := range []int{1, 4} {
		b.Run(fmt.Sprintf("versions=%d", versions), func(b *testing.B) {
			ctx := context.Background()
			db, err := Open(ctx, blob.NewMemBucket(), Options{WALFlushInterval: time.Second})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			value := make([]byte, 3)
			var last WriteHandle
			for v := range versions {
				var batch Batch
				for i := range keys {
					batch.Put(fmt.Appendf(nil, "l\x00\x00mylist\x00%08d", i), value)
					if batch.Len() == 1000 {
						if last, err = db.Write(ctx, &batch); err != nil {
							b.Fatal(err)
						}
						batch.Reset()
					}
				}
				if v < versions-1 {
					if err := db.Flush(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
			// Every write in the WAL before the scans start: otherwise the
			// WAL's timer decides how much of its encoding falls inside
			// the timed loop or in Close, and a count of instructions
			// (scripts/instructions.sh) moves by more than the scans cost.
			if err := last.Durable(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			lower := make([]byte, 0, 32)
			for b.Loop() {
				lower = fmt.Appendf(lower[:0], "l\x00\x00mylist\x00%08d", rand.IntN(keys-span))
				it := db.NewIter(ctx, IterOptions{LowerBound: lower})
				n := 0
				for ok := it.First(); ok && n < span; ok = it.Next() {
					n++
				}
				if err := it.Close(); err != nil || n != span {
					b.Fatal(n, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*span), "ns/key")
		})
	}
}
