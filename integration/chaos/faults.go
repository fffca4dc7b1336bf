package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

func init() {
	register(campaign{
		name:  "faults",
		about: "object-store faults (errors, slow calls, lost responses) and a MinIO outage under write load",
		run:   runFaults,
	})
}

// faultsRun is one phase of the faults campaign: a server, the crash
// campaign's writers and model (crash_writer.go), and the figures so far.
type faultsRun struct {
	name     string
	store    crashStore
	port     int
	args     []string
	writers  []*crashWriter
	counters [crashCounters]int64
	log      io.Writer
	cycles   int
	acked    int
	errors   int // error replies to writes: retries exhausted, or the store down
	errText  map[string]int
	checked  int
	lost     int
}

func runFaults(ctx context.Context, args []string, log io.Writer) (Result, error) {
	fs, short := newFlags("faults", log)
	duration := fs.Duration("duration", 0, "how long the faulty store is under load (default 5m; -short 20s)")
	cycle := fs.Duration("cycle", 10*time.Second, "load between two checks of every acknowledged write")
	spec := fs.String("faults", "error=0.05,slow=0.01:2s,after-write=0.3", "the faults ($STRATA_FAULTS, blob.ParseFaultSpec)")
	outage := fs.Duration("outage", 0, "how long MinIO is stopped under load (default 30s; -short 5s; negative: skip)")
	clients := fs.Int("clients", 16, "concurrent go-redis clients writing")
	seedFlag := fs.Uint64("seed", 0, "random seed (0: from the clock; logged)")
	if err := fs.Parse(args); err != nil {
		return Result{}, err
	}
	*duration = pick(*duration, 5*time.Minute, 20*time.Second, *short)
	*outage = pick(*outage, 30*time.Second, 5*time.Second, *short)
	which := "minio"
	if *outage < 0 {
		which = "local"
	}
	buckets, stores, err := newCrashBuckets(which, log)
	if err != nil {
		return Result{}, err
	}
	defer buckets.Close()
	seed, rng := crashSeed(*seedFlag)
	fmt.Fprintf(log, "faults: seed %d, %d clients, STRATA_FAULTS=%s for %v, MinIO outage %v\n", seed, *clients, *spec, *duration, *outage)
	var res Result
	newRun := func(name string, st crashStore, args ...string) *faultsRun {
		r := &faultsRun{name: name, store: st, log: log, errText: map[string]int{}, args: args}
		for i := range *clients {
			r.writers = append(r.writers, newCrashWriter(i, rand.New(rand.NewPCG(rng.Uint64(), uint64(i)))))
		}
		return r
	}
	injected := newRun("injected", buckets.store("local", "faults"))
	if err := injected.runInjected(ctx, fmt.Sprintf("%s,seed=%d", *spec, seed), *duration, *cycle, &res); err != nil {
		return res, err
	}
	injected.figures(&res, "")
	if len(stores) == 1 && stores[0] == "minio" {
		outageRun := newRun("outage", buckets.store("minio", "faults"))
		if err := outageRun.runOutage(ctx, buckets, *outage, *cycle, &res); err != nil {
			return res, err
		}
		outageRun.figures(&res, "outage_")
	}
	return res, nil
}

// pick is v when set, else the full or short default.
func pick(v, full, short time.Duration, isShort bool) time.Duration {
	switch {
	case v != 0:
		return v
	case isShort:
		return short
	}
	return full
}

func (r *faultsRun) figures(res *Result, prefix string) {
	res.Figure(prefix+"cycles", r.cycles)
	res.Figure(prefix+"writes_acked", r.acked)
	res.Figure(prefix+"error_replies", r.errors)
	res.Figure(prefix+"writes_checked", r.checked)
	res.Figure(prefix+"lost", r.lost)
}

