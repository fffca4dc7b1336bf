// Package lsmtest holds the randomized reference-model test of the engine,
// shared by the engine's own tests and those of packages that run beside it
// (the compactor runs it with compactions going on underneath).
package lsmtest

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/blob/blobtest"
	"github.com/stratakv/strata/lsm"
)

var (
	modelSeed = flag.Uint64("model.seed", 0, "seed for the randomized model test (0 = from time)")
	modelOps  = flag.Int("model.ops", 4000, "operations per model test run")
)

// modelEntry is the model's idea of a key.
type modelEntry struct {
	value    string
	expireAt int64
}

type model map[string]modelEntry

func (m model) live(key string, now int64) (string, bool) {
	e, ok := m[key]
	if !ok || (e.expireAt != 0 && e.expireAt <= now) {
		return "", false
	}
	return e.value, true
}

// fakeClock is a wall clock the test moves by hand, so TTLs expire exactly
// when the model says.
type fakeClock struct{ ms atomic.Int64 }

func (c *fakeClock) now() int64      { return c.ms.Load() }
func (c *fakeClock) advance(d int64) { c.ms.Add(d) }
func newFakeClock() *fakeClock       { c := &fakeClock{}; c.ms.Store(1_700_000_000_000); return c }

func modelOptions(clk *fakeClock) lsm.Options {
	return lsm.Options{
		MemtableSize:         64 << 10,
		L0SlowdownSSTs:       10_000,
		L0StopSSTs:           10_000,
		BlockSize:            512,
		BlockCacheBytes:      1 << 20,
		ManifestPollInterval: 50 * time.Millisecond,
		WallClock:            clk.now,
	}
}

// modelHarness drives one DB and the model side by side.
type modelHarness struct {
	t   testing.TB
	cfg Config
	ctx context.Context
	rnd *rand.Rand
	bkt objstore.Bucket
	clk *fakeClock
	db  *lsm.DB
	m   model
}

func (h *modelHarness) open() {
	opts := modelOptions(h.clk)
	if h.cfg.Options != nil {
		h.cfg.Options(&opts)
	}
	db, err := lsm.Open(h.ctx, h.bkt, opts)
	if err != nil {
		h.t.Fatalf("open: %v", err)
	}
	h.db = db
	if h.cfg.AfterOpen != nil {
		h.cfg.AfterOpen(db)
	}
}

func (h *modelHarness) key() string { return fmt.Sprintf("k%03d", h.rnd.IntN(300)) }

func (h *modelHarness) value() string {
	return fmt.Sprintf("v%d-%s", h.rnd.Uint32(), bytes.Repeat([]byte{'x'}, h.rnd.IntN(200)))
}

// randomBatch builds a batch and the changes it makes to the model.
func (h *modelHarness) randomBatch(n int) (*lsm.Batch, model) {
	var b lsm.Batch
	changes := model{}
	for range n {
		k := h.key()
		switch p := h.rnd.IntN(10); {
		case p < 2:
			b.Delete([]byte(k))
			changes[k] = modelEntry{expireAt: -1}
		case p < 4:
			v, exp := h.value(), h.clk.now()+1+h.rnd.Int64N(60)
			b.PutWithExpiry([]byte(k), []byte(v), exp)
			changes[k] = modelEntry{value: v, expireAt: exp}
		default:
			v := h.value()
			b.Put([]byte(k), []byte(v))
			changes[k] = modelEntry{value: v}
		}
	}
	return &b, changes
}

func (h *modelHarness) apply(changes model) {
	for k, e := range changes {
		if e.expireAt == -1 {
			delete(h.m, k)
		} else {
			h.m[k] = e
		}
	}
}

func (h *modelHarness) checkGet(k string) {
	got, err := h.db.Get(h.ctx, []byte(k))
	want, ok := h.m.live(k, h.clk.now())
	switch {
	case errors.Is(err, lsm.ErrNotFound) && !ok:
	case err != nil && !errors.Is(err, lsm.ErrNotFound):
		h.t.Fatalf("get %s: %v", k, err)
	case errors.Is(err, lsm.ErrNotFound) && ok:
		h.t.Fatalf("get %s: not found, model has %.20q", k, want)
	case !ok:
		h.t.Fatalf("get %s: got %.20q, model has nothing", k, got)
	case string(got) != want:
		h.t.Fatalf("get %s: got %.20q, model has %.20q", k, got, want)
	}
}

