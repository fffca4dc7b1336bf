package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/stratakv/strata/compactor"
	"github.com/stratakv/strata/keyspace"
	"github.com/stratakv/strata/lsm"
	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/metrics"
	"github.com/stratakv/strata/resp"
)

// serverFlags are `strata server`'s settings. Names are redis-server's
// where Redis has the setting; each can also be given in a config file
// (`name value` lines, as redis.conf).
type serverFlags struct {
	bucketFlags
	port             int
	bind             string
	requirePass      string
	protectedMode    string
	tls              resp.TLSOptions
	maxClients       int
	appendFsync      string
	protoMaxBulkLen  string
	queryBufLimit    string
	compaction       string
	logLevel         string
	logFormat        string
	blockCache       string
	diskCache        string
	diskCacheSize    string
	memtableSize     string
	memoryLimit      string
	walFlushInterval string
	shutdownTimeout  time.Duration
	metricsAddr      string
}

func (f *serverFlags) register(fs *flag.FlagSet) {
	f.bucketFlags.register(fs)
	fs.IntVar(&f.port, "port", 6379, "TCP port to serve RESP on")
	fs.StringVar(&f.bind, "bind", "127.0.0.1", "addresses to listen on, space-separated")
	fs.StringVar(&f.requirePass, "requirepass", "", "password clients must AUTH with (empty: none)")
	fs.StringVar(&f.protectedMode, "protected-mode", "yes", "yes: while no password is set, refuse clients from other hosts than this one")
	fs.IntVar(&f.tls.Port, "tls-port", 0, "TCP port to serve RESP over TLS on (0: none)")
	fs.StringVar(&f.tls.CertFile, "tls-cert-file", "", "the TLS port's certificate (PEM)")
	fs.StringVar(&f.tls.KeyFile, "tls-key-file", "", "the TLS port's private key (PEM)")
	fs.StringVar(&f.tls.CACertFile, "tls-ca-cert-file", "", "CA certificates (PEM) that client certificates must chain to")
	fs.StringVar(&f.tls.AuthClients, "tls-auth-clients", "yes", "yes: clients need a certificate from tls-ca-cert-file; optional: checked if sent; no")
	fs.IntVar(&f.maxClients, "maxclients", 10000, "maximum connected clients")
	fs.StringVar(&f.appendFsync, "appendfsync", "always", "always: reply to writes once durable; everysec: reply at once (a crash may lose the last WAL flush interval)")
	fs.StringVar(&f.protoMaxBulkLen, "proto-max-bulk-len", "512mb", "largest argument a client may send")
	fs.StringVar(&f.queryBufLimit, "client-query-buffer-limit", "1gb", "largest command a client may send")
	fs.StringVar(&f.compaction, "compaction", "in-process", "in-process: compact and collect garbage in this process; off: a separate `strata compactor` does")
	fs.StringVar(&f.logLevel, "loglevel", "notice", "debug, verbose, notice or warning")
	fs.StringVar(&f.logFormat, "logformat", "text", "text or json")
	fs.StringVar(&f.blockCache, "block-cache", "256mb", "SST block cache size")
	fs.StringVar(&f.diskCache, "disk-cache", "", "directory of a local disk cache of SST parts, kept across restarts (empty: off)")
	fs.StringVar(&f.diskCacheSize, "disk-cache-size", "1gb", "disk cache size")
	fs.StringVar(&f.memtableSize, "memtable-size", "64mb", "memtable size at which it is flushed to an L0 SST")
	fs.StringVar(&f.memoryLimit, "memory-limit", "auto", "soft limit of the Go heap (auto: block cache + 4 memtables + 384mb; 0: none)")
	fs.StringVar(&f.walFlushInterval, "wal-flush-interval", "auto", "minimum time between WAL PUT starts, e.g. 50ms on S3 to bound their number and cost; a write that has waited an interval starts a PUT beside the one in flight (0: one PUT at a time, the next as soon as it ends; auto: 0 with appendfsync always, 1s with everysec)")
	fs.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long shutdown waits for clients to finish")
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", "host:port to serve /metrics, /healthz, /readyz and /debug/pprof/ on, e.g. 127.0.0.1:9121 (empty: off)")
}