// runInjected runs the server with $STRATA_FAULTS for d, checking every
// acknowledged write after each cycle through the faulty server itself,
// then SIGKILLs it, restarts it without faults and checks everything.
func (r *faultsRun) runInjected(ctx context.Context, spec string, d, cycle time.Duration, res *Result) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	r.port = port
	r.args = append([]string{"--appendfsync", "always", "--memtable-size", "1mb"}, r.store.args...)
	env := append(append([]string(nil), r.store.env...), "STRATA_FAULTS="+spec)
	srv, err := startServer(ctx, port, env, r.args...)
	if err != nil {
		return fmt.Errorf("faults: %w", err)
	}
	ping := startPinger(srv.Addr)
	end := time.Now().Add(d)
	for c := 1; time.Now().Before(end) && ctx.Err() == nil; c++ {
		r.load(ctx, srv, c, min(cycle, time.Until(end)))
		k := r.check(ctx, srv, []int{c - 1, c})
		res.Check(k.failures == 0, "faults %s cycle %d: %s", r.name, c, k.verdict())
		fmt.Fprintf(r.log, "faults %s cycle %d: %d acknowledged so far, %d error replies; %s\n", r.name, c, r.acked, r.errors, k.verdict())
	}
	p := ping.stop()
	info := infoFields(ctx, srv.Addr)
	res.Check(p.failed == 0 && p.max < time.Second, "faults %s: the server stopped answering PING: %d failed, slowest %v",
		r.name, p.failed, p.max)
	res.Figure("ping_max_ms", p.max.Milliseconds())
	res.Figure("wal_put_retries", info["wal_put_retries"])
	res.Figure("wal_put_hedges", info["wal_put_hedges"])
	res.Figure("objstore_upload_failures", info["objstore_upload_failures"])
	select {
	case <-srv.Exited():
		res.Check(false, "faults %s: the server exited under faults:\n%s", r.name, crashTail(srv.Output()))
	default:
		srv.Kill()
	}
	// Without faults, after a SIGKILL: what was acknowledged is durable.
	srv, err = startServer(ctx, port, r.store.env, r.args...)
	if err != nil {
		res.Check(false, "faults %s: restart without faults: %v", r.name, err)
		return nil
	}
	defer srv.Stop(60 * time.Second)
	k := r.check(ctx, srv, r.allCycles())
	res.Check(k.failures == 0, "faults %s: after a SIGKILL and a restart without faults, every cycle read back: %s", r.name, k.verdict())
	fmt.Fprintf(r.log, "faults %s final: %s; error replies by text: %v\n", r.name, k.verdict(), r.errText)
	return nil
}

// runOutage runs the server on MinIO, stops MinIO for outage under load,
// starts it again and requires the same server process to take writes
// again, then checks every acknowledged write (after a restart too).
func (r *faultsRun) runOutage(ctx context.Context, b *crashBuckets, outage, cycle time.Duration, res *Result) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	r.port = port
	r.args = append([]string{"--appendfsync", "always", "--memtable-size", "1mb"}, r.store.args...)
	srv, err := startServer(ctx, port, r.store.env, r.args...)
	if err != nil {
		return fmt.Errorf("faults outage: %w", err)
	}
	r.load(ctx, srv, 1, cycle/2)
	k := r.check(ctx, srv, []int{1})
	res.Check(k.failures == 0, "faults outage: before the outage: %s", k.verdict())
	ping := startPinger(srv.Addr)
	loadDone := make(chan struct{})
	go func() { defer close(loadDone); r.load(ctx, srv, 2, outage+cycle) }()
	sleepCtx(ctx, cycle/4)
	if err := b.minio.Halt(); err != nil {
		return err
	}
	fmt.Fprintf(r.log, "faults outage: MinIO stopped for %v under load\n", outage)
	sleepCtx(ctx, outage)
	if err := b.minio.Resume(); err != nil {
		return fmt.Errorf("restarting MinIO: %w", err)
	}
	recovered := probeWrites(ctx, srv.Addr, 2*time.Minute)
	<-loadDone
	p := ping.stop()
	res.Check(recovered >= 0, "faults outage: no write succeeded within 2m of MinIO coming back (server not restarted)")
	res.Figure("outage_recovered_ms", recovered.Milliseconds())
	res.Check(p.failed == 0 && p.max < time.Second, "faults outage: the server stopped answering PING during the outage: %d failed, slowest %v",
		p.failed, p.max)
	res.Figure("outage_ping_max_ms", p.max.Milliseconds())
	select {
	case <-srv.Exited():
		res.Check(false, "faults outage: the server exited:\n%s", crashTail(srv.Output()))
		return nil
	default:
	}
	fmt.Fprintf(r.log, "faults outage: MinIO back; first write acknowledged %v later; %d error replies during the outage %v\n",
		recovered.Round(time.Millisecond), r.errors, r.errText)
	k = r.check(ctx, srv, []int{1, 2})
	res.Check(k.failures == 0, "faults outage: the same server process, after the outage: %s", k.verdict())
	r.load(ctx, srv, 3, cycle/2)
	k = r.check(ctx, srv, r.allCycles())
	res.Check(k.failures == 0, "faults outage: the same server process, writing after the outage: %s", k.verdict())
	if err := srv.Stop(60 * time.Second); err != nil {
		res.Check(false, "faults outage: graceful stop after the outage: %v", err)
	}
	srv, err = startServer(ctx, port, r.store.env, r.args...)
	if err != nil {
		res.Check(false, "faults outage: restart: %v", err)
		return nil
	}
	defer func() { _ = srv.Stop(60 * time.Second) }()
	k = r.check(ctx, srv, r.allCycles())
	res.Check(k.failures == 0, "faults outage: after a restart, every cycle read back: %s", k.verdict())
	return nil
}

