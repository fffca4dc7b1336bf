package wal

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
)

// BenchmarkEncodeBatches encodes a second of pipelined HSETs under
// appendfsync everysec (one object of 100k small rows) and a group commit
// of 50 SETs under always.
func BenchmarkEncodeBatches(b *testing.B) {
	for _, n := range []int{50, 100_000} {
		rows, size := make([]sst.Row, n), 0
		for i := range rows {
			rows[i] = sst.Row{
				Key:   fmt.Appendf(nil, "h\x00\x00\x06myhash\x00\x00\x00\x00\x00\x00\x00\x01element:%012d", i),
				Value: fmt.Appendf(nil, "value-%d", i%1000),
				Seq:   uint64(i/2 + 1), Kind: sst.KindPut,
			}
			size += len(rows[i].Key) + len(rows[i].Value) + 16
		}
		for _, c := range []sst.Compression{sst.CompressionNone, sst.CompressionS2} {
			b.Run(fmt.Sprintf("rows=%d/c=%d", n, c), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := encodeBatches(rows, size, 1, header{epoch: 1, id: 1}, c); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkGroupCommit runs 50 closed-loop writers, each appending a batch
// and waiting for it to be durable, against PUTs that take 1 ms, as 50
// redis-benchmark clients drive SET under appendfsync always. Besides
// ns/op it reports the process's CPU time per write and the writes per
// object: the writer's own overhead, which under a CPU-bound server is
// throughput.
func BenchmarkGroupCommit(b *testing.B) {
	w := NewWriter(&slowBucket{Bucket: blob.NewMemBucket(), d: time.Millisecond}, 1, 0, nil, Options{Hedge: -1})
	defer w.Close()
	var seq atomic.Uint64
	var mu sync.Mutex // Append's callers hold the engine's commit lock
	cpu0 := processCPU()
	b.SetParallelism(25) // 50 goroutines on 2 Ps
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			mu.Lock()
			s := seq.Add(1)
			err := w.Append([]sst.Row{{Key: []byte("key"), Value: []byte("value"), Seq: s, Kind: sst.KindPut}}, 1)
			mu.Unlock()
			if err != nil {
				b.Error(err)
				return
			}
			if err := w.WaitDurable(context.Background(), s); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	if st := w.Stats(); st.Objects > 0 {
		b.ReportMetric(float64(st.Batches)/float64(st.Objects), "writes/object")
	}
}

// processCPU returns the user and system CPU time the process used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