// parseServerArgs reads an optional config file (the first argument when it
// is not a flag, as with redis-server) and then the flags, which override it.
func parseServerArgs(args []string) (*serverFlags, error) {
	fs := flag.NewFlagSet("strata server", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := &serverFlags{}
	f.register(fs)
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		if err := applyConfigFile(fs, args[0]); err != nil {
			return nil, err
		}
		args = args[1:]
	}
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return f, nil
}

// applyConfigFile sets flags from `name value...` lines; # starts a comment.
// Values may be double-quoted.
func applyConfigFile(fs *flag.FlagSet, path string) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, _ := strings.Cut(line, " ")
		value = strings.TrimSpace(value)
		if uq, err := strconv.Unquote(value); err == nil && strings.HasPrefix(value, `"`) {
			value = uq
		}
		if fs.Lookup(strings.ToLower(name)) == nil {
			return fmt.Errorf("%s:%d: unknown setting %q", path, n, name)
		}
		if err := fs.Set(strings.ToLower(name), value); err != nil {
			return fmt.Errorf("%s:%d: %s: %v", path, n, name, err)
		}
	}
	return sc.Err()
}

// logger returns the server's logger, writing to w.
func (f *serverFlags) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	switch f.logLevel {
	case "debug", "verbose":
		level = slog.LevelDebug
	case "notice":
		level = slog.LevelInfo
	case "warning":
		level = slog.LevelWarn
	default:
		return nil, fmt.Errorf("loglevel must be debug, verbose, notice or warning, not %q", f.logLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch f.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("logformat must be text or json, not %q", f.logFormat)
}

// runServer runs `strata server` until SIGTERM, SIGINT or SHUTDOWN.
func runServer(args []string) int {
	f, err := parseServerArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "strata server: %v\n", err)
		return 2
	}
	// Everything the server prints goes through stderr, scrubbed of the
	// bucket's credentials and the password, whatever printed it.
	stderr := newRedactWriter(os.Stderr, f.secrets(f.requirePass))
	logger, err := f.logger(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "strata server: %v\n", err)
		return 2
	}
	if err := serve(f, logger); err != nil {
		fmt.Fprintf(stderr, "strata server: %v\n", err)
		return 1
	}
	return 0
}

// defaultGCPercent is the server's GOGC unless the environment sets one:
// the heap is mostly the memtables and the block cache, which live long, so
// collecting at +100% spends CPU for little; at +200% a pipelined SET load
// ran about a fifth faster.
const defaultGCPercent = 200

// setMemoryLimit sets the Go runtime's soft memory limit. With GOGC=200 the
// heap may grow to three times what is live before a collection, and the
// live heap is mostly the block cache and memtables: a 5 GB load peaked at
// 2.7 GB of RSS for 470 MB live. A limit of what the server means to hold
// (block cache, up to 4 memtables in memory, 384 MiB for everything else:
// 896 MiB by default) makes the collector run before the heap passes it and
// costs nothing while the heap is below it. With 512 MiB of slack the same
// load peaked at 1059 MB of RSS, over the 1 GB the server is meant to fit.
// GOMEMLIMIT in the environment wins, as the runtime's own setting.
func setMemoryLimit(spec string, cacheBytes, memtable int64, logger *slog.Logger) error {
	if os.Getenv("GOMEMLIMIT") != "" {
		return nil
	}
	var limit int64
	switch spec {
	case "auto":
		limit = cacheBytes + 4*memtable + 384<<20
	default:
		n, err := parseSize(spec)
		if err != nil {
			return fmt.Errorf("memory-limit: %v", err)
		}
		limit = n
	}
	if limit > 0 {
		debug.SetMemoryLimit(limit)
		logger.Debug("go memory limit", "bytes", limit)
	}
	return nil
}

