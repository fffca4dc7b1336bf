package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stratakv/strata/resp/resptest"
)

// The bad-input campaign: random and mutated RESP frames from several
// connections against one strata server, while a control connection
// checks that the server still answers and still holds a key written at
// the start, and its memory stays bounded; then a differential check of
// error replies against redis-server 7.

func init() {
	register(campaign{
		name:  "fuzz",
		about: "bad input: random and mutated RESP frames; error replies compared with redis-server",
		run:   runFuzz,
	})
}

// fuzzConfig is the campaign's flags.
type fuzzConfig struct {
	duration  time.Duration
	seed      uint64
	conns     int
	rssLimit  int64 // bytes
	diffN     int
	probeGap  time.Duration
	maxListed int
}

func parseFuzzFlags(args []string, log io.Writer) (fuzzConfig, error) {
	fs, short := newFlags("fuzz", log)
	duration := fs.Duration("duration", 5*time.Minute, "how long the load runs (-short: 20s)")
	seed := fs.Uint64("seed", 0, "seed of every random choice; 0 picks one from the clock")
	conns := fs.Int("conns", 8, "fuzzing connections in parallel (-short: 4)")
	rssMB := fs.Int64("rss-limit-mb", 1024, "the server's resident memory must stay under this")
	diffN := fs.Int("diff", 20000, "commands and frames of the differential check against redis-server (-short: 2000)")
	if err := fs.Parse(args); err != nil {
		return fuzzConfig{}, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	cfg := fuzzConfig{duration: *duration, seed: *seed, conns: *conns, rssLimit: *rssMB << 20,
		diffN: *diffN, probeGap: 200 * time.Millisecond, maxListed: 40}
	if *short {
		// Explicit flags win over the short defaults.
		if !set["duration"] {
			cfg.duration = 20 * time.Second
		}
		if !set["conns"] {
			cfg.conns = 4
		}
		if !set["diff"] {
			cfg.diffN = 2000
		}
	}
	if cfg.seed == 0 {
		cfg.seed = uint64(time.Now().UnixNano())
	}
	return cfg, nil
}

func runFuzz(ctx context.Context, args []string, log io.Writer) (Result, error) {
	var res Result
	cfg, err := parseFuzzFlags(args, log)
	if err != nil {
		return res, err
	}
	dir, err := os.MkdirTemp("", "strata-fuzz-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	port, err := freePort()
	if err != nil {
		return res, err
	}
	srv, err := startServer(ctx, port, nil, "--dir", dir+"/data")
	if err != nil {
		return res, err
	}
	defer srv.Kill()
	fmt.Fprintf(log, "fuzz: seed %d (rerun with -seed %d), load %v on %d connections, server %s\n",
		cfg.seed, cfg.seed, cfg.duration, cfg.conns, srv.Addr)
	res.Figure("seed", cfg.seed)
	cmds, err := fuzzCommands(srv.Addr)
	if err != nil {
		return res, err
	}
	ctl, err := newFuzzControl(srv, cfg.seed)
	if err != nil {
		return res, err
	}
	defer ctl.close()

	var load fuzzLoadStats
	lctx, cancel := context.WithTimeout(ctx, cfg.duration)
	var wg sync.WaitGroup
	wg.Go(func() { ctl.watch(lctx, cfg.probeGap, cancel) })
	runFuzzLoad(lctx, srv.Addr, cfg.seed, cfg.conns, cmds, &load)
	cancel()
	wg.Wait()
	ctl.probe() // and once more after the load
	ctl.report(&res, cfg)

	diff, err := fuzzDiffPart(ctx, srv.Addr, dir, cfg, cmds, log)
	if err != nil {
		return res, err
	}
	if diff != nil {
		diff.report(&res, cfg.maxListed)
	}
	// The differential check's bad frames must have left it serving too;
	// its FLUSHALLs took the sentinel, so PING only.
	ctl.key = ""
	perr := ctl.probe()
	res.Check(perr == nil, "control probe after the differential check: %v", perr)
	res.Check(!strings.Contains(srv.Output(), "panic:"), "the server logged a panic:\n%s", clip(srv.Output(), 4000))
	res.Check(srv.Stop(30*time.Second) == nil, "the server did not exit cleanly on SIGTERM after the campaign")

	res.Figure("frames_sent", load.frames.Load())
	res.Figure("commands_sent", load.commands.Load())
	res.Figure("protocol_errors", load.protocolErrors.Load())
	res.Figure("reconnects", load.reconnects.Load())
	if diff != nil {
		res.Figure("diff_commands", diff.commands+diff.frames)
		res.Figure("diff_mismatches", diffMismatches(diff))
	}
	res.Figure("peak_rss_mb", ctl.peakRSS>>20)
	return res, nil
}

// fuzzDiffPart starts redis-server and runs the differential check; nil
// stats when redis-server is missing outside CI.
func fuzzDiffPart(ctx context.Context, strataAddr, dir string, cfg fuzzConfig, cmds []fuzzCmd, log io.Writer) (*fuzzDiffStats, error) {
	rdir := dir + "/redis"
	if err := os.MkdirAll(rdir, 0o755); err != nil {
		return nil, err
	}
	redisAddr, stop, found, err := startFuzzRedis(ctx, rdir)
	switch {
	case err != nil:
		return nil, err
	case !found && requireRedis():
		return nil, fmt.Errorf("redis-server is not installed (CI=true)")
	case !found:
		fmt.Fprintln(log, "fuzz: redis-server is not installed; skipping the differential check")
		return nil, nil
	}
	defer stop()
	return runFuzzDiff(strataAddr, redisAddr, cfg.seed, cfg.diffN, cmds)
}

func diffMismatches(d *fuzzDiffStats) int {
	n := 0
	for _, k := range d.mismatches {
		n += k
	}
	return n
}

// report adds the differential check to res: each compared reply is a
// check; each mismatch a failure, listed once per distinct text.
func (d *fuzzDiffStats) report(res *Result, maxListed int) {
	n := diffMismatches(d)
	res.Passed += d.compared - n
	res.Failed += n
	for i, desc := range d.order {
		if i == maxListed {
			res.Failures = append(res.Failures, fmt.Sprintf("differential: ... and %d more distinct mismatches", len(d.order)-i))
			break
		}
		res.Failures = append(res.Failures, fmt.Sprintf("differential (x%d): %s", d.mismatches[desc], desc))
	}
}

// fuzzCommands lists the server's commands from COMMAND, sorted by name
// so that a seed gives the same sequence on every run.
func fuzzCommands(addr string) ([]fuzzCmd, error) {
	c, err := dialFuzzConn(addr)
	if err != nil {
		return nil, err
	}
	defer c.close()
	reply, err := c.do(10*time.Second, "COMMAND")
	if err != nil {
		return nil, fmt.Errorf("COMMAND: %w", err)
	}
	v, err := resptest.Parse(reply)
	if err != nil {
		return nil, fmt.Errorf("COMMAND: %w", err)
	}
	var cmds []fuzzCmd
	for _, e := range v.Elems {
		if len(e.Elems) < 2 {
			return nil, fmt.Errorf("COMMAND: short entry %q", e.Raw)
		}
		arity, err := strconv.Atoi(string(e.Elems[1].Str))
		if err != nil {
			return nil, fmt.Errorf("COMMAND: arity of %s: %w", e.Elems[0].Str, err)
		}
		cmds = append(cmds, fuzzCmd{name: strings.ToLower(string(e.Elems[0].Str)), arity: arity})
	}
	if len(cmds) < 50 {
		return nil, fmt.Errorf("COMMAND listed only %d commands", len(cmds))
	}
	slices.SortFunc(cmds, func(a, b fuzzCmd) int { return strings.Compare(a.name, b.name) })
	return cmds, nil
}
