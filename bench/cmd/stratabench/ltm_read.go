package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"
)

// readPhase is what one read phase measured.
type readPhase struct {
	name      string
	conns     int
	calls     uint64 // commands sent (GET, MGET or SCAN)
	keys      uint64 // keys read
	errors    uint64 // missing keys, wrong lengths, error replies
	firstErr  error
	elapsed   time.Duration
	lat       Histogram // per command
	hits      float64   // block cache hits during the phase
	misses    float64
	objGets   float64 // object-store GETs (ranged and whole) during the phase
	rssPeak   int64
	keysEach  int // keys per command
	isScan    bool
	scanCount int
	peer      bool // read from redis-server (peerHot), not strata
}

func (p *readPhase) callsPerSec() float64 { return float64(p.calls) / p.elapsed.Seconds() }
func (p *readPhase) keysPerSec() float64  { return float64(p.keys) / p.elapsed.Seconds() }

// hitRatio is the block cache's hit ratio during the phase.
func (p *readPhase) hitRatio() float64 {
	if p.hits+p.misses == 0 {
		return 0
	}
	return p.hits / (p.hits + p.misses)
}

// lowConns is the connections of the second hot-set phase.
const lowConns = 4

// mgetWidth is the number of consecutive keys one range read fetches.
const mgetWidth = 100

// hotKeys is the size of the hot set: consecutive keys taking a quarter of
// the block cache, so it fits whatever the blocks' overhead.
func (c *ltmConfig) hotKeys() uint64 {
	return uint64(max(1, min(int64(c.keys), c.cacheBytes/4/c.keyValue())))
}

// reads runs the read phases one after the other.
func (r *ltmRun) reads(ctx context.Context) error {
	n := uint64(r.cfg.keys)
	hot := r.cfg.hotKeys()
	// The hot set is read twice: with the phases' connections, and with
	// few, where queueing on two shared cores adds little to a GET's time.
	phases := []struct {
		name  string
		keys  Keys
		conns int
		hot   bool
	}{
		{"GET uniform", Keys{n: n}, r.cfg.conns, false},
		{"GET zipfian", Keys{n: n, zipfian: true}, r.cfg.conns, false},
		{fmt.Sprintf("GET hot %dk keys", hot/1000), Keys{n: hot}, r.cfg.conns, true},
		{fmt.Sprintf("GET hot %dk keys", hot/1000), Keys{n: hot}, lowConns, false},
	}
	for _, ph := range phases {
		if ph.hot {
			if err := r.warm(ctx, hot); err != nil {
				return err
			}
			r.saveProfileAsync("/debug/pprof/profile?seconds="+strconv.Itoa(int(r.cfg.duration.Seconds()/2)), "cpu-hot")
		}
		err := r.measure(ctx, ph.name, ph.conns, func(ctx context.Context, p *readPhase) error {
			return r.getPhase(ctx, r.srv.Addr, p, ph.keys)
		})
		if err != nil {
			return err
		}
	}
	if err := r.peerHot(ctx, hot); err != nil {
		return fmt.Errorf("redis-server peer: %w", err)
	}
	if err := r.measure(ctx, fmt.Sprintf("MGET %d consecutive", mgetWidth), r.cfg.conns, r.mgetPhase); err != nil {
		return err
	}
	return r.measure(ctx, "SCAN COUNT 1000", 1, r.scanPhase)
}

// measure runs one phase between two INFO snapshots and records it.
func (r *ltmRun) measure(ctx context.Context, name string, conns int, body func(context.Context, *readPhase) error) error {
	fmt.Fprintf(r.env.Log, "ltm: %s, %d conns\n", name, conns)
	label := fmt.Sprintf("%s/%d", name, conns)
	r.rss.setPhase(label)
	before, err := r.srv.Info()
	if err != nil {
		return err
	}
	p := &readPhase{name: name, conns: conns, keysEach: 1}
	if err := body(ctx, p); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	after, err := r.srv.Info()
	if err != nil {
		return err
	}
	d := func(k string) float64 { return infoFloat(after, k) - infoFloat(before, k) }
	p.hits, p.misses = d("block_cache_hits"), d("block_cache_misses")
	p.objGets = d("objstore_get_range") + d("objstore_get")
	p.rssPeak = r.rss.peak(label)
	r.phases = append(r.phases, *p)
	fmt.Fprintf(r.env.Log, "ltm:   %.0f cmd/s, %.0f keys/s, p50 %s p99 %s ms, hit %.1f%%, %d errors\n", p.callsPerSec(),
		p.keysPerSec(), ms(p.lat.Quantile(0.5)), ms(p.lat.Quantile(0.99)), 100*p.hitRatio(), p.errors)
	if p.errors > 0 {
		return fmt.Errorf("%s: %d bad reads, first: %v", name, p.errors, p.firstErr)
	}
	return nil
}