func serve(f *serverFlags, logger *slog.Logger) error {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	maxBulk, err := parseSize(f.protoMaxBulkLen)
	if err != nil {
		return fmt.Errorf("proto-max-bulk-len: %v", err)
	}
	queryLimit, err := parseSize(f.queryBufLimit)
	if err != nil {
		return fmt.Errorf("client-query-buffer-limit: %v", err)
	}
	cacheBytes, err := parseSize(f.blockCache)
	if err != nil {
		return fmt.Errorf("block-cache: %v", err)
	}
	walInterval, err := f.walInterval()
	if err != nil {
		return err
	}
	memtable, err := parseSize(f.memtableSize)
	if err != nil {
		return fmt.Errorf("memtable-size: %v", err)
	}
	if f.compaction != "in-process" && f.compaction != "off" {
		return fmt.Errorf("compaction must be in-process or off, not %q", f.compaction)
	}
	if err := setMemoryLimit(f.memoryLimit, cacheBytes, memtable, logger); err != nil {
		return err
	}

	protected, err := parseYesNo("protected-mode", f.protectedMode)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	lns, err := f.listen()
	if err != nil {
		return err
	}
	closeListeners := func() {
		for _, l := range lns {
			l.Close()
		}
	}

	me, err := startMetrics(f.metricsAddr, logger)
	if err != nil {
		closeListeners()
		return err
	}
	defer me.close()

	bkt, lb, err := f.bucketFlags.openLocal(ctx, logger) // lb: nil unless a local directory
	if err != nil {
		closeListeners()
		return err
	}
	bkt = me.instrument(bkt)
	// The cache wraps outside the metrics, which then count only the
	// requests it could not serve; the in-process compactor shares it, so
	// compaction outputs are written through.
	bkt, dc, err := openDiskCache(f, bkt, logger)
	if err != nil {
		closeListeners()
		return err
	}
	defer bkt.Close()
	openCtx, cancelOpen := context.WithTimeout(ctx, time.Minute)
	// One pacer for the server: clients' requests tell it when background
	// work (flushes, WAL objects, compactions) should step aside.
	pacer := new(sst.Pacer)
	db, err := lsm.Open(openCtx, bkt, lsm.Options{BlockCacheBytes: cacheBytes, MemtableSize: memtable,
		WALFlushInterval: walInterval, Pacer: pacer, Logger: logger.With("component", "lsm")})
	cancelOpen()
	if err != nil {
		closeListeners()
		return fmt.Errorf("cannot open the database in %s: %v", f.describe(), err)
	}
	store, err := keyspace.Open(ctx, db, keyspace.Options{Async: true, Logger: logger})
	if err != nil {
		closeListeners()
		db.Close()
		return fmt.Errorf("cannot open the keyspace: %v", err)
	}

	var bg sync.WaitGroup
	bgCtx, stopBG := context.WithCancel(context.Background())
	defer stopBG()
	var comp *compactor.Compactor
	if f.compaction == "in-process" {
		comp, err = compactor.Open(ctx, bkt, compactor.Options{Filter: keyspace.NewFilterFactory(), Pacer: pacer, Logger: logger.With("component", "compactor")})
		if err != nil {
			closeListeners()
			db.Close()
			return fmt.Errorf("cannot start the compactor: %v", err)
		}
		bg.Add(1)
		go func() {
			defer bg.Done()
			if err := comp.Run(bgCtx); err != nil && !errors.Is(err, context.Canceled) {
				logger.Warn("in-process compactor stopped", "err", err)
			}
		}()
	}
	bg.Add(1)
	go func() {
		defer bg.Done()
		if err := store.RunExpirer(bgCtx, keyspace.ExpirerOptions{}); err != nil && !errors.Is(err, context.Canceled) {
			logger.Warn("active expiry stopped", "err", err)
		}
	}()

	shutdown := make(chan struct{})
	var once sync.Once
	srv, err := resp.New(db, store, resp.Config{
		RequirePass: f.requirePass, ProtectedMode: protected, TLS: f.tls,
		MaxClients: f.maxClients, AppendFsync: f.appendFsync,
		ProtoMaxBulkLen: maxBulk, ClientQueryBufferLimit: queryLimit,
		Port: f.port, Bind: f.bind, Dir: f.dir, Bucket: f.describe(),
		Extra: func() []resp.InfoSection {
			return []resp.InfoSection{compactorInfo(comp), me.objstoreInfo(), diskCacheInfo(dc), journalInfo(lb)}
		},
		Shutdown: func() { once.Do(func() { close(shutdown) }) },
		Pacer:    pacer,
		Logger:   logger.With("component", "resp"),
	})
	if err != nil {
		closeListeners()
		db.Close()
		return err
	}
	for _, ln := range lns {
		go func() {
			if err := srv.Serve(ln); err != nil {
				logger.Error("accept loop stopped", "addr", ln.Addr(), "err", err)
			}
		}()
	}
	src := metrics.Sources{Engine: db.Metrics, Commands: commandStats(srv), Clients: srv.Clients}
	if comp != nil {
		src.Compactor = comp.Stats
	}
	src.Extra = func() []lsm.Figure {
		figs := srv.KeyCountFigures()
		if dc != nil {
			figs = append(figs, diskCacheFigures(dc.Stats())...)
		}
		if lb != nil {
			figs = append(figs, journalFigures(lb.JournalStats())...)
			figs = append(figs, recycleFigures(lb.RecycleStats())...)
		}
		return figs
	}
	// Ready while the engine accepts writes: not once fenced by a newer
	// server (the engine learns it from its manifest poll), closed or
	// stopped by a storage failure.
	me.serving(src, func(context.Context) error { return db.Err() })
	logger.Info("ready to accept connections", "bind", f.bind, "port", f.port, "tls_port", f.tls.Port, "bucket", f.describe(),
		"appendfsync", f.appendFsync, "compaction", f.compaction)

	select {
	case <-ctx.Done():
		logger.Info("signal received, shutting down")
	case <-shutdown:
		logger.Info("SHUTDOWN received, shutting down")
	}
	me.stopping()
	return shutdownServer(srv, db, stopBG, &bg, f.shutdownTimeout, logger)
}

