package bench

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/compactor"
	"github.com/stratakv/strata/lsm"
	"github.com/stratakv/strata/manifest"
)

var (
	flagCompactionKeys      = flag.Int("compaction.keys", 10_000_000, "distinct keys BenchmarkCompaction loads")
	flagCompactionOverwrite = flag.Float64("compaction.overwrite", 0.3, "overwrites of random existing keys, as a fraction of -compaction.keys")
	flagCompactionValue     = flag.Int("compaction.value", 32, "value size of BenchmarkCompaction")
	flagCompactionMemtable  = flag.Int64("compaction.memtable", 16<<20, "engine MemtableSize of BenchmarkCompaction (0: the engine default, 64 MiB)")
	flagCompactionGCMinAge  = flag.Duration("compaction.gcminage", time.Minute, "GC MinAge of BenchmarkCompaction's compactor; a job longer than half of it is dropped")
	flagCompactionGCEvery   = flag.Duration("compaction.gcinterval", 5*time.Second, "GC interval of BenchmarkCompaction's compactor")
)

const (
	compactionBatchKeys = 1000 // puts per Write
	compactionWindow    = 16   // Writes in flight before the oldest one's Durable is awaited
	mib                 = 1 << 20
	mb                  = 1e6
)

// BenchmarkCompaction measures the compactor's write and space
// amplification and its throughput. Strata only; each iteration is one whole
// run, so use -benchtime=1x.
//
// The run: an engine on a local bucket (default options except MemtableSize,
// -compaction.memtable, 16 MiB so that even the 1M-key quick run is flushed
// into enough L0 SSTs to tier) and, in the same process, a compactor with
// the default scheduler running compactor.Run in a goroutine (GC every
// -compaction.gcinterval with MinAge -compaction.gcminage, so the bucket does
// not keep every compacted SST). One writer loads -compaction.keys distinct
// 16-byte keys in random key order with -compaction.value-byte
// incompressible values, then overwrites random existing keys
// (-compaction.overwrite × keys writes), 1000 puts per Write; every Write is
// awaited durable, with at most 16 Writes in flight. Then Flush, stop Run,
// and RunOnce until the scheduler has nothing left: "settled". Finally a
// second compactor (which fences the first) with L0Trigger 1, MaxRuns 1,
// MinMergeWidth 2 merges everything into one run: "merged", the smallest the
// data can be, against which space amplification is measured.
//
// Metrics (MiB = 2^20 bytes, MB/s = 10^6 bytes/s):
//
//	ingested-MiB        user bytes written, keys + values of every row Written
//	flushed-MiB         bytes of L0 SSTs written by memtable flushes (FlushBytes)
//	compacted-MiB       bytes of SSTs written by compaction until settled
//	wamp-compaction     compacted / flushed: rewrites per flushed byte
//	wamp-total          (flushed + compacted) / ingested: SST bytes written per
//	                    user byte (the WAL, about 1 more, is not counted)
//	samp-merged         SST bytes when settled / SST bytes after the full merge
//	samp-logical        SST bytes when settled / (distinct keys × (key + value))
//	merged-vs-logical   SST bytes after the full merge / logical size: the
//	                    format's own overhead (seq, kind, index, bloom)
//	compact-MB/s        compacted bytes / time spent in jobs (each job's
//	                    own Duration: read inputs, merge, upload outputs)
//	compact-rw-MB/s     (bytes read + written) / the same time
//	fullmerge-MB/s      bytes the full merge wrote / wall time of its RunOnce calls
//	load-s, settle-s, fullmerge-s   wall times of the phases
//	runs, l0-ssts       shape when settled; max-l0 and max-runs during the load
//	jobs, bottom-jobs   compaction jobs until settled, and those that wrote the last run
//	job-max-s           the longest job until settled
//	stall-s, write-slowdowns   engine backpressure during the load
//	bucket-max-MiB      largest bucket directory seen during the load and settle;
//	                    the GC deletes a compacted SST only once it is MinAge old
//	                    and has been seen unreferenced for MinAge, so a run
//	                    shorter than about 2×MinAge keeps every SST it wrote
//	warnings            Warn/Error logs of engine and compactors (each one is logged)
func BenchmarkCompaction(b *testing.B) {
	for range b.N {
		runCompaction(b)
	}
}