func infoFloat(info map[string]string, k string) float64 {
	v, _ := strconv.ParseFloat(info[k], 64)
	return v
}

// checkValue says what is wrong with a GET reply, if anything: every key
// was loaded, so a miss is an error.
func (r *ltmRun) checkValue(v any, key string) error {
	b, ok := v.([]byte)
	switch {
	case v == nil:
		return fmt.Errorf("GET %s: missing", key)
	case !ok:
		return fmt.Errorf("GET %s: reply %T", key, v)
	case len(b) != r.cfg.value:
		return fmt.Errorf("GET %s: %d bytes, want %d", key, len(b), r.cfg.value)
	}
	return nil
}

// verified wraps a read that checks its replies as a Drive op: the op
// makes the round trip itself, so it can look at the replies the driver
// would discard, and reports no commands left for the driver to read. The
// driver still times each op, so its histogram is the per-command latency
// and its count the commands sent.
func verified(errs *atomic.Uint64, first *atomic.Value, read func(c *Conn, w int, rng *rand.Rand) error) Op {
	return func(c *Conn, w int, _ uint64, rng *rand.Rand) int {
		if err := read(c, w, rng); err != nil {
			if errs.Add(1) == 1 {
				first.Store(err)
			}
		}
		return 0
	}
}

// drive runs a verified read on the phase's connections to addr for
// -duration.
func (r *ltmRun) drive(ctx context.Context, addr string, p *readPhase, seed uint64, read func(c *Conn, w int, rng *rand.Rand) error) error {
	var errs atomic.Uint64
	var first atomic.Value
	res, err := Drive(ctx, DriveOptions{Addr: addr, Conns: p.conns, Duration: r.cfg.duration, Seed: seed},
		verified(&errs, &first, read))
	if err != nil {
		return err
	}
	if res.FirstErr != nil {
		return res.FirstErr
	}
	p.lat, p.elapsed = res.Latency, res.Elapsed
	p.calls = res.Latency.Count()
	p.keys = p.calls * uint64(p.keysEach)
	p.errors = errs.Load()
	if e, ok := first.Load().(error); ok {
		p.firstErr = e
	}
	return nil
}

// getPhase: one GET per round trip to addr, keys drawn from ks.
func (r *ltmRun) getPhase(ctx context.Context, addr string, p *readPhase, ks Keys) error {
	// Each connection has its own rng for its life; its Zipf draws from it.
	zipfs := make([]*rand.Zipf, p.conns)
	return r.drive(ctx, addr, p, 2, func(c *Conn, w int, rng *rand.Rand) error {
		if ks.zipfian && zipfs[w] == nil {
			zipfs[w] = rand.NewZipf(rng, 1.1, 1, ks.n-1)
		}
		key := ltmKey(ks.Next(rng, zipfs[w]))
		v, err := c.Do("GET", key)
		if err != nil {
			return err
		}
		return r.checkValue(v, key)
	})
}

// mgetPhase: MGET of mgetWidth consecutive keys from a random start.
func (r *ltmRun) mgetPhase(ctx context.Context, p *readPhase) error {
	p.keysEach = mgetWidth
	n := uint64(r.cfg.keys)
	return r.drive(ctx, r.srv.Addr, p, 3, func(c *Conn, _ int, rng *rand.Rand) error {
		start := rng.Uint64N(n - mgetWidth + 1)
		args := make([]any, 0, mgetWidth+1)
		args = append(args, "MGET")
		for i := range uint64(mgetWidth) {
			args = append(args, ltmKey(start+i))
		}
		v, err := c.Do(args...)
		if err != nil {
			return err
		}
		vals, ok := v.([]any)
		if !ok || len(vals) != mgetWidth {
			return fmt.Errorf("MGET from %s: reply %T of %d", ltmKey(start), v, len(vals))
		}
		for i, x := range vals {
			if err := r.checkValue(x, ltmKey(start+uint64(i))); err != nil {
				return err
			}
		}
		return nil
	})
}

