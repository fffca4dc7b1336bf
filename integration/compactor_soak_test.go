package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/thanos-io/objstore"
	"golang.org/x/sync/errgroup"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/blob/blobtest"
	"github.com/stratakv/strata/lsm"
)

// The compactor soak (the compactor issue's acceptance test): against MinIO,
// the engine ("the server": the RESP front end does not exist yet, so the
// engine runs in this process) and a separate `strata compactor` process on
// the same bucket, under write load for a minute. L0 must stay bounded, the
// compactor must have compacted and collected garbage, and every key must
// read as the acknowledged writes say, before and after reopening.
const (
	soakPrefix  = "soak"
	soakEnv     = "STRATA_SOAK" // load duration, e.g. 5m; default soakDefault
	soakDefault = 60 * time.Second
	soakKeys    = 20000
	soakWriters = 16 // key k has the one writer k % soakWriters

	l0Slack     = 2 // L0 may exceed L0StopSSTs by this much before the test fails
	sampleEvery = 100 * time.Millisecond

	// The compactor's GC settings, and how long the bucket may take to
	// settle once writes stop: an SST must be MinAge old and seen
	// unreferenced by passes MinAge apart.
	gcInterval = 2 * time.Second
	gcMinAge   = 5 * time.Second
	gcSettle   = gcMinAge + 3*gcInterval + 15*time.Second
	// keepManifests is the compactor's default GCOptions.KeepManifests.
	keepManifests = 10
)

func soakOptions() lsm.Options {
	return lsm.Options{
		MemtableSize:         1 << 20,
		WALFlushInterval:     10 * time.Millisecond,
		ManifestPollInterval: 200 * time.Millisecond,
		L0SlowdownSSTs:       8,
		L0StopSSTs:           16,
	}
}

func TestCompactorSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("a minute of write load against MinIO and a compactor process")
	}
	load := soakDuration(t)
	bin := strataBinary(t)
	minio := blobtest.MinIO(t)
	bkt := openBucket(t, minio)
	db := openDB(t, bkt)
	comp := startCompactor(t, bin, minio)

	m := newModel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d: %v of load from %d writers over %d keys", seed, load, soakWriters, soakKeys)
	ls := runLoad(t, db, m, comp, seed, load)
	loadEnd := time.Now()
	ls.report(t, db.Metrics())
	if err := db.Flush(t.Context()); err != nil {
		t.Fatalf("flush after the load: %v", err)
	}
	verify(t, db, m, "after the load")
	settled := waitForGC(t, bkt, comp, loadEnd)
	t.Logf("bucket settled %v after the load: %s", time.Since(loadEnd).Round(100*time.Millisecond), settled)
	stopCompactor(t, comp).report(t)
	if err := db.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}

	db = openDB(t, bkt)
	verify(t, db, m, "after reopening")
	final := inspectBucket(t, bkt)
	t.Logf("bucket at the end (after reopening): %s", final)
	if final.missing > 0 {
		t.Errorf("the latest manifest references %d SSTs that are not in the bucket", final.missing)
	}
	if final.compactorEpoch == 0 {
		t.Errorf("the manifest's compactor epoch is 0: no compactor ever claimed the bucket")
	}
	if err := db.Close(); err != nil {
		t.Errorf("close after reopening: %v", err)
	}
}

func soakDuration(t *testing.T) time.Duration {
	s := os.Getenv(soakEnv)
	if s == "" {
		return soakDefault
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a positive duration such as 60s or 5m", soakEnv, s)
	}
	return d
}

func openBucket(t *testing.T, s *blobtest.MinIOServer) objstore.Bucket {
	t.Helper()
	raw, err := blob.OpenConfig(t.Context(), s.Config(soakPrefix), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = raw.Close() })
	return blob.NewRetryBucket(raw, blob.RetryOptions{})
}

func openDB(t *testing.T, bkt objstore.Bucket) *lsm.DB {
	t.Helper()
	db, err := lsm.Open(t.Context(), bkt, soakOptions())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		// ErrClosed if the test closed it. A Close that cannot finish (a WAL
		// PUT retrying against a bucket that stopped answering) fails the
		// test here instead of running into the binary's timeout, which
		// would hide the failure that came before it.
		closed := make(chan struct{})
		go func() {
			_ = db.Close()
			close(closed)
		}()
		select {
		case <-closed:
		case <-time.After(time.Minute):
			t.Errorf("closing the engine took over a minute: left running")
		}
	})
	return db
}

