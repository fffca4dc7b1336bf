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
			db, s := benchStore(b, Options{})
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
// list of 10,000 elements: all in the memtable; all flushed to an SST; and
// with the first 5,000 positions popped and pushed again, so that under
// the memtable's rows two SSTs hold older versions of them and their
// deletions (the matrix's LPUSH, LPOP, then LRANGE's own LPUSH).
//
//	go test -run '^$' -bench LRange ./keyspace
func BenchmarkLRange(b *testing.B) {
	ctx := context.Background()
	for _, layout := range []string{"memtable", "flushed", "reused"} {
		b.Run(layout, func(b *testing.B) {
			db, s := benchStore(b, Options{})
			defer db.Close()
			k := []byte("mylist")
			push := func(n int) {
				vals := make([][]byte, 100)
				for i := range vals {
					vals[i] = []byte("xxx")
				}
				for range n / 100 {
					if _, err := s.LPush(ctx, 0, k, vals...); err != nil {
						b.Fatal(err)
					}
				}
			}
			flush := func() {
				if err := db.Flush(ctx); err != nil {
					b.Fatal(err)
				}
			}
			push(10000)
			switch layout {
			case "flushed":
				flush()
			case "reused":
				flush()
				if _, err := s.LPop(ctx, 0, k, 5000); err != nil {
					b.Fatal(err)
				}
				flush()
				push(5000)
			}
			for b.Loop() {
				vals, err := s.LRange(ctx, 0, k, 0, 99)
				if err != nil || len(vals) != 100 {
					b.Fatalf("lrange = %d elements, %v", len(vals), err)
				}
			}
		})
	}
}

// benchStore opens a Store with options o over an engine on an in-memory
// bucket; the caller closes the engine.
func benchStore(b *testing.B, o Options) (*lsm.DB, *Store) {
	ctx := context.Background()
	db, err := lsm.Open(ctx, blob.NewMemBucket(), lsm.Options{})
	if err != nil {
		b.Fatal(err)
	}
	s, err := Open(ctx, db, o)
	if err != nil {
		db.Close()
		b.Fatal(err)
	}
	return db, s
}

// BenchmarkWriteCommands times the write commands of redis-benchmark's
// default tests on an async store over an in-memory bucket, with their
// allocations: a command's CPU without the network. Keys and members cycle
// through 100,000, as redis-benchmark -r 100000 picks them. The figures
// include the engine's background work (WAL encoding, flushes) and the
// in-memory bucket copying every object it is given, which a disk or S3
// bucket does not; the closures allocate the keys and members they pass.
//
//	go test -run '^$' -bench WriteCommands -benchmem ./keyspace
func BenchmarkWriteCommands(b *testing.B) {
	val := []byte("xxx")
	keyOf := func(i int) []byte { return fmt.Appendf(nil, "key:%012d", i%100_000) }
	for _, bc := range []struct {
		name string
		run  func(ctx context.Context, s *Store, i int) error
	}{
		{"SET", func(ctx context.Context, s *Store, i int) error {
			_, _, _, err := s.Set(ctx, 0, keyOf(i), val, SetOptions{})
			return err
		}},
		{"INCR", func(ctx context.Context, s *Store, i int) error {
			_, err := s.IncrBy(ctx, 0, keyOf(i), 1)
			return err
		}},
		{"LPUSH", func(ctx context.Context, s *Store, i int) error {
			_, err := s.LPush(ctx, 0, []byte("mylist"), val)
			return err
		}},
		{"SADD", func(ctx context.Context, s *Store, i int) error {
			_, err := s.SAdd(ctx, 0, []byte("myset"), keyOf(i))
			return err
		}},
		{"HSET", func(ctx context.Context, s *Store, i int) error {
			_, err := s.HSet(ctx, 0, []byte("myhash"), [2][]byte{keyOf(i), val})
			return err
		}},
		{"ZADD", func(ctx context.Context, s *Store, i int) error {
			_, err := s.ZAdd(ctx, 0, []byte("myzset"), ZAddOptions{}, ZMember{Score: float64(i % 1000), Member: keyOf(i)})
			return err
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			db, s := benchStore(b, Options{Async: true})
			defer db.Close()
			i := 0
			for b.Loop() {
				if err := bc.run(ctx, s, i); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
