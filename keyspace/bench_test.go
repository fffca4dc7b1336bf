package keyspace

import (
	"context"
	"fmt"
	"testing"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm"
)

// BenchmarkDelHash times DEL of hashes of growing size: it writes one
// metadata row whatever the size, so the time per DEL stays flat.
//
//	go test -run '^$' -bench DelHash -benchtime 3x ./keyspace
func BenchmarkDelHash(b *testing.B) {
	for _, fields := range []int{10, 10_000, 1_000_000} {
		b.Run(fmt.Sprintf("fields=%d", fields), func(b *testing.B) {
			ctx := context.Background()
			db, s := benchStore(b)
			defer db.Close()
			k := []byte("big")
			for b.Loop() {
				b.StopTimer()
				for i := 0; i < fields; i += 1000 {
					pairs := make([][2][]byte, 0, 1000)
					for j := i; j < min(i+1000, fields); j++ {
						pairs = append(pairs, [2][]byte{fmt.Appendf(nil, "field-%07d", j), []byte("value")})
					}
					if _, err := s.HSet(ctx, 0, k, pairs...); err != nil {
						b.Fatal(err)
					}
				}
				// The DEL waits for its WAL object, and the WAL acknowledges
				// in order: let the setup's backlog be stored first, so the
				// DEL is timed alone.
				if err := db.LastWrite().Durable(ctx); err != nil {
					b.Fatal(err)
				}
				writes := db.Metrics().Writes
				b.StartTimer()
				if n, err := s.Del(ctx, 0, k); err != nil || n != 1 {
					b.Fatalf("del = %d, %v", n, err)
				}
				b.StopTimer()
				b.ReportMetric(float64(db.Metrics().Writes-writes), "engine-writes/op")
				b.StartTimer()
			}
		})
	}
}

// BenchmarkLRange times LRANGE key 0 99 (redis-benchmark's LRANGE_100) on a
// list of 10,000 elements in the memtable.
//
//	go test -run '^$' -bench LRange ./keyspace
func BenchmarkLRange(b *testing.B) {
	ctx := context.Background()
	db, s := benchStore(b)
	defer db.Close()
	k := []byte("mylist")
	for range 100 {
		vals := make([][]byte, 100)
		for i := range vals {
			vals[i] = []byte("xxx")
		}
		if _, err := s.LPush(ctx, 0, k, vals...); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		vals, err := s.LRange(ctx, 0, k, 0, 99)
		if err != nil || len(vals) != 100 {
			b.Fatalf("lrange = %d elements, %v", len(vals), err)
		}
	}
}

// benchStore opens a Store over an engine on an in-memory bucket; the
// caller closes the engine.
func benchStore(b *testing.B) (*lsm.DB, *Store) {
	ctx := context.Background()
	db, err := lsm.Open(ctx, blob.NewMemBucket(), lsm.Options{})
	if err != nil {
		b.Fatal(err)
	}
	s, err := Open(ctx, db, Options{})
	if err != nil {
		db.Close()
		b.Fatal(err)
	}
	return db, s
}
