package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"
)

// readSetup is one way of running the read servers: the disk cache, and
// whether its directory starts empty.
type readSetup struct {
	name      string
	diskCache bool
	kept      bool // reuse the previous setup's disk cache directory (a restart)
}

var readSetups = []readSetup{
	{name: "no disk cache"},
	{name: "disk cache, empty", diskCache: true},
	{name: "disk cache kept, restarted", diskCache: true, kept: true},
}

// readPass is one pass of random GETs.
type readPass struct {
	delay    time.Duration
	setup    string
	pass     string // cold (first after a start) or warm (the second)
	res      *LoadResult
	getRange float64 // objstore_get_range delta
	get      float64 // objstore_get delta (manifest probes included)
	blockHit float64 // block cache hit ratio
	diskHits float64 // disk cache parts served
}

// getsPerRead is bucket GETs of any kind per GET served.
func (p readPass) getsPerRead() float64 { return (p.getRange + p.get) / float64(p.res.Ops) }

// runReadPasses loads the keyspace once, then per store latency and setup
// starts a server on it (empty block cache), and runs a cold and a warm
// pass of random GETs.
func runReadPasses(ctx context.Context, env *Env, cfg *latencyConfig) ([]readPass, error) {
	parent, err := tempDir("latency")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(parent)
	dir, err := loadKeyspace(ctx, env, parent, cfg.keys, cfg.readValue)
	if err != nil {
		return nil, err
	}
	var passes []readPass
	for _, d := range cfg.delays {
		cacheDir := filepath.Join(parent, "diskcache-"+d.String())
		for _, s := range readSetups {
			args := []string{"--compaction", "off", "--block-cache", cfg.blockCache}
			if s.diskCache {
				args = append(args, "--disk-cache", cacheDir)
			}
			srv, err := startOnDir(ctx, dir, d, args...)
			if err != nil {
				return nil, err
			}
			for i, name := range []string{"cold", "warm"} {
				p, err := measureReads(ctx, srv, cfg, uint64(10*i+1))
				if err != nil {
					srv.Stop()
					return nil, err
				}
				p.delay, p.setup, p.pass = d, s.name, name
				fmt.Fprintf(env.Log, "store %v, %s, %s: %.0f GET/s, p50 %s ms, p99 %s ms, %.3f bucket GETs per read\n",
					d, s.name, name, p.res.Throughput(), ms(p.res.Latency.Quantile(0.5)), ms(p.res.Latency.Quantile(0.99)), p.getsPerRead())
				passes = append(passes, p)
			}
			err = checkLoaded(srv.Addr, cfg)
			srv.Stop()
			if err != nil {
				return nil, err
			}
		}
	}
	return passes, nil
}

// measureReads runs cfg.reads random GETs over the loaded keys from
// cfg.readClients closed-loop clients.
func measureReads(ctx context.Context, srv *Server, cfg *latencyConfig, seed uint64) (readPass, error) {
	before, err := ReadCounters(srv)
	if err != nil {
		return readPass{}, err
	}
	res, err := Drive(ctx, DriveOptions{Addr: srv.Addr, Conns: cfg.readClients, Total: uint64(cfg.reads), Seed: seed},
		func(c *Conn, _ int, _ uint64, rng *rand.Rand) int {
			c.Send("GET", readKey(rng.Uint64N(uint64(cfg.keys))))
			return 1
		})
	if err != nil {
		return readPass{}, err
	}
	if res.FirstErr != nil {
		return readPass{}, fmt.Errorf("GET: %v", res.FirstErr)
	}
	after, err := ReadCounters(srv)
	if err != nil {
		return readPass{}, err
	}
	hits, misses := before.Delta(after, "block_cache_hits"), before.Delta(after, "block_cache_misses")
	return readPass{res: res, getRange: before.Delta(after, "objstore_get_range"), get: before.Delta(after, "objstore_get"),
		blockHit: hits / max(hits+misses, 1), diskHits: before.Delta(after, "disk_cache_hits")}, nil
}

// checkLoaded reads back the first and last loaded keys: the passes read
// real values, not misses.
func checkLoaded(addr string, cfg *latencyConfig) error {
	c, err := Dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, i := range []uint64{0, uint64(cfg.keys - 1)} {
		v, err := c.Do("GET", readKey(i))
		if b, ok := v.([]byte); err != nil || !ok || len(b) != cfg.readValue {
			return fmt.Errorf("GET %s after the passes: %d bytes, %v; want %d", readKey(i), len(b), err, cfg.readValue)
		}
	}
	return nil
}

func reportReadPasses(env *Env, cfg *latencyConfig, passes []readPass) error {
	t := &Table{Title: "Point reads: bucket GETs per read, cold and warm, with and without the disk cache",
		Columns: []string{"store latency", "setup", "pass", "GET/s", "p50 ms", "p99 ms", "bucket GETs per read", "get_range", "get", "block cache hit %", "disk cache part hits"}}
	for _, p := range passes {
		t.AddRow(p.delay, p.setup, p.pass, p.res.Throughput(), ms(p.res.Latency.Quantile(0.5)), ms(p.res.Latency.Quantile(0.99)),
			fmt.Sprintf("%.3f", p.getsPerRead()), p.getRange, p.get, fmt.Sprintf("%.1f", 100*p.blockHit), p.diskHits)
	}
	t.Note = fmt.Sprintf("%d keys × %d B random values, loaded on an undelayed store, saved to SSTs and compacted; then per "+
		"row a server started on them (so the block cache starts empty) with --block-cache %s, --compaction off (no "+
		"background reads) and every bucket call delayed by the store latency. Each pass: %d uniform random GETs from %d "+
		"closed-loop clients; cold is the first pass after the start, warm the second (other keys). The kept disk cache is "+
		"the previous row's directory, reused by a restarted server. get counts the engine's manifest probes (about 1/s) too.",
		cfg.keys, cfg.readValue, cfg.blockCache, cfg.reads, cfg.readClients)
	env.Report.Table(t)
	var series []Series
	for _, pass := range []string{"cold", "warm"} {
		s := Series{Name: pass}
		for _, p := range passes {
			if p.pass == pass {
				s.Labels = append(s.Labels, fmt.Sprintf("%v %s", p.delay, shortSetup(p.setup)))
				s.Y = append(s.Y, p.getsPerRead())
			}
		}
		series = append(series, s)
	}
	return env.Report.BarChart("gets-per-read", "Bucket GETs per point read", "GETs per read", series...)
}

// shortSetup abbreviates a setup name for chart labels.
func shortSetup(name string) string {
	switch name {
	case "no disk cache":
		return "no cache"
	case "disk cache, empty":
		return "cache"
	}
	return "cache restart"
}
