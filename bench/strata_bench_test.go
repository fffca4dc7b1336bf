package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm"
	"github.com/stratakv/strata/manifest"
)

// BenchmarkWALPutRate offers a steady durable write rate (-walrate.rate from
// -walrate.writers goroutines for -walrate.duration) to Strata on the local
// bucket and reports how many WAL objects that costs: group commit must keep
// PUTs bounded by time (one in flight, or one per WALFlushInterval), not by
// the write rate. Strata only; each iteration is one whole run, so use
// -benchtime=1x.
func BenchmarkWALPutRate(b *testing.B) {
	for _, interval := range []time.Duration{0, 50 * time.Millisecond} {
		b.Run(fmt.Sprintf("interval=%v", interval), func(b *testing.B) {
			for range b.N {
				runWALRate(b, lsm.Options{WALFlushInterval: interval})
			}
		})
	}
}

func runWALRate(b *testing.B, opts lsm.Options) {
	ctx := context.Background()
	e, err := openStrata(ctx, b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	defer e.close()
	writers, rate := *flagWALWriters, *flagWALRate
	// Writer w issues its j-th write at start + (j*writers + w)/rate, or at
	// once if it is behind, and waits for its durability on the side, as a
	// pipelining client does: the offered rate stays at -walrate.rate even
	// when a write takes longer to become durable than writers/rate (with a
	// 50 ms flush interval it always does).
	step := time.Second * time.Duration(writers) / time.Duration(rate)
	total := int(int64(rate) * int64(*flagWALDuration) / int64(time.Second))
	m0 := e.db.Metrics()
	var (
		mu      sync.Mutex
		lat     = make([]time.Duration, 0, total)
		failed  atomic.Pointer[error]
		issuers sync.WaitGroup
		waiters sync.WaitGroup
	)
	fail := func(err error) { failed.CompareAndSwap(nil, &err) }
	start := time.Now()
	for w := range writers {
		issuers.Go(func() {
			offset := time.Second * time.Duration(w) / time.Duration(rate)
			var batch lsm.Batch
			for j := 0; j*writers+w < total && failed.Load() == nil; j++ {
				time.Sleep(time.Until(start.Add(offset + time.Duration(j)*step)))
				i := uint64(j*writers + w)
				t := time.Now()
				batch.Reset()
				batch.Put(makeKey(i, true), makeValue(i, valueSize))
				h, err := e.db.Write(ctx, &batch)
				if err != nil {
					fail(err)
					return
				}
				waiters.Go(func() {
					if err := h.Durable(ctx); err != nil {
						fail(err)
						return
					}
					d := time.Since(t)
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				})
			}
		})
	}
	issuers.Wait()
	waiters.Wait()
	elapsed := time.Since(start)
	if errp := failed.Load(); errp != nil {
		b.Fatal(*errp)
	}
	m := e.db.Metrics()
	puts := m.WAL.Objects - m0.WAL.Objects
	b.ReportMetric(float64(total)/elapsed.Seconds(), "writes/s")
	b.ReportMetric(float64(puts)/elapsed.Seconds(), "walputs/s")
	b.ReportMetric(float64(total)/float64(max(puts, 1)), "writes/walput")
	reportLatency(b, lat)
}

// BenchmarkLocalBucketPut times one create-if-absent PUT of a WAL-sized
// object (one 100-byte write) on the local bucket, as the WAL writer issues
// it: the floor under Strata's single-writer durable write latency, to read
// BenchmarkFill's writers=1 rows against. Strata only.
func BenchmarkLocalBucketPut(b *testing.B) {
	ctx := context.Background()
	bkt, err := blob.NewLocalBucket(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bkt.Close() }) // its spare temp files, before the directory goes
	body := makeValue(0, 256)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		t := time.Now()
		err := bkt.Upload(ctx, blob.WALName(uint64(i+1)), bytes.NewReader(body), objstore.WithIfNotExists())
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	reportLatency(b, lat)
}

// BenchmarkRecovery writes -recovery.bytes with default options, waits until
// every frozen memtable is flushed and everything is durable, then times
// lsm.Open of a second DB on the same directory: what a restarted process
// pays. Open time must follow the WAL bytes replayed, not the data size.
// Each iteration is one whole run, so use -benchtime=1x.
func BenchmarkRecovery(b *testing.B) {
	for range b.N {
		runRecovery(b)
	}
}