func (r *faultsRun) allCycles() []int {
	all := make([]int, r.cycles+1)
	for i := range all {
		all[i] = i
	}
	return all
}

// load runs the writers for d. A writer that gets an error reply stops for
// the rest of the cycle, its write in flight: the next check settles it, so
// a check must come between two loads.
func (r *faultsRun) load(ctx context.Context, srv *server, c int, d time.Duration) {
	loadCtx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	before := 0
	for _, w := range r.writers {
		before += w.acked
	}
	crashLoad(loadCtx, srv.Addr, r.writers, c)
	r.cycles = max(r.cycles, c)
	r.acked -= before
	for _, w := range r.writers {
		r.acked += w.acked
		if w.replyErr != nil {
			r.errors++
			r.errText[errorKind(w.replyErr)]++
			w.replyErr = nil
		}
	}
}

// errorKind is an error reply's first words, to tally them.
func errorKind(err error) string {
	var rerr redis.Error
	if errors.As(err, &rerr) {
		err = rerr
	}
	f := strings.Fields(err.Error())
	return strings.Join(f[:min(len(f), 4)], " ")
}

// check runs checkCrash for cycles through a new client. A read that fails
// (a timeout while the faulty store is slow) is tried again, up to three
// times: a check that never completes leaves the in-flight writes
// unsettled, and every later check would report them.
func (r *faultsRun) check(ctx context.Context, srv *server, cycles []int) *crashCheck {
	rdb := crashClient(srv.Addr)
	defer rdb.Close()
	var k *crashCheck
	var err error
	for try := 1; try <= 3; try++ {
		if k, err = checkCrash(ctx, rdb, r.writers, &r.counters, cycles); err == nil {
			break
		}
		fmt.Fprintf(r.log, "faults %s: reading back failed (try %d of 3): %v\n", r.name, try, err)
	}
	if err != nil {
		k = &crashCheck{}
		k.fail("reading back, three times: %v", err)
	}
	r.checked += k.checked
	r.lost += k.lost
	return k
}

// pinger PINGs a server every 100ms on its own connection; PING never
// touches the bucket, so a slow or failed one means the server itself
// stopped answering.
type pinger struct {
	stopc  chan struct{}
	done   chan struct{}
	max    time.Duration
	failed int
}

func startPinger(addr string) *pinger {
	p := &pinger{stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		rdb := crashClient(addr)
		defer rdb.Close()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stopc:
				return
			case <-t.C:
			}
			start := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := rdb.Ping(ctx).Err()
			cancel()
			p.max = max(p.max, time.Since(start))
			if err != nil {
				p.failed++
			}
		}
	}()
	return p
}

func (p *pinger) stop() *pinger {
	close(p.stopc)
	<-p.done
	return p
}

// probeWrites SETs a probe key until one is acknowledged, and returns how
// long that took, or -1 after timeout.
func probeWrites(ctx context.Context, addr string, timeout time.Duration) time.Duration {
	rdb := crashClient(addr)
	defer rdb.Close()
	start := time.Now()
	for i := 0; time.Since(start) < timeout && ctx.Err() == nil; i++ {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := rdb.Set(pctx, "faults:probe", i, 0).Err()
		cancel()
		if err == nil {
			return time.Since(start)
		}
		sleepCtx(ctx, 100*time.Millisecond)
	}
	return -1
}

// infoFields returns INFO strata's fields (the engine, compactor and object-store
// sections; not everything, whose keyspace section scans every key), or an
// empty map.
func infoFields(ctx context.Context, addr string) map[string]string {
	rdb := crashClient(addr)
	defer rdb.Close()
	out := map[string]string{}
	txt, err := rdb.Info(ctx, "strata").Result()
	if err != nil {
		return out
	}
	for _, line := range strings.Split(txt, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = v
		}
	}
	return out
}