func startCompactor(t *testing.T, bin string, s *blobtest.MinIOServer) *child {
	t.Helper()
	c := startChild(t, "strata compactor", s.Env(), bin, "compactor",
		"--bucket", s.URL(soakPrefix),
		"--poll-interval", "100ms",
		"--gc-interval", gcInterval.String(),
		"--gc-min-age", gcMinAge.String(),
		"--target-sst-size", "1048576",
		"--l0-trigger", "4")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("compactor log (tail):\n%s", c.tail(200))
		}
	})
	if err := c.waitFor(`msg="compactor running"`, 30*time.Second); err != nil {
		t.Fatalf("%v\n%s", err, c.tail(20))
	}
	return c
}

// loadStats are the load's figures. The atomics are updated by the writers;
// the rest belongs to the sampler until runLoad returns.
type loadStats struct {
	batches, rows, reads atomic.Uint64

	elapsed                      time.Duration
	samples, l0Sum, slowSamples  int
	maxL0, maxRuns, maxUnflushed int64
	timeline                     []string // "L0/runs" maxima per timelineStep
}

// timelineStep is the width of one entry of loadStats.timeline.
const timelineStep = 5 * time.Second

// runLoad runs the writers and the L0 sampler for d, then stops them
// between operations, so every write they started is acknowledged and in
// the model.
func runLoad(t *testing.T, db *lsm.DB, m *model, comp *child, seed uint64, d time.Duration) *loadStats {
	t.Helper()
	st := &loadStats{}
	stop := make(chan struct{})
	g, ctx := errgroup.WithContext(t.Context())
	for id := range soakWriters {
		w := &writer{db: db, m: m, st: st, id: id, rng: rand.New(rand.NewPCG(seed, uint64(id)))}
		g.Go(func() error { return w.run(ctx, stop) })
	}
	g.Go(func() error { return st.sample(ctx, stop, db, comp) })
	start := time.Now()
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	close(stop)
	if err := g.Wait(); err != nil {
		t.Fatalf("under load: %v\ncompactor log (tail):\n%s", err, comp.tail(30))
	}
	st.elapsed = time.Since(start)
	if st.maxL0 > int64(soakOptions().L0StopSSTs+l0Slack) {
		t.Errorf("L0 reached %d SSTs, above L0StopSSTs %d + %d", st.maxL0, soakOptions().L0StopSSTs, l0Slack)
	}
	if st.maxRuns == 0 {
		t.Errorf("the engine never saw a sorted run: the compactor did not publish during the load")
	}
	return st
}

// sample records L0 and the sorted runs every sampleEvery, and fails the
// load if the compactor dies.
func (st *loadStats) sample(ctx context.Context, stop <-chan struct{}, db *lsm.DB, comp *child) error {
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	slowdown := soakOptions().L0SlowdownSSTs
	var stepL0, stepRuns int
	for {
		select {
		case <-stop:
			return nil
		case <-ctx.Done():
			return nil
		case <-comp.exited:
			return fmt.Errorf("the compactor exited during the load (%v)", comp.cmd.ProcessState)
		case <-tick.C:
		}
		m := db.Metrics()
		st.samples++
		st.l0Sum += m.L0SSTs
		if m.L0SSTs >= slowdown {
			st.slowSamples++
		}
		st.maxL0 = max(st.maxL0, int64(m.L0SSTs))
		st.maxRuns = max(st.maxRuns, int64(m.SortedRuns))
		st.maxUnflushed = max(st.maxUnflushed, m.UnflushedBytes)
		stepL0, stepRuns = max(stepL0, m.L0SSTs), max(stepRuns, m.SortedRuns)
		if st.samples%int(timelineStep/sampleEvery) == 0 {
			st.timeline = append(st.timeline, fmt.Sprintf("%d/%d", stepL0, stepRuns))
			stepL0, stepRuns = 0, 0
		}
	}
}

func (st *loadStats) report(t *testing.T, m lsm.Metrics) {
	t.Helper()
	secs := st.elapsed.Seconds()
	t.Logf("load: %v, %d batches (%d rows) acknowledged, %.0f batches/s, %.0f rows/s; %d reads checked during the load",
		st.elapsed.Round(100*time.Millisecond), st.batches.Load(), st.rows.Load(),
		float64(st.batches.Load())/secs, float64(st.rows.Load())/secs, st.reads.Load())
	t.Logf("L0: max %d SSTs (slowdown %d, stop %d), mean %.1f, at or above the slowdown in %d of %d samples; "+
		"sorted runs max %d; unflushed max %d KiB",
		st.maxL0, soakOptions().L0SlowdownSSTs, soakOptions().L0StopSSTs, float64(st.l0Sum)/float64(max(st.samples, 1)),
		st.slowSamples, st.samples, st.maxRuns, st.maxUnflushed>>10)
	t.Logf("L0/runs maxima per %v: %s", timelineStep, strings.Join(st.timeline, " "))
	t.Logf("engine: %d memtable flushes (%d MiB), %d WAL objects (%d MiB), write stalls %d (%v), slowdowns %d",
		m.Flushes, m.FlushBytes>>20, m.WAL.Objects, m.WAL.Bytes>>20, m.WriteStalls,
		m.StallTime.Round(time.Millisecond), m.WriteSlowdowns)
}

