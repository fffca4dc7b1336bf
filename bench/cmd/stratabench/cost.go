package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"time"
)

// The cost experiment (issue 8, item 3): object-store requests per million
// writes and per million reads under steady open-loop load, from the
// server's own request metrics (INFO objstore_*, which count the
// in-process compactor's and GC's requests too), and what they would cost
// a month at S3 list prices.
func init() {
	register(experiment{name: "cost", about: "object-store requests per 1M writes and reads at steady load, and their monthly S3 cost", run: runCost})
}

// costConfig is the cost experiment's flags.
type costConfig struct {
	rates        []float64       // target commands/s, writes and reads alike
	intervals    []time.Duration // --wal-flush-interval values for the write runs
	storeLatency time.Duration
	duration     time.Duration
	writeConns   int
	readConns    int
	setValue     int
	keys         int
	readValue    int
	blockCache   string
}

func parseCostFlags(env *Env, args []string) (*costConfig, error) {
	fs := flag.NewFlagSet("cost", flag.ContinueOnError)
	rates := fs.String("rates", "1000,5000,10000", "target writes/s, then reads/s, one steady run each")
	intervals := fs.String("intervals", "0,50ms", "WAL flush intervals of the write runs (0: the server's default)")
	cfg := &costConfig{}
	fs.DurationVar(&cfg.storeLatency, "store-latency", 20*time.Millisecond, "per-request object-store latency injected (STRATA_FAULTS), S3-like; 0: the local disk as is")
	fs.DurationVar(&cfg.duration, "duration", 30*time.Second, "each steady run")
	fs.IntVar(&cfg.writeConns, "write-conns", 64, "connections the writes are spread over (each pipelines)")
	fs.IntVar(&cfg.readConns, "read-conns", 256, "connections the reads are spread over; a connection serves its GETs in order")
	fs.IntVar(&cfg.setValue, "set-value", 100, "SET value bytes")
	fs.IntVar(&cfg.keys, "keys", 200_000, "keys loaded for the read runs")
	fs.IntVar(&cfg.readValue, "read-value", 1024, "bytes per loaded value")
	fs.StringVar(&cfg.blockCache, "block-cache", "32mb", "the read servers' --block-cache, below the loaded data")
	if env.Short {
		*rates = "1000"
		cfg.duration, cfg.keys, cfg.blockCache = 10*time.Second, 20_000, "2mb"
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var err error
	if cfg.rates, err = parseList(*rates, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }); err != nil {
		return nil, err
	}
	if cfg.intervals, err = parseList(*intervals, time.ParseDuration); err != nil {
		return nil, err
	}
	return cfg, nil
}

func runCost(ctx context.Context, env *Env, args []string) error {
	cfg, err := parseCostFlags(env, args)
	if err != nil {
		return err
	}
	writes, err := runCostWrites(ctx, env, cfg)
	if err != nil {
		return err
	}
	reads, err := runCostReads(ctx, env, cfg)
	if err != nil {
		return err
	}
	return reportCost(env, cfg, writes, reads)
}

// costRun is one steady run: its setting, the load measured, and the
// server's counters before and after it.
type costRun struct {
	setting string // flush interval (writes) or read setup (reads)
	target  float64
	res     *RateResult
	before  Counters
	after   Counters
}

// sustained: the server answered at least 95% of the target rate.
func (r costRun) sustained() bool { return r.res.Throughput() >= 0.95*r.target }

// perMillion is the requests of counter k per million commands served.
func (r costRun) perMillion(k string) float64 {
	return r.before.Delta(r.after, k) / float64(r.res.Done) * 1e6
}

// perSecond is counter k's rate over the run.
func (r costRun) perSecond(k string) float64 {
	return r.before.Delta(r.after, k) / r.res.Elapsed.Seconds()
}

// runCostWrites runs every rate of SETs against a fresh server per flush
// interval.
func runCostWrites(ctx context.Context, env *Env, cfg *costConfig) ([]costRun, error) {
	value := make([]byte, cfg.setValue)
	set := func(rng *rand.Rand) []any {
		return []any{"SET", "w" + strconv.FormatUint(rng.Uint64N(10_000_000), 10), value}
	}
	var runs []costRun
	for _, iv := range cfg.intervals {
		srv, err := StartStrata(ctx, slowStoreEnv(cfg.storeLatency), "--appendfsync", "always", "--wal-flush-interval", iv.String())
		if err != nil {
			return nil, err
		}
		for _, rate := range cfg.rates {
			r, err := steadyRun(ctx, srv, RateOptions{Addr: srv.Addr, Conns: cfg.writeConns, Rate: rate, Duration: cfg.duration, Seed: 3}, set)
			if err != nil {
				srv.Stop()
				return nil, err
			}
			r.setting = "flush interval " + iv.String()
			logCostRun(env, "SET", r)
			runs = append(runs, r)
		}
		srv.Stop()
	}
	return runs, nil
}

// runCostReads loads the keyspace, then runs every rate of random GETs on
// a server started on it, without and then with a (new) disk cache.
func runCostReads(ctx context.Context, env *Env, cfg *costConfig) ([]costRun, error) {
	parent, err := tempDir("cost")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(parent)
	dir, err := loadKeyspace(ctx, env, parent, cfg.keys, cfg.readValue)
	if err != nil {
		return nil, err
	}
	get := func(rng *rand.Rand) []any { return []any{"GET", readKey(rng.Uint64N(uint64(cfg.keys)))} }
	var runs []costRun
	for _, setup := range []string{"no disk cache", "disk cache"} {
		args := []string{"--block-cache", cfg.blockCache}
		if setup == "disk cache" {
			args = append(args, "--disk-cache", parent+"/diskcache")
		}
		srv, err := startOnDir(ctx, dir, cfg.storeLatency, args...)
		if err != nil {
			return nil, err
		}
		for _, rate := range cfg.rates {
			r, err := steadyRun(ctx, srv, RateOptions{Addr: srv.Addr, Conns: cfg.readConns, Rate: rate, Duration: cfg.duration, Seed: 4}, get)
			if err != nil {
				srv.Stop()
				return nil, err
			}
			r.setting = setup
			logCostRun(env, "GET", r)
			runs = append(runs, r)
		}
		srv.Stop()
	}
	return runs, nil
}

// steadyRun drives one open-loop run and reads the counters around it.
func steadyRun(ctx context.Context, srv *Server, o RateOptions, cmd Command) (costRun, error) {
	before, err := ReadCounters(srv)
	if err != nil {
		return costRun{}, err
	}
	res, err := DriveRate(ctx, o, cmd)
	if err != nil {
		return costRun{}, err
	}
	if res.FirstErr != nil {
		return costRun{}, fmt.Errorf("%v/s: %v", o.Rate, res.FirstErr)
	}
	after, err := ReadCounters(srv)
	if err != nil {
		return costRun{}, err
	}
	return costRun{target: o.Rate, res: res, before: before, after: after}, nil
}

func logCostRun(env *Env, cmd string, r costRun) {
	fmt.Fprintf(env.Log, "%s, %s %.0f/s: %.0f/s served, p50 %s ms, p99 %s ms, %.1f WAL PUTs/s, %.0f uploads and %.0f GETs per 1M\n",
		r.setting, cmd, r.target, r.res.Throughput(), ms(r.res.Latency.Quantile(0.5)), ms(r.res.Latency.Quantile(0.99)),
		r.perSecond("wal_objects"), r.perMillion("objstore_upload"), r.perMillion("objstore_get")+r.perMillion("objstore_get_range"))
}
