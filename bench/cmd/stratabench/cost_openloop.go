package main

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// An open-loop driver: commands leave on a fixed schedule whether or not
// earlier ones were answered, as a steady production load would, so a
// server that falls behind shows as a lower achieved rate and a growing
// latency rather than as a slower client. Latency is measured from each
// command's scheduled time, so time spent queued behind a stalled command
// counts (no coordinated omission).

// RateOptions shape an open-loop run.
type RateOptions struct {
	Addr     string
	Conns    int           // the load is spread evenly over them; each pipelines freely
	Rate     float64       // commands per second, in all
	Duration time.Duration // sending stops after this long
	Drain    time.Duration // how long to wait for replies after that (default 30 s)
	Seed     uint64
}

// RateResult is what an open-loop run measured.
type RateResult struct {
	Sent, Done, Errors uint64
	Elapsed            time.Duration // first send to last reply (or the drain limit)
	Latency            Histogram     // from scheduled send time to reply
	FirstErr           error
}

// Throughput is replies per second over Elapsed: below the target rate
// when the server could not keep up.
func (r *RateResult) Throughput() float64 { return float64(r.Done) / r.Elapsed.Seconds() }

// Command builds the i-th command of a connection.
type Command func(rng *rand.Rand) []any

// DriveRate sends cmd at o.Rate for o.Duration and collects the replies.
func DriveRate(ctx context.Context, o RateOptions, cmd Command) (*RateResult, error) {
	if o.Drain == 0 {
		o.Drain = 30 * time.Second
	}
	conns, err := dialAll(o.Addr, o.Conns)
	if err != nil {
		return nil, err
	}
	defer closeAll(conns)
	res := &RateResult{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	interval := time.Duration(float64(o.Conns) / o.Rate * float64(time.Second))
	for w, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Stagger the connections so their sends interleave.
			first := start.Add(interval * time.Duration(w) / time.Duration(o.Conns))
			r := openLoopConn(ctx, c, first, interval, start.Add(o.Duration), start.Add(o.Duration+o.Drain),
				rand.New(rand.NewPCG(o.Seed, uint64(w))), cmd)
			mu.Lock()
			res.merge(r)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	return res, nil
}

func (r *RateResult) merge(o *RateResult) {
	r.Sent += o.Sent
	r.Done += o.Done
	r.Errors += o.Errors
	r.Latency.Merge(&o.Latency)
	if r.FirstErr == nil {
		r.FirstErr = o.FirstErr
	}
}

// openLoopConn sends on c every interval from first until stop (all the
// commands that fell due at once, as one pipeline) while a second
// goroutine reads the replies, until they are all in or drainBy passes.
func openLoopConn(ctx context.Context, c *Conn, first time.Time, interval time.Duration, stop, drainBy time.Time,
	rng *rand.Rand, cmd Command) *RateResult {
	due := make(chan time.Time, 1<<16)
	recv := make(chan *RateResult, 1)
	go func() { recv <- receiveReplies(c, due, drainBy) }()
	var sent uint64
	next := first
	for next.Before(stop) && ctx.Err() == nil {
		if wait := time.Until(next); wait > 0 {
			time.Sleep(wait)
		}
		now := time.Now()
		for ; !next.After(now) && next.Before(stop); next = next.Add(interval) {
			c.Send(cmd(rng)...)
			due <- next
			sent++
		}
		if err := c.Flush(); err != nil {
			break
		}
	}
	close(due)
	r := <-recv
	r.Sent = sent
	return r
}

// receiveReplies reads one reply per scheduled time on due, recording its
// latency from that time, until due is closed and drained or drainBy.
func receiveReplies(c *Conn, due <-chan time.Time, drainBy time.Time) *RateResult {
	r := &RateResult{}
	_ = c.nc.SetReadDeadline(drainBy)
	broken := false
	for t := range due {
		if broken {
			continue // drain the schedule so the sender never blocks
		}
		_, err := c.Receive()
		if err != nil {
			if _, ok := err.(ErrReply); !ok {
				broken = true
				if r.FirstErr == nil {
					r.FirstErr = err
				}
				continue
			}
			r.Errors++
			if r.FirstErr == nil {
				r.FirstErr = err
			}
		}
		r.Latency.Record(time.Since(t))
		r.Done++
	}
	return r
}
