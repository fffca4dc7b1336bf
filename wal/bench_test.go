package wal

import (
	"fmt"
	"testing"

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
					if _, err := encodeBatches(rows, size, 1, 1, c); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