func (h *modelHarness) checkScan() {
	lo, hi := h.key(), h.key()
	if lo > hi {
		lo, hi = hi, lo
	}
	o := lsm.IterOptions{LowerBound: []byte(lo), UpperBound: []byte(hi)}
	if h.rnd.IntN(4) == 0 {
		o = lsm.IterOptions{}
		lo, hi = "", "\xff"
	}
	now := h.clk.now()
	var want []string
	for k := range h.m {
		if _, ok := h.m.live(k, now); ok && k >= lo && k < hi {
			want = append(want, k)
		}
	}
	sort.Strings(want)
	it := h.db.NewIter(h.ctx, o)
	defer it.Close()
	var got []string
	ok := it.First()
	if h.rnd.IntN(2) == 0 && lo != "" {
		ok = it.SeekGE([]byte(lo))
	}
	for ; ok; ok = it.Next() {
		k := string(it.Key())
		if v, _ := h.m.live(k, now); v != string(it.Value()) {
			h.t.Fatalf("scan [%s,%s): key %s value %.20q, model %.20q", lo, hi, k, it.Value(), v)
		}
		got = append(got, k)
	}
	if err := it.Error(); err != nil {
		h.t.Fatalf("scan: %v", err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		h.t.Fatalf("scan [%s,%s): got %d keys %v\nwant %d keys %v", lo, hi, len(got), got, len(want), want)
	}
}

// crashWithPending writes one batch without waiting for it, then crashes:
// after reopening, the batch must be wholly present or wholly absent.
func (h *modelHarness) crashWithPending() {
	b, changes := h.randomBatch(1 + h.rnd.IntN(6))
	if _, err := h.db.Write(h.ctx, b); err != nil {
		h.t.Fatalf("write: %v", err)
	}
	h.crash()
	h.open()
	now := h.clk.now()
	present, absent := 0, 0
	for k, e := range changes {
		got, err := h.db.Get(h.ctx, []byte(k))
		wantNew, newOK := "", false
		if e.expireAt != -1 && (e.expireAt == 0 || e.expireAt > now) {
			wantNew, newOK = e.value, true
		}
		wantOld, oldOK := h.m.live(k, now)
		gotOK := err == nil
		matchNew := gotOK == newOK && string(got) == wantNew
		matchOld := gotOK == oldOK && string(got) == wantOld
		switch {
		case matchNew && matchOld:
		case matchNew:
			present++
		case matchOld:
			absent++
		default:
			h.t.Fatalf("after crash key %s = %.20q (%v): neither old nor new value", k, got, err)
		}
	}
	if present > 0 && absent > 0 {
		h.t.Fatalf("torn batch after crash: %d keys new, %d keys old", present, absent)
	}
	if present > 0 {
		h.apply(changes)
	}
}

func (h *modelHarness) step() {
	switch p := h.rnd.IntN(100); {
	case p < 45:
		b, changes := h.randomBatch(1 + h.rnd.IntN(3)*h.rnd.IntN(5))
		hd, err := h.db.Write(h.ctx, b)
		if err != nil {
			h.t.Fatalf("write: %v", err)
		}
		if err := hd.Durable(h.ctx); err != nil {
			h.t.Fatalf("durable: %v", err)
		}
		h.apply(changes)
	case p < 75:
		h.checkGet(h.key())
	case p < 83:
		h.checkScan()
	case p < 90:
		h.clk.advance(h.rnd.Int64N(25))
	case p < 93:
		if err := h.db.Flush(h.ctx); err != nil {
			h.t.Fatalf("flush: %v", err)
		}
	case p < 95:
		h.close()
		h.open()
	case p < 97:
		h.crash() // everything acknowledged must survive
		h.open()
	default:
		h.crashWithPending()
	}
}

// Config adapts a model run.
type Config struct {
	// Ops is the number of operations; 0 means the -model.ops flag.
	Ops int
	// Options edits the engine options of every open.
	Options func(*lsm.Options)
	// AfterOpen is called after every open, e.g. to start a compactor
	// against the same bucket.
	AfterOpen func(*lsm.DB)
	// BeforeClose is called before every close or crash of the engine.
	BeforeClose func(*lsm.DB)
}

func (h *modelHarness) crash() {
	if h.cfg.BeforeClose != nil {
		h.cfg.BeforeClose(h.db)
	}
	h.db.Abandon()
}

func (h *modelHarness) close() {
	if h.cfg.BeforeClose != nil {
		h.cfg.BeforeClose(h.db)
	}
	if err := h.db.Close(); err != nil {
		h.t.Fatalf("close: %v", err)
	}
}

// Run drives a seeded random sequence of puts, deletes, TTL puts, batches,
// gets, scans, clock moves, flushes, close/reopen and crashes against the
// engine on bkt and a map, and fails t at the first difference. It logs the
// seed; -model.seed replays a run.
func Run(t testing.TB, bkt objstore.Bucket, cfg Config) {
	seed := *modelSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("model seed %d (rerun with -model.seed=%d)", seed, seed)
	ops := cfg.Ops
	if ops == 0 {
		ops = *modelOps
	}
	h := &modelHarness{t: t, cfg: cfg, ctx: context.Background(), rnd: rand.New(rand.NewPCG(seed, 7)),
		bkt: bkt, clk: newFakeClock(), m: model{}}
	h.open()
	for range ops {
		h.step()
	}
	for k := range h.m {
		h.checkGet(k)
	}
	h.checkScan()
	h.close()
}

// Ops returns the -model.ops flag.
func Ops() int { return *modelOps }

// MinIOBucket opens prefix of a fresh bucket on the tests' shared MinIO
// (skipping, or failing under CI=true, without one).
func MinIOBucket(t testing.TB, prefix string) objstore.Bucket {
	t.Helper()
	bkt, err := blob.OpenConfig(context.Background(), blobtest.MinIO(t).Config(prefix), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bkt.Close() })
	return bkt
}
