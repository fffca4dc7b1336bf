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
		name:  "fence",
		about: "start a second server on a loaded bucket: the first must stop acknowledging and lose nothing",
		run:   runFence,
	})
}

// fencedText is the reply a fenced server gives a write (resp/errors.go).
const fencedText = "ERR strata: fenced: another server took over this bucket; this one no longer accepts writes"

// fenceBound is how long after the new server is ready every write on the
// old one must be failing. Under load the old server's next WAL PUT meets
// the new one's fence at once; the manifest poll (1s) is the slow path.
const fenceBound = 10 * time.Second

// fenceRun is one store's fencing campaign: two ports that take turns
// taking over the bucket.
type fenceRun struct {
	store crashStore
	ports [2]int
	args  []string
	rng   *rand.Rand
	log   io.Writer
	stats *fenceStats
	loads []*fenceLoad // every load so far, for the final check
}

// fenceStats are the campaign's figures, over every store.
type fenceStats struct {
	rounds, ackedByOld, checked, lost, fenced, other int
	afterNew                                         int // old acknowledgements received after the new server's first
	maxFence                                         time.Duration
}

func runFence(ctx context.Context, args []string, log io.Writer) (Result, error) {
	fs, short := newFlags("fence", log)
	which := fs.String("store", "both", "local, minio or both")
	rounds := fs.Int("rounds", 0, "takeovers per store (default 10; -short 2)")
	seedFlag := fs.Uint64("seed", 0, "random seed (0: from the clock; logged)")
	if err := fs.Parse(args); err != nil {
		return Result{}, err
	}
	n := *rounds
	if n == 0 {
		n = 10
		if *short {
			n = 2
		}
	}
	buckets, stores, err := newCrashBuckets(*which, log)
	if err != nil {
		return Result{}, err
	}
	defer buckets.Close()
	seed, rng := crashSeed(*seedFlag)
	fmt.Fprintf(log, "fence: seed %d, %d writers per server\n", seed, fenceWriters)
	var res Result
	stats := &fenceStats{}
	for _, name := range stores {
		f := &fenceRun{store: buckets.store(name, "fence"), rng: rng, log: log, stats: stats}
		f.args = append([]string{"--appendfsync", "always"}, f.store.args...)
		for i := range f.ports {
			if f.ports[i], err = freePort(); err != nil {
				return res, err
			}
		}
		if err := f.run(ctx, n, &res); err != nil {
			return res, err
		}
	}
	res.Figure("rounds", stats.rounds)
	res.Figure("writes_acked_by_old", stats.ackedByOld)
	res.Figure("writes_checked", stats.checked)
	res.Figure("lost", stats.lost)
	res.Figure("fenced_errors", stats.fenced)
	res.Figure("other_errors", stats.other)
	res.Figure("old_acks_after_new_ack", stats.afterNew)
	res.Figure("time_to_fence_ms", stats.maxFence.Milliseconds())
	return res, nil
}

// run starts the first server under load, hands the bucket over n times,
// then restarts the last server and reads back every load's writes.
func (f *fenceRun) run(ctx context.Context, n int, res *Result) error {
	srv, err := startServer(ctx, f.ports[0], f.store.env, f.args...)
	if err != nil {
		return fmt.Errorf("%s: %w", f.store.name, err)
	}
	load := startFenceLoad(ctx, srv.Addr, 0)
	f.loads = append(f.loads, load)
	for r := 1; r <= n && ctx.Err() == nil; r++ {
		if srv, load = f.round(ctx, r, srv, load, res); srv == nil {
			return nil
		}
		f.loads = append(f.loads, load)
	}
	load.stop()
	if err := srv.Stop(60 * time.Second); err != nil {
		res.Check(false, "fence %s: graceful stop of the last server: %v\n%s", f.store.name, err, crashTail(srv.Output()))
	}
	srv, err = startServer(ctx, srv.Port, f.store.env, f.args...)
	if err != nil {
		res.Check(false, "fence %s: restart after the last round: %v", f.store.name, err)
		return nil
	}
	defer srv.Stop(60 * time.Second)
	rdb := crashClient(srv.Addr)
	defer rdb.Close()
	checked, lost := 0, 0
	var problems []string
	for _, l := range f.loads {
		c, n, p, err := l.verify(ctx, rdb)
		if err != nil {
			p = append(p, err.Error())
		}
		checked, lost, problems = checked+c, lost+n, append(problems, p...)
	}
	// The rounds read each old server's writes through its successor; the
	// last server's own writes are first read back here.
	f.stats.checked += f.loads[len(f.loads)-1].tally().acked
	fmt.Fprintf(f.log, "fence %s final: restarted, %d acknowledged writes of %d servers read back, %d lost\n",
		f.store.name, checked, len(f.loads), lost)
	res.Check(len(problems) == 0, "fence %s final: %d of %d acknowledged writes lost after a restart:\n  %s",
		f.store.name, lost, checked, strings.Join(problems, "\n  "))
	return nil
}

