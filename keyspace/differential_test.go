package keyspace_test

import (
	"context"
	"flag"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/compactor"
	"github.com/stratakv/strata/keyspace"
	"github.com/stratakv/strata/keyspace/keyspacetest"
	"github.com/stratakv/strata/lsm"
)

var (
	diffSeed = flag.Uint64("diff.seed", 0, "seed of the differential test (0: from time)")
	diffOps  = flag.Int("diff.ops", 6000, "ops per differential run")
)

var _ keyspacetest.Commands = (*keyspace.Store)(nil)

// skipped are ops with option combinations Redis rejects while parsing:
// the RESP layer checks those, the Store does not.
func skipped(op keyspacetest.Op) bool { return op.InvalidOptions() }

// TestDifferential runs one random command sequence (all five types,
// expiry on a fake clock, DEL and re-creation, RENAME, FLUSHDB) against the
// Store and against the reference model of Redis, comparing every reply,
// while the engine is flushed, compacted with the Redis filter, and
// reopened in between.
func TestDifferential(t *testing.T) {
	seed := *diffSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -diff.seed=%d)", seed, seed)
	rnd := rand.New(rand.NewPCG(seed, 11))
	ops := keyspacetest.RandomOps(rnd, *diffOps)

	ctx := context.Background()
	var clock atomic.Int64
	clock.Store(keyspacetest.Epoch)
	bkt := blob.NewMemBucket()
	open := func() (*lsm.DB, *keyspace.Store) {
		db, err := lsm.Open(ctx, bkt, lsm.Options{WallClock: clock.Load, MemtableSize: 256 << 10, ManifestPollInterval: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		s, err := keyspace.Open(ctx, db, keyspace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return db, s
	}
	db, store := open()
	defer func() { db.Close() }()
	model := keyspacetest.NewModel(clock.Load)
	compared, reopens, compactions := 0, 0, 0
	for i, op := range ops {
		clock.Store(max(clock.Load(), op.At))
		switch rnd.IntN(400) {
		case 0:
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db, store = open()
			reopens++
		case 1, 2:
			if err := db.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			compactions += compact(t, bkt)
		}
		if skipped(op) {
			continue
		}
		want := keyspacetest.Apply(ctx, model, op)
		got := keyspacetest.Apply(ctx, store, op)
		if !keyspacetest.Equal(got, want) {
			t.Fatalf("op %d %v:\n store %v\n model %v", i, op, got, want)
		}
		compared++
	}
	t.Logf("%d ops compared, %d reopens, %d compactions", compared, reopens, compactions)
	if compactions == 0 || reopens == 0 {
		t.Logf("note: this seed did not reopen or compact")
	}
}

// compact runs the Redis-filtered compactor until it is idle.
func compact(t *testing.T, bkt objstore.Bucket) int {
	t.Helper()
	ctx := context.Background()
	c, err := compactor.Open(ctx, bkt, compactor.Options{
		Scheduler: compactor.SchedulerOptions{L0Trigger: 1, MinMergeWidth: 2, MaxRuns: 2},
		Filter:    keyspace.NewFilterFactory(),
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		did, err := c.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !did {
			return n
		}
		n++
	}
}
