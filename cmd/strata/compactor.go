package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/stratakv/strata/compactor"
	"github.com/stratakv/strata/keyspace"
	"github.com/stratakv/strata/metrics"
)

// runCompactor runs `strata compactor`: a long-running compactor and
// garbage collector against the bucket the server uses, until SIGTERM or
// SIGINT, or until a newer compactor fences it.
func runCompactor(args []string) int {
	fs := flag.NewFlagSet("strata compactor", flag.ContinueOnError)
	var bf bucketFlags
	bf.register(fs)
	poll := fs.Duration("poll-interval", time.Second, "how often to look for compaction work")
	gcInterval := fs.Duration("gc-interval", time.Minute, "how often to collect garbage (negative: never)")
	gcMinAge := fs.Duration("gc-min-age", 10*time.Minute, "minimum time an unreferenced SST is kept (above any read's life)")
	targetSST := fs.Int64("target-sst-size", 64<<20, "size at which compaction output SSTs are cut (bytes)")
	l0Trigger := fs.Int("l0-trigger", 4, "compact L0 once it holds this many SSTs")
	metricsAddr := fs.String("metrics-addr", "", "host:port to serve /metrics, /healthz, /readyz and /debug/pprof/ on, e.g. 127.0.0.1:9122 (empty: off)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	logger := slog.New(slog.NewTextHandler(newRedactWriter(os.Stderr, bf.secrets()), nil)).With("component", "compactor")
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	me, err := startMetrics(*metricsAddr, logger)
	if err != nil {
		logger.Error("cannot start", "err", err)
		return 1
	}
	defer me.close()
	bkt, err := bf.open(ctx, logger)
	if err != nil {
		logger.Error("cannot start", "bucket", bf.describe(), "err", err)
		return 1
	}
	bkt = me.instrument(bkt)
	defer bkt.Close()
	c, err := compactor.Open(ctx, bkt, compactor.Options{
		Scheduler:     compactor.SchedulerOptions{L0Trigger: *l0Trigger},
		TargetSSTSize: *targetSST,
		PollInterval:  *poll,
		GC:            compactor.GCOptions{MinAge: *gcMinAge},
		GCInterval:    *gcInterval,
		Filter:        keyspace.NewFilterFactory(),
		Logger:        logger,
	})
	if err != nil {
		logger.Error("cannot start", "bucket", bf.describe(), "err", err)
		return 1
	}
	logger.Info("compactor running", "bucket", bf.describe(), "epoch", c.Epoch())
	me.serving(metrics.Sources{Compactor: c.Stats}, nil)
	err = c.Run(ctx)
	me.stopping()
	st := c.Stats()
	logger.Info("compactor stopped", "jobs", st.Jobs, "bytes_read", st.BytesRead,
		"bytes_written", st.BytesWritten, "expired", st.Expired,
		"gc_ssts_deleted", st.GC.SSTsDeleted, "gc_wal_deleted", st.GC.WALDeleted)
	if errors.Is(err, compactor.ErrFenced) {
		fmt.Fprintln(os.Stderr, "strata compactor: fenced by a newer compactor on this bucket")
		return 3
	}
	if err != nil {
		return 1
	}
	return 0
}
