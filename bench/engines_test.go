package bench

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"strconv"

	"github.com/cockroachdb/pebble/v2"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm"
)

// engine is what the benchmarks need from either database. Implementations
// must be safe for concurrent use by the write benchmarks.
type engine interface {
	// putDurable writes one key in its own batch and returns once it is
	// durable.
	putDurable(ctx context.Context, key, value []byte) error
	// load writes n keys in large batches without waiting for each, then
	// waits until all are durable and flushed to SSTs.
	load(ctx context.Context, n int, key func(i int) []byte, value func(i int) []byte) error
	// get returns a copy of the value of key.
	get(ctx context.Context, key []byte) ([]byte, bool, error)
	// scan reads up to n keys from the first key >= start with a fresh
	// iterator and returns how many it read and their total size.
	scan(ctx context.Context, start []byte, n int) (keys, bytes int, err error)
	// cacheStats returns the block cache's hit and miss counters.
	cacheStats() (hits, misses uint64)
	close() error
}

const (
	keySize   = 16
	valueSize = 100
)

// engineNames are the sub-benchmark names, Strata first.
var engineNames = []string{"strata", "pebble"}

// openEngine opens engine name in dir. cacheBytes 0 keeps the engine's
// default block cache.
func openEngine(ctx context.Context, name, dir string, cacheBytes int64) (engine, error) {
	switch name {
	case "strata":
		return openStrata(ctx, dir, lsm.Options{BlockCacheBytes: cacheBytes, WALInflight: walInflight()})
	case "pebble":
		return openPebble(dir, cacheBytes)
	}
	return nil, fmt.Errorf("bench: unknown engine %q", name)
}

// makeKey returns the 16-byte key of index i: hex of i for sequential
// order, hex of a bijective mix of i for random order.
func makeKey(i uint64, random bool) []byte {
	if random {
		i = mix64(i)
	}
	var raw [8]byte
	binary.BigEndian.PutUint64(raw[:], i)
	k := make([]byte, keySize)
	hex.Encode(k, raw[:])
	return k
}

// mix64 is the splitmix64 finalizer: a bijection, so distinct indexes give
// distinct keys.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// valuePool is incompressible data that values are sliced from, so neither
// engine's compression flatters it.
var valuePool = func() []byte {
	r := rand.New(rand.NewPCG(1, 2))
	p := make([]byte, 1<<20)
	for i := range p {
		p[i] = byte(r.Uint32())
	}
	return p
}()

// makeValue returns a value of size n for index i (a view of valuePool).
func makeValue(i uint64, n int) []byte {
	off := int(mix64(i) % uint64(len(valuePool)-n))
	return valuePool[off : off+n]
}

type strataEngine struct {
	db  *lsm.DB
	bkt *blob.LocalBucket
}

func openStrata(ctx context.Context, dir string, opts lsm.Options) (*strataEngine, error) {
	bkt, err := blob.NewLocalBucket(dir)
	if err != nil {
		return nil, err
	}
	db, err := lsm.Open(ctx, bkt, opts)
	if err != nil {
		bkt.Close()
		return nil, err
	}
	return &strataEngine{db: db, bkt: bkt}, nil
}

func (e *strataEngine) putDurable(ctx context.Context, key, value []byte) error {
	var b lsm.Batch
	b.Put(key, value)
	h, err := e.db.Write(ctx, &b)
	if err != nil {
		return err
	}
	return h.Durable(ctx)
}

func (e *strataEngine) load(ctx context.Context, n int, key, value func(int) []byte) error {
	var b lsm.Batch
	var last lsm.WriteHandle
	for i := 0; i < n; i++ {
		b.Put(key(i), value(i))
		if b.Len() == 1000 || i == n-1 {
			h, err := e.db.Write(ctx, &b)
			if err != nil {
				return err
			}
			last = h
			b.Reset()
		}
	}
	if err := last.Durable(ctx); err != nil { // a zero handle (no write) is durable
		return err
	}
	return e.db.Flush(ctx)
}