func runRecovery(b *testing.B) {
	ctx := context.Background()
	b.StopTimer()
	dir := b.TempDir()
	first, err := openStrata(ctx, dir, lsm.Options{})
	if err != nil {
		b.Fatal(err)
	}
	written, err := loadBytes(ctx, first.db, *flagRecoveryBytes)
	if err != nil {
		first.close()
		b.Fatal(err)
	}
	if err := waitFlushed(ctx, first.db); err != nil {
		first.close()
		b.Fatal(err)
	}
	bkt, err := blob.NewLocalBucket(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bkt.Close() }) // its spare temp files, before the directory goes
	walBytes, walObjects, err := unflushedWAL(ctx, bkt)
	if err != nil {
		b.Fatal(err)
	}
	before := first.db.Metrics()

	b.StartTimer()
	t := time.Now()
	second, err := lsm.Open(ctx, bkt, lsm.Options{})
	openTime := time.Since(t)
	b.StopTimer()
	if err != nil {
		first.close()
		b.Fatal(err)
	}
	after := second.Metrics()
	if err := checkSample(ctx, second, written/int64(keySize+*flagRecoveryValue)); err != nil {
		b.Error(err)
	}
	// The first DB is fenced now; its Close is expected to report that.
	if err := first.close(); err != nil && !errors.Is(err, lsm.ErrFenced) {
		b.Logf("close of the fenced first DB: %v", err)
	}
	if err := second.Close(); err != nil {
		b.Fatal(err)
	}
	const mib = 1 << 20
	b.ReportMetric(float64(openTime.Microseconds())/1e3, "open-ms")
	b.ReportMetric(float64(written)/mib, "written-MiB")
	b.ReportMetric(float64(before.SSTBytes)/mib, "sst-MiB")
	b.ReportMetric(float64(walBytes)/mib, "walreplay-MiB")
	b.ReportMetric(float64(walObjects), "walreplay-objs")
	// Open hands the replayed memtable to the flusher at once, so it is
	// counted with the frozen ones.
	b.ReportMetric(float64(after.UnflushedBytes)/mib, "replayedmem-MiB")
	// The engine has no compactor of its own: a large load leaves many L0
	// SSTs, and past L0SlowdownSSTs every write sleeps. Shown so a slow
	// load is not mistaken for slow recovery.
	b.ReportMetric(float64(before.L0SSTs), "l0-ssts")
	b.ReportMetric(float64(before.WriteSlowdowns), "write-slowdowns")
	b.ReportMetric(before.StallTime.Seconds(), "stall-s")
	if before.MemtableBytes > 0 && after.UnflushedBytes == 0 && after.Flushes == 0 {
		b.Errorf("replay lost the unflushed memtable: %d bytes before, none after", before.MemtableBytes)
	}
}

// loadBytes writes about n bytes of keys and values from several writers in
// 64-row batches and returns once all of it is durable.
func loadBytes(ctx context.Context, db *lsm.DB, n int64) (int64, error) {
	valSize := *flagRecoveryValue
	perBatch := int64(64 * (keySize + valSize))
	batches := (n + perBatch - 1) / perBatch
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, *flagRecoveryWriter)
	for w := range errs {
		wg.Go(func() {
			var b lsm.Batch
			var last lsm.WriteHandle
			for {
				bi := next.Add(1) - 1
				if bi >= batches {
					break
				}
				b.Reset()
				for k := range int64(64) {
					i := uint64(bi*64 + k)
					b.Put(makeKey(i, true), makeValue(i, valSize))
				}
				h, err := db.Write(ctx, &b)
				if err != nil {
					errs[w] = err
					return
				}
				last = h
			}
			errs[w] = last.Durable(ctx) // a zero handle (no write) is durable
		})
	}
	wg.Wait()
	return batches * perBatch, errors.Join(errs...)
}

// checkSample reads back a random sample of the n keys loadBytes wrote, so
// that a fast Open that lost data cannot pass for a fast recovery.
func checkSample(ctx context.Context, db *lsm.DB, n int64) error {
	r := rand.New(rand.NewPCG(uint64(n), 3))
	for range 2000 {
		i := uint64(r.Int64N(n))
		v, err := db.Get(ctx, makeKey(i, true))
		if err != nil {
			return fmt.Errorf("bench: key %d after reopen: %w", i, err)
		}
		if !bytes.Equal(v, makeValue(i, *flagRecoveryValue)) {
			return fmt.Errorf("bench: key %d after reopen has a wrong value", i)
		}
	}
	return nil
}

// waitFlushed waits until no frozen memtable is waiting for its L0 flush,
// so what a reopen replays is exactly the active memtable's WAL.
func waitFlushed(ctx context.Context, db *lsm.DB) error {
	deadline := time.Now().Add(5 * time.Minute)
	for db.Metrics().ImmutableMemtables > 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: frozen memtables not flushed after 5m: %+v", db.Metrics())
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// unflushedWAL sums the WAL objects a reopen must replay: those after the
// latest manifest's replay_after_wal_id.
func unflushedWAL(ctx context.Context, bkt objstore.Bucket) (size int64, objects int, err error) {
	man, err := manifest.NewStore(bkt).Latest(ctx)
	if err != nil {
		return 0, 0, err
	}
	err = bkt.Iter(ctx, blob.WALDir, func(name string) error {
		id, ok := blob.ParseWALName(name)
		if !ok || id <= man.ReplayAfterWALID {
			return nil
		}
		attrs, err := bkt.Attributes(ctx, name)
		if err != nil {
			return err
		}
		size += attrs.Size
		objects++
		return nil
	})
	return size, objects, err
}
