package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Histogram records latencies in log-spaced buckets (about 2% apart) from
// 1µs to about 100s; safe for one goroutine, merged after a run.
type Histogram struct {
	counts [1024]uint64
	n      uint64
	sum    time.Duration
	max    time.Duration
}

const histBase = 1.02

func histBucket(d time.Duration) int {
	us := float64(d) / float64(time.Microsecond)
	if us <= 1 {
		return 0
	}
	return min(int(math.Log(us)/math.Log(histBase))+1, 1023)
}

// Record adds one latency.
func (h *Histogram) Record(d time.Duration) {
	h.counts[histBucket(d)]++
	h.n++
	h.sum += d
	h.max = max(h.max, d)
}

// Merge adds o's records.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

// Count is the number of records.
func (h *Histogram) Count() uint64 { return h.n }

// Quantile returns the latency at quantile q (0..1), to the bucket's upper
// bound.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	target := uint64(math.Ceil(q * float64(h.n)))
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= target {
			return min(time.Duration(math.Pow(histBase, float64(i))*float64(time.Microsecond)), h.max)
		}
	}
	return h.max
}

// Mean is the average latency.
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return h.sum / time.Duration(h.n)
}

// ms formats a duration in milliseconds for tables.
func ms(d time.Duration) string { return fmt.Sprintf("%.3g", float64(d)/float64(time.Millisecond)) }

// Op issues one command (or pipeline) on c for worker w's i-th operation
// and reports how many commands it sent. The driver times it and reads the
// replies.
type Op func(c *Conn, w int, i uint64, rng *rand.Rand) (cmds int)

// LoadResult is what a Drive run measured.
type LoadResult struct {
	Ops      uint64        // commands completed
	Errors   uint64        // error replies
	Elapsed  time.Duration // wall time of the run
	Latency  Histogram     // per Op call: a pipeline counts once
	FirstErr error
}

// Throughput is commands per second.
func (r *LoadResult) Throughput() float64 { return float64(r.Ops) / r.Elapsed.Seconds() }

// DriveOptions shape a load run.
type DriveOptions struct {
	Addr     string
	Conns    int
	Duration time.Duration // stop after this long (0: only Total bounds it)
	Total    uint64        // stop after this many Op calls in all (0: only Duration)
	Seed     uint64
}

// Drive runs op on Conns connections until Duration passes or Total calls
// are made, each connection sending one Op's commands and reading their
// replies before the next (closed loop).
func Drive(ctx context.Context, o DriveOptions, op Op) (*LoadResult, error) {
	var next atomic.Uint64
	res := &LoadResult{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if o.Duration > 0 {
		ctx, cancel = context.WithTimeout(ctx, o.Duration)
		defer cancel()
	}
	conns, err := dialAll(o.Addr, o.Conns)
	if err != nil {
		return nil, err
	}
	defer closeAll(conns)
	start := time.Now()
	for w, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(o.Seed, uint64(w)))
			var h Histogram
			var ops, errs uint64
			var first error
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if o.Total > 0 && i >= o.Total {
					break
				}
				t := time.Now()
				n := op(c, w, i, rng)
				if err := c.Flush(); err != nil {
					first = err
					break
				}
				failed := false
				for range n {
					if _, err := c.Receive(); err != nil {
						if _, ok := err.(ErrReply); !ok {
							first, failed = err, true
							break
						}
						errs++
						if first == nil {
							first = err
						}
					}
				}
				if failed {
					break
				}
				h.Record(time.Since(t))
				ops += uint64(n)
			}
			mu.Lock()
			res.Latency.Merge(&h)
			res.Ops += ops
			res.Errors += errs
			if res.FirstErr == nil {
				res.FirstErr = first
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	return res, nil
}

// Keys picks key indexes: uniform over [0, n), or zipfian (s=1.1) with
// small indexes hot, scattered over the key space so hot keys are not
// neighbours.
type Keys struct {
	n       uint64
	zipfian bool
}

// Next returns a key index for rng.
func (k Keys) Next(rng *rand.Rand, z *rand.Zipf) uint64 {
	if !k.zipfian {
		return rng.Uint64N(k.n)
	}
	return (z.Uint64() * 0x9E3779B97F4A7C15) % k.n
}