func runCompaction(b *testing.B) {
	ctx := context.Background()
	n := *flagCompactionKeys
	overwrites := int(float64(n) * *flagCompactionOverwrite)
	valSize := *flagCompactionValue
	if n <= 0 || overwrites < 0 || valSize <= 0 {
		b.Fatalf("bad flags: keys %d, overwrites %d, value %d", n, overwrites, valSize)
	}
	dir := b.TempDir()
	bkt, err := blob.NewLocalBucket(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bkt.Close() }) // its spare temp files, before the directory goes
	logs := &compactionLog{b: b}
	db, err := lsm.Open(ctx, bkt, lsm.Options{MemtableSize: *flagCompactionMemtable, Logger: slog.New(logs.handler("engine"))})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		// Close logs "lsm stopped accepting writes" with ErrClosed at
		// level Error; that one is not a warning of this run.
		logs.mu.Lock()
		logs.closing = true
		logs.mu.Unlock()
		if err := db.Close(); err != nil {
			b.Error(err)
		}
	}()
	bg, err := compactor.Open(ctx, bkt, compactor.Options{
		GC:         compactor.GCOptions{MinAge: *flagCompactionGCMinAge},
		GCInterval: *flagCompactionGCEvery,
		Logger:     slog.New(logs.handler("compactor")),
	})
	if err != nil {
		b.Fatal(err)
	}
	runCtx, stopRun := context.WithCancel(ctx)
	runDone := make(chan error, 1)
	go func() { runDone <- bg.Run(runCtx) }()
	stopBG := func() {
		if stopRun == nil {
			return
		}
		stopRun()
		stopRun = nil
		if err := <-runDone; err != nil {
			b.Errorf("compactor.Run: %v", err)
		}
	}
	defer stopBG()

	// Load. version[i] counts the overwrites of key i, so the value every
	// key must end with is known.
	b.ResetTimer()
	version := make([]uint8, n)
	var (
		batch    lsm.Batch
		inflight []lsm.WriteHandle
		rows     int64
		maxL0    int
		maxRuns  int
		maxBkt   int64
		batches  int
	)
	sample := func() {
		m := db.Metrics()
		maxL0, maxRuns = max(maxL0, m.L0SSTs), max(maxRuns, m.SortedRuns)
		maxBkt = max(maxBkt, dirBytes(b, dir))
	}
	write := func() {
		rows += int64(batch.Len())
		h, err := db.Write(ctx, &batch)
		if err != nil {
			b.Fatal(err)
		}
		batch.Reset()
		inflight = append(inflight, h)
		if len(inflight) >= compactionWindow {
			if err := inflight[0].Durable(ctx); err != nil {
				b.Fatal(err)
			}
			inflight = inflight[1:]
		}
		if batches++; batches%200 == 0 {
			sample()
		}
	}
	loadStart := time.Now()
	for i := range n {
		batch.Put(makeKey(uint64(i), true), compactionValue(uint64(i), 0, valSize))
		if (i+1)%compactionBatchKeys == 0 || i == n-1 {
			write()
		}
	}
	r := rand.New(rand.NewPCG(uint64(n), 7))
	for j := range overwrites {
		i := r.IntN(n)
		if version[i] == 255 {
			b.Fatalf("key %d overwritten 255 times", i)
		}
		version[i]++
		batch.Put(makeKey(uint64(i), true), compactionValue(uint64(i), version[i], valSize))
		if (j+1)%compactionBatchKeys == 0 || j == overwrites-1 {
			write()
		}
	}
	for _, h := range inflight {
		if err := h.Durable(ctx); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	loadTime := time.Since(loadStart)
	sample()
	loadMetrics := db.Metrics()

	// Settle: stop Run (a job it is in the middle of is abandoned and done
	// again below), then RunOnce until the scheduler picks nothing.
	settleStart := time.Now()
	stopBG()
	runJobs := bg.Stats().Jobs
	var settleJobWall time.Duration
	for {
		t := time.Now()
		did, err := bg.RunOnce(ctx)
		if err != nil {
			b.Fatalf("settle: %v", err)
		}
		if !did {
			break
		}
		settleJobWall += time.Since(t)
		maxBkt = max(maxBkt, dirBytes(b, dir))
	}
	settleTime := time.Since(settleStart)
	settled := waitManifest(b, ctx, db, bkt)
	settledStats := bg.Stats()
	settledJobs := logs.snapshot()

	// Full merge: a second compactor (fencing the first, which is stopped)
	// whose scheduler leaves one run.
	full, err := compactor.Open(ctx, bkt, compactor.Options{
		Scheduler: compactor.SchedulerOptions{L0Trigger: 1, MaxRuns: 1, MinMergeWidth: 2},
		Logger:    slog.New(logs.handler("fullmerge")),
	})
	if err != nil {
		b.Fatal(err)
	}
	fullStart := time.Now()
	var fullJobWall time.Duration
	for {
		t := time.Now()
		did, err := full.RunOnce(ctx)
		if err != nil {
			b.Fatalf("full merge: %v", err)
		}
		if !did {
			break
		}
		fullJobWall += time.Since(t)
	}
	fullTime := time.Since(fullStart)
	merged := waitManifest(b, ctx, db, bkt)
	fullStats := full.Stats()
	b.StopTimer()

	if merged.m.SortedRuns != 1 || merged.m.L0SSTs != 0 || merged.entries != uint64(n) {
		b.Errorf("full merge left %d runs, %d L0 SSTs, %d rows; want 1, 0, %d",
			merged.m.SortedRuns, merged.m.L0SSTs, merged.entries, n)
	}
	if err := checkCompacted(ctx, db, n, version, valSize); err != nil {
		b.Error(err)
	}

	ingested := float64(rows) * float64(keySize+valSize)
	logical := float64(n) * float64(keySize+valSize)
	flushed := float64(loadMetrics.FlushBytes)
	compacted := float64(settledStats.BytesWritten)
	b.ReportMetric(ingested/mib, "ingested-MiB")
	b.ReportMetric(flushed/mib, "flushed-MiB")
	b.ReportMetric(compacted/mib, "compacted-MiB")
	b.ReportMetric(compacted/flushed, "wamp-compaction")
	b.ReportMetric((flushed+compacted)/ingested, "wamp-total")
	b.ReportMetric(float64(settled.m.SSTBytes)/mib, "settled-sst-MiB")
	b.ReportMetric(float64(merged.m.SSTBytes)/mib, "merged-sst-MiB")
	b.ReportMetric(float64(settled.m.SSTBytes)/float64(merged.m.SSTBytes), "samp-merged")
	b.ReportMetric(float64(settled.m.SSTBytes)/logical, "samp-logical")
	b.ReportMetric(float64(merged.m.SSTBytes)/logical, "merged-vs-logical")
	b.ReportMetric(float64(settled.entries)/float64(n), "rows-per-key")
	if settledJobs.took > 0 {
		b.ReportMetric(compacted/mb/settledJobs.took.Seconds(), "compact-MB/s")
		b.ReportMetric(float64(settledStats.BytesRead+settledStats.BytesWritten)/mb/settledJobs.took.Seconds(), "compact-rw-MB/s")
	}
	if fullJobWall > 0 {
		b.ReportMetric(float64(fullStats.BytesWritten)/mb/fullJobWall.Seconds(), "fullmerge-MB/s")
	}
	b.ReportMetric(loadTime.Seconds(), "load-s")
	b.ReportMetric(settleTime.Seconds(), "settle-s")
	b.ReportMetric(fullTime.Seconds(), "fullmerge-s")
	b.ReportMetric(float64(settled.m.SortedRuns), "runs")
	b.ReportMetric(float64(settled.m.L0SSTs), "l0-ssts")
	b.ReportMetric(float64(maxL0), "max-l0")
	b.ReportMetric(float64(maxRuns), "max-runs")
	b.ReportMetric(float64(settledStats.Jobs), "jobs")
	b.ReportMetric(float64(settledJobs.bottom), "bottom-jobs")
	b.ReportMetric(settledJobs.maxTook.Seconds(), "job-max-s")
	b.ReportMetric(loadMetrics.StallTime.Seconds(), "stall-s")
	b.ReportMetric(float64(loadMetrics.WriteSlowdowns), "write-slowdowns")
	b.ReportMetric(float64(maxBkt)/mib, "bucket-max-MiB")
	b.ReportMetric(float64(logs.snapshot().warnings), "warnings")
	b.Logf("keys %d, overwrites %d, rows written %d, memtable %d, flushes %d; jobs: %d in Run, %d in RunOnce after it (%.1fs), %v by reason; gc %+v",
		n, overwrites, rows, *flagCompactionMemtable, loadMetrics.Flushes, runJobs,
		settledStats.Jobs-runJobs, settleJobWall.Seconds(), settledJobs.reasons, settledStats.GC)
	b.Logf("settled: %d runs of %s MiB, %d L0 SSTs; merged: %d jobs, %.1f MiB written",
		settled.m.SortedRuns, settled.runMiB, settled.m.L0SSTs, fullStats.Jobs, float64(fullStats.BytesWritten)/mib)
}