// scanPhase walks the whole keyspace with SCAN COUNT 1000 on one
// connection (a cursor is a sequence), timing each call, and checks that
// it saw every key.
func (r *ltmRun) scanPhase(ctx context.Context, p *readPhase) error {
	p.isScan, p.scanCount = true, 1000
	c, err := Dial(r.srv.Addr)
	if err != nil {
		return err
	}
	defer c.Close()
	cursor := "0"
	start := time.Now()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		t := time.Now()
		v, err := c.Do("SCAN", cursor, "COUNT", p.scanCount)
		if err != nil {
			return err
		}
		p.lat.Record(time.Since(t))
		p.calls++
		reply, ok := v.([]any)
		if !ok || len(reply) != 2 {
			return fmt.Errorf("SCAN reply %v", v)
		}
		keys, _ := reply[1].([]any)
		p.keys += uint64(len(keys))
		cursor = string(reply[0].([]byte))
		if cursor == "0" {
			break
		}
	}
	p.elapsed = time.Since(start)
	if p.keys != uint64(r.cfg.keys) {
		p.errors, p.firstErr = 1, errors.New("SCAN saw "+strconv.FormatUint(p.keys, 10)+" keys")
	}
	return nil
}

// peerHot measures the hot-set phases again on redis-server holding the
// same hot keys and values: same client, connections and duration, minutes
// apart on the same shared cores, so that the cached-GET latency has a peer
// to be judged against. On two cores the client's goroutines and the
// server take turns, and much of a GET's p99 there is queueing that any
// server sees. The peer keeps no AOF: loading the hot set would start an
// AOF rewrite (over 64 MB), whose writes would land in the phases.
func (r *ltmRun) peerHot(ctx context.Context, hot uint64) error {
	peer, err := StartRedis(ctx, "")
	if err != nil {
		return err
	}
	defer peer.Stop()
	r.rss.setPhase("peer")
	// The load's values, key for key, through the load's op.
	pipe := uint64(r.cfg.pipeline)
	res, err := Drive(ctx, DriveOptions{Addr: peer.Addr, Conns: 1, Total: (hot + pipe - 1) / pipe, Seed: 1},
		setKeys(newValueSource(r.cfg.value), pipe, hot, func(int) {}))
	if err != nil {
		return err
	}
	if res.FirstErr != nil || res.Ops != hot {
		return fmt.Errorf("loading the hot set: %d of %d SETs, %d errors, first %v", res.Ops, hot, res.Errors, res.FirstErr)
	}
	name := fmt.Sprintf("GET hot %dk keys", hot/1000)
	for _, conns := range []int{r.cfg.conns, lowConns} {
		fmt.Fprintf(r.env.Log, "ltm: %s on redis-server, %d conns\n", name, conns)
		p := &readPhase{name: name, conns: conns, keysEach: 1, peer: true}
		if err := r.getPhase(ctx, peer.Addr, p, Keys{n: hot}); err != nil {
			return err
		}
		if p.errors > 0 {
			return fmt.Errorf("%s: %d bad reads, first: %v", name, p.errors, p.firstErr)
		}
		fmt.Fprintf(r.env.Log, "ltm:   %.0f cmd/s, p50 %s p99 %s ms\n", p.callsPerSec(), ms(p.lat.Quantile(0.5)), ms(p.lat.Quantile(0.99)))
		r.phases = append(r.phases, *p)
	}
	return nil
}

// warm reads the hot set once (MGETs, untimed) so that its phase measures
// cached reads, not the misses that fill the cache.
func (r *ltmRun) warm(ctx context.Context, hot uint64) error {
	c, err := Dial(r.srv.Addr)
	if err != nil {
		return err
	}
	defer c.Close()
	for start := uint64(0); start < hot && ctx.Err() == nil; start += mgetWidth {
		args := []any{"MGET"}
		for i := start; i < min(start+mgetWidth, hot); i++ {
			args = append(args, ltmKey(i))
		}
		if _, err := c.Do(args...); err != nil {
			return err
		}
	}
	return ctx.Err()
}

func (r *ltmRun) saveProfileAsync(path, name string) {
	if r.cfg.pprofDir != "" {
		go r.saveProfile(path, name)
	}
}
