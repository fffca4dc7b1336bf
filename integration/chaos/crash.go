package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"
)

func init() {
	register(campaign{
		name:  "crash",
		about: "SIGKILL the server under write load, restart it, check every acknowledged write",
		run:   runCrash,
	})
}

// crashDefaults are the cycles per store: the full run, and -short's.
var crashDefaults = map[string][2]int{"local": {50, 5}, "minio": {20, 2}}

// crashRun is one store's crash campaign: a server, its writers and their
// model, and the figures so far.
type crashRun struct {
	store    crashStore
	port     int
	args     []string
	writers  []*crashWriter
	counters [crashCounters]int64 // the shared counters at the last check
	rng      *rand.Rand
	log      io.Writer
	stats    *crashStats
}

// crashStats are the campaign's figures, over every store.
type crashStats struct {
	cycles, kills, checked, lost, inflight, applied int
	restarts                                        int
	restartTime                                     time.Duration
}

func runCrash(ctx context.Context, args []string, log io.Writer) (Result, error) {
	fs, short := newFlags("crash", log)
	which := fs.String("store", "both", "local, minio or both")
	cycles := fs.Int("cycles", 0, "kill cycles per store (default 50 local and 20 MinIO; -short 5 and 2)")
	clients := fs.Int("clients", 16, "concurrent go-redis clients writing")
	seedFlag := fs.Uint64("seed", 0, "random seed (0: from the clock; logged)")
	if err := fs.Parse(args); err != nil {
		return Result{}, err
	}
	buckets, stores, err := newCrashBuckets(*which, log)
	if err != nil {
		return Result{}, err
	}
	defer buckets.Close()
	seed, rng := crashSeed(*seedFlag)
	fmt.Fprintf(log, "crash: seed %d, %d clients, appendfsync always\n", seed, *clients)
	var res Result
	stats := &crashStats{}
	for _, name := range stores {
		n := *cycles
		if n == 0 {
			n = crashDefaults[name][0]
			if *short {
				n = crashDefaults[name][1]
			}
		}
		r := &crashRun{store: buckets.store(name, "crash"), rng: rng, log: log, stats: stats}
		for i := range *clients {
			r.writers = append(r.writers, newCrashWriter(i, rand.New(rand.NewPCG(rng.Uint64(), uint64(i)))))
		}
		if err := r.run(ctx, n, &res); err != nil {
			return res, err
		}
	}
	stats.figures(&res)
	return res, nil
}

func (s *crashStats) figures(res *Result) {
	res.Figure("cycles", s.cycles)
	res.Figure("writes_checked", s.checked)
	res.Figure("lost", s.lost)
	res.Figure("kills", s.kills)
	res.Figure("in_flight", fmt.Sprintf("%d(%d_applied)", s.inflight, s.applied))
	mean := time.Duration(0)
	if s.restarts > 0 {
		mean = s.restartTime / time.Duration(s.restarts)
	}
	res.Figure("restart_ms_mean", mean.Milliseconds())
}

// run starts the server and runs n kill cycles, then a graceful restart and
// a check of everything written on this store. A server that does not come
// back is a failed check that ends this store's run.
func (r *crashRun) run(ctx context.Context, n int, res *Result) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	r.port = port
	// appendfsync always is the default; named here because the campaign's
	// premise (acknowledged = durable) depends on it. Small memtables make
	// the server flush L0 SSTs and write manifests between kills, so the
	// kills land in flushes too, not only in WAL PUTs.
	r.args = append([]string{"--appendfsync", "always", "--memtable-size", "256kb"}, r.store.args...)
	srv, err := startServer(ctx, port, r.store.env, r.args...)
	if err != nil {
		return fmt.Errorf("%s: %w", r.store.name, err)
	}
	for c := 1; c <= n && ctx.Err() == nil; c++ {
		if srv = r.cycle(ctx, srv, c, n, res); srv == nil {
			return ctx.Err()
		}
	}
	return r.final(ctx, srv, n, res)
}