// shutdownServer stops accepting, lets clients finish, stops the
// background work, and closes the engine, which flushes the WAL and the
// memtable to the bucket.
func shutdownServer(srv *resp.Server, db *lsm.DB, stopBG func(), bg *sync.WaitGroup, timeout time.Duration, logger *slog.Logger) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := srv.Close(ctx); err != nil {
		logger.Warn("clients did not finish in time; closed them", "err", err)
	}
	stopBG()
	bg.Wait()
	start := time.Now()
	if err := db.Close(); err != nil {
		return fmt.Errorf("closing the engine: %v", err)
	}
	logger.Info("engine closed; bye", "flush_time", time.Since(start).Round(time.Millisecond))
	return nil
}

func compactorInfo(c *compactor.Compactor) resp.InfoSection {
	if c == nil {
		return resp.InfoSection{Name: "Compactor", Fields: [][2]string{{"compaction", "off"}}}
	}
	return resp.InfoSection{Name: "Compactor",
		Fields: append([][2]string{{"compaction", "in-process"}}, resp.FigureFields(c.Stats().Figures())...)}
}

// walInterval is --wal-flush-interval. Its default, auto, follows
// appendfsync as redis-server's fsync policy does: with always a reply waits
// for its PUT, so PUTs start as soon as one can; with everysec nothing
// waits, and one PUT a second bounds what a crash can lose to what Redis
// everysec loses, for a second's worth of PUT cost and CPU.
func (f *serverFlags) walInterval() (time.Duration, error) {
	if f.walFlushInterval == "auto" {
		if f.appendFsync == "everysec" {
			return time.Second, nil
		}
		return 0, nil
	}
	d, err := time.ParseDuration(f.walFlushInterval)
	if err == nil && d < 0 {
		err = errors.New("negative")
	}
	if err != nil {
		return 0, fmt.Errorf("--wal-flush-interval %q: want a duration such as 50ms, or auto", f.walFlushInterval)
	}
	return d, nil
}

// parseSize parses a size as redis.conf writes them: 1024, 10k, 10kb, 5m,
// 5mb, 1g, 1gb (k/m/g are powers of 1000, kb/mb/gb of 1024).
func parseSize(v string) (int64, error) {
	v = strings.ToLower(strings.TrimSpace(v))
	units := []struct {
		suffix string
		mult   int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"b", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(v, u.suffix) {
			v, mult = strings.TrimSuffix(v, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q", v)
	}
	return n * mult, nil
}