func (e *strataEngine) get(ctx context.Context, key []byte) ([]byte, bool, error) {
	v, err := e.db.Get(ctx, key)
	if errors.Is(err, lsm.ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

func (e *strataEngine) scan(ctx context.Context, start []byte, n int) (int, int, error) {
	it := e.db.NewIter(ctx, lsm.IterOptions{LowerBound: start})
	keys, size := 0, 0
	for ok := it.SeekGE(start); ok && keys < n; ok = it.Next() {
		keys++
		size += len(it.Key()) + len(it.Value())
	}
	return keys, size, it.Close()
}

func (e *strataEngine) cacheStats() (uint64, uint64) {
	m := e.db.Metrics().BlockCache
	return m.Hits, m.Misses
}

// objectReads counts whole and ranged GETs the engine sent to its bucket.
func (e *strataEngine) objectReads() uint64 {
	c := e.db.Metrics().ObjectStore
	return c.Get + c.GetRange
}

// close closes the engine, then the bucket (which removes its spare temp
// files).
func (e *strataEngine) close() error {
	err := e.db.Close()
	e.bkt.Close()
	return err
}

type pebbleEngine struct {
	db *pebble.DB
}

func openPebble(dir string, cacheBytes int64) (*pebbleEngine, error) {
	opts := &pebble.Options{Logger: quietLogger{}}
	if cacheBytes > 0 {
		c := pebble.NewCache(cacheBytes)
		defer c.Unref() // the DB holds its own reference
		opts.Cache = c
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	return &pebbleEngine{db: db}, nil
}

// quietLogger drops Pebble's informational logs, which would interleave with
// the benchmark output that cmd/benchtable parses, and keeps its errors.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)              {}
func (quietLogger) Errorf(format string, args ...any) { log.Printf("pebble: "+format, args...) }
func (quietLogger) Fatalf(format string, args ...any) { log.Fatalf("pebble: "+format, args...) }

func (e *pebbleEngine) putDurable(_ context.Context, key, value []byte) error {
	return e.db.Set(key, value, pebble.Sync)
}

func (e *pebbleEngine) load(ctx context.Context, n int, key, value func(int) []byte) error {
	b := e.db.NewBatch()
	for i := 0; i < n; i++ {
		if err := b.Set(key(i), value(i), nil); err != nil {
			return err
		}
		if b.Count() == 1000 || i == n-1 {
			if err := b.Commit(pebble.Sync); err != nil {
				return err
			}
			b = e.db.NewBatch()
		}
	}
	if err := e.db.Flush(); err != nil {
		return err
	}
	// Strata's flush leaves one L0 SST holding everything; compacting Pebble
	// to its bottom level is the equivalent settled shape, and stops
	// background compactions from running during the reads.
	return e.db.Compact(ctx, []byte{0}, []byte{0xff}, true)
}

func (e *pebbleEngine) get(_ context.Context, key []byte) ([]byte, bool, error) {
	v, closer, err := e.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	// Strata's Get returns a copy the caller owns; so does this.
	out := append([]byte(nil), v...)
	return out, true, closer.Close()
}

func (e *pebbleEngine) scan(_ context.Context, start []byte, n int) (int, int, error) {
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: start})
	if err != nil {
		return 0, 0, err
	}
	keys, size := 0, 0
	for ok := it.SeekGE(start); ok && keys < n; ok = it.Next() {
		keys++
		size += len(it.Key()) + len(it.Value())
	}
	return keys, size, it.Close()
}

func (e *pebbleEngine) cacheStats() (uint64, uint64) {
	m := e.db.Metrics().BlockCache
	return uint64(m.Hits), uint64(m.Misses)
}

func (e *pebbleEngine) close() error { return e.db.Close() }

// walInflight lets a run compare WAL pipeline depths (STRATA_WAL_INFLIGHT);
// 0 keeps the engine default.
func walInflight() int {
	n, _ := strconv.Atoi(os.Getenv("STRATA_WAL_INFLIGHT"))
	return n
}