// writer writes the keys k with k % soakWriters == id, so each key has one
// writer and the model is exact (doc.go, invariant 3).
type writer struct {
	db    *lsm.DB
	m     *model
	st    *loadStats
	id    int
	rng   *rand.Rand
	n     int // ops so far; part of every value, so no two values are equal
	batch lsm.Batch
}

func (w *writer) run(ctx context.Context, stop <-chan struct{}) error {
	for {
		select {
		case <-stop:
			return nil
		case <-ctx.Done():
			return nil // another goroutine failed
		default:
		}
		w.n++
		var err error
		if w.rng.IntN(100) < 10 {
			// Read back one of our own keys: reads race compactions and GC.
			err = w.m.checkGet(ctx, w.db, w.key())
			w.st.reads.Add(1)
		} else {
			err = w.write(ctx, w.ops())
		}
		if err != nil {
			return fmt.Errorf("writer %d, op %d: %w", w.id, w.n, err)
		}
	}
}

// ops draws one batch: an overwrite, a delete, a put with a 1–3 s expiry, or
// a batch of 2–16 of those.
func (w *writer) ops() []op {
	switch p := w.rng.IntN(100); {
	case p < 55:
		return []op{w.put(0)}
	case p < 70:
		return []op{{key: w.key()}}
	case p < 85:
		return []op{w.put(w.ttl())}
	}
	ops := make([]op, 2+w.rng.IntN(15))
	for i := range ops {
		switch p := w.rng.IntN(10); {
		case p < 6:
			ops[i] = w.put(0)
		case p < 8:
			ops[i] = op{key: w.key()}
		default:
			ops[i] = w.put(w.ttl())
		}
	}
	return ops
}

// write commits ops as one batch, waits until it is durable, and only then
// records it in the model.
func (w *writer) write(ctx context.Context, ops []op) error {
	w.batch.Reset()
	for _, o := range ops {
		if o.value == nil {
			w.batch.Delete([]byte(o.key))
		} else {
			w.batch.PutWithExpiry([]byte(o.key), o.value, o.expireAt)
		}
	}
	h, err := w.db.Write(ctx, &w.batch)
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if err := h.Durable(ctx); err != nil {
		return fmt.Errorf("durable (seq %d): %w", h.Seq(), err)
	}
	w.m.apply(ops)
	w.st.batches.Add(1)
	w.st.rows.Add(uint64(len(ops)))
	return nil
}

func (w *writer) key() string {
	return fmt.Sprintf("k%05d", w.id+soakWriters*w.rng.IntN(soakKeys/soakWriters))
}

// ttl returns an expiry 1–3 s ahead of the engine clock.
func (w *writer) ttl() int64 { return w.db.Now() + 1000 + w.rng.Int64N(2001) }

// put makes a put of a fresh value: "key/writer/op/" and 64–2048 bytes of
// random (incompressible) padding in all.
func (w *writer) put(expireAt int64) op {
	key := w.key()
	v := fmt.Appendf(nil, "%s/w%d/n%d/", key, w.id, w.n)
	size := 64 + w.rng.IntN(2048-64+1)
	for len(v) < size {
		x := w.rng.Uint64()
		for i := 0; i < 8 && len(v) < size; i++ {
			v = append(v, byte(x>>(8*i)))
		}
	}
	return op{key: key, value: v, expireAt: expireAt}
}

// verify compares a full scan and a Get of every key ever written with the
// model.
func verify(t *testing.T, db *lsm.DB, m *model, when string) {
	t.Helper()
	ctx := t.Context()
	start := time.Now()
	errs, scanned := scan(ctx, db, m)
	scanTime := time.Since(start)
	keys := m.keys()
	for _, k := range keys {
		if err := m.checkGet(ctx, db, k); err != nil {
			errs = append(errs, fmt.Errorf("get: %w", err))
		}
	}
	for i, err := range errs {
		if i == 20 {
			t.Errorf("%s: … %d more mismatches", when, len(errs)-i)
			break
		}
		t.Errorf("%s: %v", when, err)
	}
	c := m.census(db.Now())
	t.Logf("%s: scan returned %d keys in %v, %d Gets in %v (model: %d live, %d expired, %d deleted), %d mismatches",
		when, scanned, scanTime.Round(time.Millisecond), len(keys), (time.Since(start) - scanTime).Round(time.Millisecond),
		c.live, c.expired, c.deleted, len(errs))
}