// cycle runs the writers against srv, kills it at a random moment,
// restarts it and checks. It returns the restarted server, or nil when it
// did not come back (recorded as a failure).
func (r *crashRun) cycle(ctx context.Context, srv *server, c, n int, res *Result) *server {
	delay := 300*time.Millisecond + time.Duration(r.rng.Int64N(int64(2700*time.Millisecond)))
	loadCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		crashLoad(loadCtx, srv.Addr, r.writers, c)
	}()
	sleepCtx(ctx, delay)
	srv.Kill()
	r.stats.kills++
	<-done
	cancel()
	acked := 0
	for _, w := range r.writers {
		acked += w.acked
	}
	start := time.Now()
	srv, err := startServer(ctx, r.port, r.store.env, r.args...)
	if err != nil {
		res.Check(false, "crash %s cycle %d: the server did not restart after SIGKILL: %v", r.store.name, c, err)
		return nil
	}
	took := time.Since(start)
	r.stats.restarts++
	r.stats.restartTime += took
	r.stats.cycles++
	// This cycle's collections and the previous one's (which have now
	// survived two kills), plus every string and counter; the final check
	// reads every cycle's.
	checkStart := time.Now()
	k := r.check(ctx, srv, []int{c - 1, c})
	fmt.Fprintf(r.log, "crash %s cycle %d/%d: killed after %v with %d writes acknowledged, %d in flight (%d applied); restart %v; %s in %v\n",
		r.store.name, c, n, delay.Round(time.Millisecond), acked, k.inflight, k.applied, took.Round(time.Millisecond),
		k.verdict(), time.Since(checkStart).Round(time.Millisecond))
	res.Check(k.failures == 0 && acked > 0, "crash %s cycle %d (killed after %v, %d acknowledged): %s",
		r.store.name, c, delay.Round(time.Millisecond), acked, k.verdict())
	return srv
}

// crashLoad runs every writer on its own connection until the server dies.
func crashLoad(ctx context.Context, addr string, writers []*crashWriter, cycle int) {
	done := make(chan struct{}, len(writers))
	for _, w := range writers {
		go func() {
			defer func() { done <- struct{}{} }()
			rdb := crashClient(addr)
			defer rdb.Close()
			w.run(ctx, rdb, cycle)
		}()
	}
	for range writers {
		<-done
	}
}

// check runs checkCrash for cycles and adds its figures; a read error is
// a failure of its own.
func (r *crashRun) check(ctx context.Context, srv *server, cycles []int) *crashCheck {
	rdb := crashClient(srv.Addr)
	defer rdb.Close()
	k, err := checkCrash(ctx, rdb, r.writers, &r.counters, cycles)
	if err != nil {
		k = &crashCheck{}
		k.fail("reading back: %v", err)
	}
	for _, w := range r.writers {
		if w.replyErr != nil {
			k.fail("writer %d got an error reply: %v", w.id, w.replyErr)
			w.replyErr = nil
		}
	}
	r.stats.checked += k.checked
	r.stats.lost += k.lost
	r.stats.inflight += k.inflight
	r.stats.applied += k.applied
	return k
}

// final stops the server gracefully, restarts it, and reads back every
// cycle's writes.
func (r *crashRun) final(ctx context.Context, srv *server, n int, res *Result) error {
	if err := srv.Stop(60 * time.Second); err != nil {
		res.Check(false, "crash %s: graceful stop: %v\n%s", r.store.name, err, crashTail(srv.Output()))
	}
	srv, err := startServer(ctx, r.port, r.store.env, r.args...)
	if err != nil {
		res.Check(false, "crash %s: restart after the last cycle: %v", r.store.name, err)
		return nil
	}
	defer srv.Stop(60 * time.Second)
	all := make([]int, n+1)
	for i := range all {
		all[i] = i
	}
	k := r.check(ctx, srv, all)
	fmt.Fprintf(r.log, "crash %s final: graceful restart, every cycle read back: %s\n", r.store.name, k.verdict())
	res.Check(k.failures == 0, "crash %s final check of all %d cycles: %s", r.store.name, n, k.verdict())
	return nil
}

func (k *crashCheck) verdict() string {
	if k.failures == 0 {
		return "check ok"
	}
	return fmt.Sprintf("%d problems, %d acknowledged writes lost:\n  %s", k.failures, k.lost, strings.Join(k.problems, "\n  "))
}

// crashTail is the last lines of a server's output, for a failure message.
func crashTail(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-15):], "\n")
}