// compactionValue is the value of key i after v overwrites.
func compactionValue(i uint64, v uint8, size int) []byte {
	return makeValue(i^uint64(v)<<56, size)
}

// checkCompacted reads back a random sample of keys: each must hold its
// newest value.
func checkCompacted(ctx context.Context, db *lsm.DB, n int, version []uint8, valSize int) error {
	r := rand.New(rand.NewPCG(uint64(n), 11))
	for range 5000 {
		i := r.IntN(n)
		v, err := db.Get(ctx, makeKey(uint64(i), true))
		if err != nil {
			return fmt.Errorf("bench: key %d after compaction: %w", i, err)
		}
		if !bytes.Equal(v, compactionValue(uint64(i), version[i], valSize)) {
			return fmt.Errorf("bench: key %d after compaction does not hold its version %d", i, version[i])
		}
	}
	return nil
}

// lsmShape is the engine's metrics once it has caught up with the latest
// manifest, with what only the manifest says.
type lsmShape struct {
	m       lsm.Metrics
	entries uint64 // rows in all SSTs
	runMiB  string // run sizes, newest first
}

// waitManifest waits until the engine has picked up the latest manifest (it
// polls every ManifestPollInterval) and returns its shape.
func waitManifest(b *testing.B, ctx context.Context, db *lsm.DB, bkt *blob.LocalBucket) lsmShape {
	latest, err := manifest.NewStore(bkt).Latest(ctx)
	if err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for db.Metrics().ManifestID < latest.ID {
		if time.Now().After(deadline) {
			b.Fatalf("engine still at manifest %d after 30s, latest is %d", db.Metrics().ManifestID, latest.ID)
		}
		time.Sleep(50 * time.Millisecond)
	}
	s := lsmShape{m: db.Metrics()}
	if s.m.ManifestID != latest.ID {
		b.Fatalf("manifest moved on while measuring: %d, then %d", latest.ID, s.m.ManifestID)
	}
	var sizes []string
	for _, r := range latest.Runs {
		var size uint64
		for _, t := range r.SSTs {
			size += t.Size
		}
		sizes = append(sizes, fmt.Sprintf("%.1f", float64(size)/mib))
	}
	for _, t := range latest.AllSSTs() {
		s.entries += t.Stats.Entries
	}
	s.runMiB = "[" + strings.Join(sizes, " ") + "]"
	return s
}

