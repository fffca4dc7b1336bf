package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"time"
)

// The latency experiment (issue 8, item 2): Strata on an object store
// slowed to S3-like latencies by the fault wrapper (every call delayed),
// measuring durable SET latency and throughput against the WAL flush
// interval, and cold and warm point reads with and without the disk cache.
func init() {
	register(experiment{name: "latency", about: "durable SETs and point reads on an object store with 20 ms and 50 ms per request", run: runLatency})
}

// latencyConfig is the latency experiment's flags.
type latencyConfig struct {
	delays      []time.Duration // injected per-request latency
	intervals   []time.Duration // --wal-flush-interval values
	clients     []int           // closed-loop SET clients
	duration    time.Duration   // per SET measurement
	setValue    int             // SET value bytes
	keys        int             // loaded keyspace for reads
	readValue   int             // its value bytes
	reads       int             // GETs per read pass
	readClients int
	blockCache  string // the read servers' --block-cache
}

func parseLatencyFlags(env *Env, args []string) (*latencyConfig, error) {
	fs := flag.NewFlagSet("latency", flag.ContinueOnError)
	delays := fs.String("delays", "20ms,50ms", "object-store latency injected per request (STRATA_FAULTS slow=1:D)")
	intervals := fs.String("intervals", "0,10ms,50ms,100ms", "WAL flush intervals (--wal-flush-interval)")
	clients := fs.String("clients", "50,500", "closed-loop SET clients, one SET in flight each")
	cfg := &latencyConfig{}
	fs.DurationVar(&cfg.duration, "duration", 15*time.Second, "each SET measurement (after a 2 s warm-up)")
	fs.IntVar(&cfg.setValue, "set-value", 100, "SET value bytes")
	fs.IntVar(&cfg.keys, "keys", 200_000, "keys loaded for the read passes")
	fs.IntVar(&cfg.readValue, "read-value", 1024, "bytes per loaded value")
	fs.IntVar(&cfg.reads, "reads", 5000, "random GETs per read pass")
	fs.IntVar(&cfg.readClients, "read-clients", 32, "closed-loop GET clients")
	fs.StringVar(&cfg.blockCache, "block-cache", "16mb", "the read servers' --block-cache, well below the loaded data")
	if env.Short {
		*delays, *intervals, *clients = "20ms", "0,50ms", "50"
		cfg.duration, cfg.keys, cfg.reads, cfg.blockCache = 3*time.Second, 20_000, 600, "1mb"
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var err error
	if cfg.delays, err = parseList(*delays, time.ParseDuration); err != nil {
		return nil, err
	}
	if cfg.intervals, err = parseList(*intervals, time.ParseDuration); err != nil {
		return nil, err
	}
	if cfg.clients, err = parseList(*clients, strconv.Atoi); err != nil {
		return nil, err
	}
	return cfg, nil
}

func runLatency(ctx context.Context, env *Env, args []string) error {
	cfg, err := parseLatencyFlags(env, args)
	if err != nil {
		return err
	}
	sets, err := runSetSweep(ctx, env, cfg)
	if err != nil {
		return err
	}
	if err := reportSetSweep(env, cfg, sets); err != nil {
		return err
	}
	reads, err := runReadPasses(ctx, env, cfg)
	if err != nil {
		return err
	}
	return reportReadPasses(env, cfg, reads)
}

// setRun is one durable-SET measurement.
type setRun struct {
	delay, interval time.Duration
	clients         int
	res             *LoadResult
	walPuts         float64 // WAL objects stored per second
	batchesPerPut   float64
	hedges          float64
	beside          float64 // share of WAL PUTs started while another was in flight
	uploads         float64 // all object-store uploads per second (WAL, SSTs, manifests)
}

// runSetSweep measures every delay × interval × client count, one fresh
// server per delay and interval.
func runSetSweep(ctx context.Context, env *Env, cfg *latencyConfig) ([]setRun, error) {
	var runs []setRun
	for _, d := range cfg.delays {
		for _, iv := range cfg.intervals {
			srv, err := StartStrata(ctx, slowStoreEnv(d), "--appendfsync", "always", "--wal-flush-interval", iv.String())
			if err != nil {
				return nil, err
			}
			for _, n := range cfg.clients {
				r, err := measureSets(ctx, srv, cfg, n)
				if err != nil {
					srv.Stop()
					return nil, err
				}
				r.delay, r.interval = d, iv
				fmt.Fprintf(env.Log, "store %v, interval %v, %d clients: %.0f SET/s, p50 %s ms, p99 %s ms, %.1f WAL PUTs/s\n",
					d, iv, n, r.res.Throughput(), ms(r.res.Latency.Quantile(0.5)), ms(r.res.Latency.Quantile(0.99)), r.walPuts)
				runs = append(runs, r)
			}
			srv.Stop()
		}
	}
	return runs, nil
}

// measureSets runs n closed-loop clients, one SET each in flight, for a
// warm-up and then cfg.duration, reading INFO around the measured part.
func measureSets(ctx context.Context, srv *Server, cfg *latencyConfig, n int) (setRun, error) {
	value := make([]byte, cfg.setValue)
	op := func(c *Conn, _ int, _ uint64, rng *rand.Rand) int {
		c.Send("SET", "k"+strconv.FormatUint(rng.Uint64N(1_000_000), 10), value)
		return 1
	}
	if _, err := Drive(ctx, DriveOptions{Addr: srv.Addr, Conns: n, Duration: 2 * time.Second, Seed: 1}, op); err != nil {
		return setRun{}, err
	}
	before, err := ReadCounters(srv)
	if err != nil {
		return setRun{}, err
	}
	res, err := Drive(ctx, DriveOptions{Addr: srv.Addr, Conns: n, Duration: cfg.duration, Seed: 2}, op)
	if err != nil {
		return setRun{}, err
	}
	if res.FirstErr != nil {
		return setRun{}, fmt.Errorf("SET: %v", res.FirstErr)
	}
	after, err := ReadCounters(srv)
	if err != nil {
		return setRun{}, err
	}
	secs := res.Elapsed.Seconds()
	objs := before.Delta(after, "wal_objects")
	return setRun{clients: n, res: res, walPuts: objs / secs, batchesPerPut: before.Delta(after, "wal_batches") / max(objs, 1),
		hedges: before.Delta(after, "wal_put_hedges"), beside: before.Delta(after, "wal_puts_beside") / max(objs, 1),
		uploads: before.Delta(after, "objstore_upload") / secs}, nil
}

func reportSetSweep(env *Env, cfg *latencyConfig, runs []setRun) error {
	t := &Table{Title: "Durable SET latency vs WAL flush interval, object store slowed per request",
		Columns: []string{"store latency", "flush interval", "clients", "SET/s", "p50 ms", "p99 ms", "WAL PUTs/s", "batches per PUT", "PUTs beside %", "hedged PUTs", "uploads/s"}}
	for _, r := range runs {
		t.AddRow(r.delay, r.interval, r.clients, r.res.Throughput(), ms(r.res.Latency.Quantile(0.5)),
			ms(r.res.Latency.Quantile(0.99)), r.walPuts, r.batchesPerPut, fmt.Sprintf("%.0f", 100*r.beside), r.hedges, r.uploads)
	}
	t.Note = fmt.Sprintf("strata server --appendfsync always --wal-flush-interval I on a local bucket whose every call "+
		"(PUT, GET, LIST...) STRATA_FAULTS delays by the store latency; closed-loop clients, one SET of %d B each in "+
		"flight, uniform over 1M keys, %v per row after a 2 s warm-up. WAL PUTs/s and batches per PUT from INFO "+
		"wal_objects and wal_batches; PUTs beside: the share started while another was in flight (wal_puts_beside); "+
		"hedged PUTs: wal_put_hedges in the row; uploads/s counts every PUT "+
		"(WAL, SSTs, manifests). Host: %d-core shared machine.", cfg.setValue, cfg.duration, runtime.NumCPU())
	env.Report.Table(t)
	var series []Series
	for _, d := range cfg.delays {
		for _, n := range cfg.clients {
			s := Series{Name: fmt.Sprintf("%v store, %d clients", d, n)}
			for _, r := range runs {
				if r.delay == d && r.clients == n {
					s.X = append(s.X, float64(r.interval)/float64(time.Millisecond))
					s.Y = append(s.Y, float64(r.res.Latency.Quantile(0.99))/float64(time.Millisecond))
				}
			}
			series = append(series, s)
		}
	}
	return env.Report.LineChart("set-p99", "Durable SET p99 vs WAL flush interval", "WAL flush interval (ms)", "SET p99 (ms)", false, series...)
}