// scan checks a full scan against the model: every key it returns, in
// strictly increasing order, and every key of the model it does not return.
func scan(ctx context.Context, db *lsm.DB, m *model) (errs []error, scanned int) {
	before := db.Now()
	it := db.NewIter(ctx, lsm.IterOptions{}) // reads at the clock of its creation
	after := db.Now()
	seen := make(map[string]bool)
	prev := ""
	for ok := it.First(); ok; ok = it.Next() {
		k := string(it.Key())
		if len(seen) > 0 && k <= prev {
			errs = append(errs, fmt.Errorf("scan: key %q after %q", k, prev))
		}
		prev, seen[k] = k, true
		if err := m.check(k, it.Value(), true, before, after); err != nil {
			errs = append(errs, fmt.Errorf("scan: %w", err))
		}
	}
	if err := it.Error(); err != nil {
		errs = append(errs, fmt.Errorf("scan: %w", err))
	}
	if err := it.Close(); err != nil {
		errs = append(errs, fmt.Errorf("scan: close: %w", err))
	}
	for _, k := range m.keys() {
		if !seen[k] {
			if err := m.check(k, nil, false, before, after); err != nil {
				errs = append(errs, fmt.Errorf("scan: %w", err))
			}
		}
	}
	return errs, len(seen)
}

// compactorSummary is what the compactor's log says it did.
type compactorSummary struct {
	compactions, outputs int
	maxTook              time.Duration // the longest compaction
	stopped              string        // the "compactor stopped" line
	warnings             []string
}

// stopCompactor SIGTERMs the compactor, which must exit 0 and log
// "compactor stopped", and reads its log.
func stopCompactor(t *testing.T, c *child) compactorSummary {
	t.Helper()
	code, err := c.stop(30 * time.Second)
	switch {
	case err != nil:
		t.Errorf("%v\n%s", err, c.tail(30))
	case code != 0:
		t.Errorf("the compactor exited %d after SIGTERM, want 0\n%s", code, c.tail(30))
	}
	out := c.out.String()
	var s compactorSummary
	compacted := logLines(out, "compacted")
	s.compactions = len(compacted)
	for _, line := range compacted {
		n, _ := strconv.Atoi(logField(line, "outputs"))
		s.outputs += n
		if took, err := time.ParseDuration(logField(line, "took")); err == nil {
			s.maxTook = max(s.maxTook, took)
		}
	}
	if stopped := logLines(out, "compactor stopped"); len(stopped) != 1 {
		t.Errorf("the compactor logged %q %d times, want once\n%s", "compactor stopped", len(stopped), c.tail(30))
	} else {
		s.stopped = stopped[0]
		if jobs := logField(s.stopped, "jobs"); jobs != strconv.Itoa(s.compactions) {
			t.Errorf("the compactor stopped with jobs=%s, but logged %d compactions", jobs, s.compactions)
		}
	}
	if s.compactions == 0 {
		t.Errorf("the compactor logged no compactions\n%s", c.tail(30))
	}
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(line, "level=WARN"):
			s.warnings = append(s.warnings, line)
		case strings.Contains(line, "level=ERROR"), strings.Contains(line, "DATA RACE"):
			t.Errorf("compactor: %s", line)
		}
	}
	return s
}

func (s compactorSummary) report(t *testing.T) {
	t.Helper()
	t.Logf("compactor: %d compactions (from its log), %d output SSTs, the longest took %v; "+
		"GC deleted %s SSTs and %s WAL objects; %s bytes read, %s written; %d warnings",
		s.compactions, s.outputs, s.maxTook.Round(time.Millisecond), logField(s.stopped, "gc_ssts_deleted"), logField(s.stopped, "gc_wal_deleted"),
		logField(s.stopped, "bytes_read"), logField(s.stopped, "bytes_written"), len(s.warnings))
	for i, w := range s.warnings {
		if i == 10 {
			t.Logf("compactor warning: … %d more", len(s.warnings)-i)
			break
		}
		t.Logf("compactor warning: %s", w)
	}
}
