package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The ltm experiment (issue 8, "larger than memory"): load far more data
// than the block cache through the RESP server, then read it back at random
// (uniform, zipfian, a hot set that fits the cache), in ranges (MGET of
// consecutive keys) and whole (SCAN), watching the server's RSS all along,
// and compare the bucket's size with the data's. The hot set's GETs are
// measured on redis-server too, the peer for the cached-GET latency aim.

func init() {
	register(experiment{
		name:  "ltm",
		about: "larger than memory: load keys × 1 KB through RESP with a small block cache, then random GETs, MGETs and SCAN; RSS, latency, bucket size",
		run:   runLTM,
	})
}

// ltmConfig is the experiment's flags.
type ltmConfig struct {
	keys       int
	value      int
	conns      int
	loadConns  int
	pipeline   int
	duration   time.Duration
	blockCache string
	cacheBytes int64
	settleMax  time.Duration
	gcWait     time.Duration
	serverEnv  string
	pprofDir   string
}

// rssAim is issue 8's aim for the server's peak RSS over the whole run.
const rssAim = 1 << 30

func parseLTMFlags(env *Env, args []string) (*ltmConfig, error) {
	c := &ltmConfig{}
	fs := flag.NewFlagSet("ltm", flag.ContinueOnError)
	fs.SetOutput(env.Log)
	keys, dur, settle, gcWait := 5_000_000, 60*time.Second, 15*time.Minute, 30*time.Minute
	if env.Short {
		keys, dur, settle, gcWait = 200_000, 10*time.Second, 2*time.Minute, 0
	}
	fs.IntVar(&c.keys, "keys", keys, "keys to load (k:%010d)")
	fs.IntVar(&c.value, "value", 1024, "value size in bytes")
	fs.IntVar(&c.conns, "conns", 50, "connections of each read phase (pipeline 1: one GET per round trip)")
	fs.IntVar(&c.loadConns, "load-conns", 16, "connections of the load")
	fs.IntVar(&c.pipeline, "pipeline", 32, "SETs per pipeline in the load")
	fs.DurationVar(&c.duration, "duration", dur, "length of each read phase")
	fs.StringVar(&c.blockCache, "block-cache", "256mb", "the server's --block-cache")
	fs.DurationVar(&c.settleMax, "settle-max", settle, "longest wait for compaction to settle after the load")
	fs.DurationVar(&c.gcWait, "gc-wait", gcWait, "longest wait after the reads for GC to delete the SSTs compaction replaced, before measuring the bucket (GC's MinAge is 10 min)")
	fs.StringVar(&c.serverEnv, "server-env", "", "environment for the server, space-separated NAME=value (e.g. GOMEMLIMIT=800MiB)")
	fs.StringVar(&c.pprofDir, "pprof", "", "directory to save the server's heap profiles (after load, after reads) and a CPU profile of the hot GET phase (empty: none)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var err error
	if c.cacheBytes, err = parseBytes(c.blockCache); err != nil {
		return nil, fmt.Errorf("-block-cache: %v", err)
	}
	if c.keys < 1000 || c.value < 1 || c.conns < 1 || c.loadConns < 1 || c.pipeline < 1 {
		return nil, fmt.Errorf("need -keys >= 1000 and positive -value, -conns, -load-conns, -pipeline")
	}
	return c, nil
}

// parseBytes reads a size as the server does: a number with an optional
// kb, mb or gb suffix (powers of 1024).
func parseBytes(s string) (int64, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for suffix, m := range map[string]int64{"kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30} {
		if v, ok := strings.CutSuffix(s, suffix); ok {
			s, mult = v, m
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}

// keyLen is the length of every key, k:%010d.
const keyLen = 12

func ltmKey(i uint64) string { return fmt.Sprintf("k:%010d", i) }

// logicalBytes is what the client stored: keys and values, nothing else.
func (c *ltmConfig) logicalBytes() int64 { return int64(c.keys) * int64(keyLen+c.value) }

func runLTM(ctx context.Context, env *Env, args []string) error {
	cfg, err := parseLTMFlags(env, args)
	if err != nil {
		return err
	}
	mport, err := freePort()
	if err != nil {
		return err
	}
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", mport)
	srv, err := StartStrata(ctx, strings.Fields(cfg.serverEnv), "--block-cache", cfg.blockCache, "--appendfsync", "everysec",
		"--metrics-addr", metricsAddr)
	if err != nil {
		return err
	}
	defer srv.Stop()
	run := &ltmRun{cfg: cfg, env: env, srv: srv, metricsAddr: metricsAddr}
	rss := startRSSSampler(srv, &run.loaded, cfg.keyValue())
	defer rss.stop()
	run.rss = rss

	if err := run.load(ctx); err != nil {
		return err
	}
	run.profileHeap("load")
	if err := run.settle(ctx); err != nil {
		return err
	}
	if err := run.reads(ctx); err != nil {
		return err
	}
	run.profileHeap("reads")
	if err := run.waitGC(ctx); err != nil {
		return err
	}
	rss.stop()
	if err := run.measureSpace(); err != nil {
		return err
	}
	return run.report()
}

func (c *ltmConfig) keyValue() int64 { return int64(keyLen + c.value) }