// dirBytes returns the size of the files under dir.
func dirBytes(b *testing.B, dir string) int64 {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // deleted by the GC meanwhile
			}
			return err
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				total += info.Size()
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return total
}

// compactionLog collects what the engine and the compactors log: the
// compactor's "compacted" record per job (its own duration, bottom or not,
// the reason), and every warning or error, which is also shown.
type compactionLog struct {
	b       *testing.B
	mu      sync.Mutex
	closing bool // the engine is closing: its logs are expected
	jobSummary
}

type jobSummary struct {
	jobs, bottom, warnings int
	took, maxTook          time.Duration
	reasons                map[string]int
}

func (l *compactionLog) snapshot() jobSummary {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.jobSummary
	s.reasons = make(map[string]int)
	for k, v := range l.reasons {
		s.reasons[k] = v
	}
	return s
}

func (l *compactionLog) handler(source string) slog.Handler {
	return &compactionLogHandler{l: l, source: source}
}

type compactionLogHandler struct {
	l      *compactionLog
	source string
}

func (h *compactionLogHandler) Enabled(_ context.Context, lvl slog.Level) bool {
	return lvl >= slog.LevelInfo
}

func (h *compactionLogHandler) Handle(_ context.Context, r slog.Record) error {
	l := h.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.Level >= slog.LevelWarn {
		if l.closing && h.source == "engine" {
			return nil
		}
		l.warnings++
		var attrs []string
		r.Attrs(func(a slog.Attr) bool {
			attrs = append(attrs, a.String())
			return true
		})
		l.b.Logf("%s %s: %s %s", h.source, r.Level, r.Message, strings.Join(attrs, " "))
		return nil
	}
	if r.Message != "compacted" || h.source == "fullmerge" {
		return nil
	}
	if l.reasons == nil {
		l.reasons = make(map[string]int)
	}
	l.jobs++
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "took":
			d := a.Value.Duration()
			l.took += d
			l.maxTook = max(l.maxTook, d)
		case "job":
			job := a.Value.String()
			reason, _, _ := strings.Cut(job, " ")
			l.reasons[reason]++
			if strings.HasSuffix(job, "(bottom)") {
				l.bottom++
			}
		}
		return true
	})
	return nil
}

func (h *compactionLogHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *compactionLogHandler) WithGroup(string) slog.Handler      { return h }
