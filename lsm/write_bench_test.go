package lsm

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stratakv/strata/blob"
)

// BenchmarkWrite applies one-row batches (a SET each) from every P, with
// the WAL flushed once a second as under appendfsync everysec: the
// engine's cost per write, without the wait for durability.
func BenchmarkWrite(b *testing.B) {
	ctx := context.Background()
	db, err := Open(ctx, blob.NewMemBucket(), Options{WALFlushInterval: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	value := make([]byte, 16)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var batch Batch
		key := make([]byte, 0, 32)
		for pb.Next() {
			key = fmt.Appendf(key[:0], "s\x00\x00key:%08d", rand.IntN(100_000))
			batch.Reset()
			batch.Put(key, value)
			if _, err := db.Write(ctx, &batch); err != nil {
				b.Fatal(err)
			}
		}
	})
}