// round lets old run under load for a moment, starts a new server on the
// other port, and checks the handover. It returns the new server and its
// load, or nil when the new server did not start (a failure).
func (f *fenceRun) round(ctx context.Context, r int, old *server, oldLoad *fenceLoad, res *Result) (*server, *fenceLoad) {
	sleepCtx(ctx, 500*time.Millisecond+time.Duration(f.rng.Int64N(int64(time.Second))))
	name := fmt.Sprintf("fence %s round %d (:%d takes over from :%d)", f.store.name, r, f.ports[r%2], old.Port)
	launched := time.Now()
	nw, err := startServer(ctx, f.ports[r%2], f.store.env, f.args...)
	if err != nil {
		res.Check(false, "%s: the new server did not start: %v", name, err)
		oldLoad.stop()
		old.Kill()
		return nil, nil
	}
	ready := time.Now()
	newLoad := startFenceLoad(ctx, nw.Addr, r)
	lastFirstErr, fenced := oldLoad.waitFenced(ctx, fenceBound)
	// Keep writing on the old server a little longer: every write must fail.
	sleepCtx(ctx, 300*time.Millisecond)
	oldLoad.stop()
	probe := fenceProbe(ctx, old.Addr)
	stopErr := old.Stop(30 * time.Second)

	t := oldLoad.tally()
	newFirst := newLoad.tally().firstAck
	afterNew := 0
	if !newFirst.IsZero() {
		afterNew = oldLoad.acksAfter(newFirst)
	}
	// The old server is usually fenced before the new one is ready (the
	// new one writes its fence early in its open), so the figure is timed
	// from the new server's launch; the bound is checked from readiness.
	toFence := lastFirstErr.Sub(launched)
	f.stats.rounds++
	f.stats.ackedByOld += t.acked
	f.stats.fenced += t.fenced
	f.stats.other += t.other
	f.stats.afterNew += afterNew
	if fenced {
		f.stats.maxFence = max(f.stats.maxFence, toFence)
	}
	fmt.Fprintf(f.log, "%s: open took %v (%s); old server: %d acked, last ack %v after the new one was ready, "+
		"%d acked after the new server's first ack; all its writers failing %v after launch; errors: %d fenced, %d other %q; probe: %v; stop: %v\n",
		name, ready.Sub(launched).Round(time.Millisecond), fenceReplayed(nw.Output()), t.acked, t.lastAck.Sub(ready).Round(time.Millisecond),
		afterNew, toFence.Round(time.Millisecond), t.fenced, t.other, t.otherTexts, probe, stopErr)

	res.Check(fenced, "%s: some writer on the old server was still acknowledged %v after the new server was ready", name, fenceBound)
	res.Check(t.lateAcks == 0, "%s: the old server acknowledged %d writes on connections that had already been refused", name, t.lateAcks)
	res.Check(probe != nil && strings.Contains(probe.Error(), fencedText),
		"%s: a write to the old server after the takeover got %v, want %q", name, probe, fencedText)
	f.checkOld(ctx, name, nw, oldLoad, res)
	f.checkNew(ctx, name, nw, newLoad, res)
	return nw, newLoad
}

// checkOld reads the old server's acknowledged writes through the new one.
// An acknowledgement the old server gave after the takeover for a write the
// new server cannot see shows up here as lost.
func (f *fenceRun) checkOld(ctx context.Context, name string, nw *server, oldLoad *fenceLoad, res *Result) {
	rdb := crashClient(nw.Addr)
	defer rdb.Close()
	checked, lost, problems, err := oldLoad.verify(ctx, rdb)
	if err != nil {
		problems = append(problems, err.Error())
	}
	f.stats.checked += checked
	f.stats.lost += lost
	res.Check(len(problems) == 0, "%s: %d of %d writes acknowledged by the old server are not readable through the new one:\n  %s",
		name, lost, checked, strings.Join(problems, "\n  "))
}

// checkNew checks that the new server serves writes (its own load's, with
// no error) and reads (a fresh key written and read back).
func (f *fenceRun) checkNew(ctx context.Context, name string, nw *server, newLoad *fenceLoad, res *Result) {
	t := newLoad.tally()
	rdb := crashClient(nw.Addr)
	defer rdb.Close()
	key := fmt.Sprintf("fence:check:%d", nw.Port)
	val := fmt.Sprint(time.Now().UnixNano())
	err := rdb.Set(ctx, key, val, 0).Err()
	got := ""
	if err == nil {
		got, err = rdb.Get(ctx, key).Result()
	}
	res.Check(t.acked > 0 && t.fenced+t.other == 0 && err == nil && got == val,
		"%s: the new server does not serve normally: its load acked %d writes with %d errors %q; SET/GET: %q, %v",
		name, t.acked, t.fenced+t.other, t.otherTexts, got, err)
}

// fenceReplayed is how many WAL objects the server replayed when it opened,
// from its "lsm opened" log line: a takeover's unavailability grows with it.
func fenceReplayed(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, "lsm opened") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "replayed_wal_objects=") {
				return strings.Replace(f, "=", " ", 1)
			}
		}
	}
	return "replayed_wal_objects unknown"
}
