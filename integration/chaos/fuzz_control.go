package main

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/stratakv/strata/resp/resptest"
)

// fuzzControl is the campaign's well-behaved client: it writes a sentinel
// key at the start (a name the fuzzers never generate), then probes the
// server with PING and GET of the sentinel (PING only once key is ""),
// and samples its RSS.
type fuzzControl struct {
	srv        *server
	key, value string
	c          *fuzzConn

	probes, failures int
	failed           []string // the first failures, for the report
	peakRSS          int64
	exited           bool
}

const fuzzProbeTimeout = 10 * time.Second

func newFuzzControl(srv *server, seed uint64) (*fuzzControl, error) {
	ctl := &fuzzControl{srv: srv, key: "chaos:fuzz:sentinel:" + strconv.FormatUint(seed, 36),
		value: "sentinel\r\n\x00\xff" + strconv.FormatUint(seed, 10)}
	c, err := dialFuzzConn(srv.Addr)
	if err != nil {
		return nil, err
	}
	ctl.c = c
	reply, err := c.do(fuzzProbeTimeout, "SET", ctl.key, ctl.value)
	if err != nil || string(reply) != "+OK\r\n" {
		return nil, fmt.Errorf("SET sentinel: %q %v", reply, err)
	}
	return ctl, nil
}

// watch probes every gap until ctx ends; when the server has exited it
// cancels the load (stop), as nothing more can be learnt.
func (ctl *fuzzControl) watch(ctx context.Context, gap time.Duration, stop context.CancelFunc) {
	t := time.NewTicker(gap)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ctl.probe()
		if ctl.exited {
			stop()
			return
		}
	}
}

// probe checks once that the server is running, answers PING and returns
// the sentinel, and samples its RSS. It returns the failure, if any.
func (ctl *fuzzControl) probe() error {
	ctl.probes++
	err := ctl.try()
	if rss, rerr := ctl.srv.RSS(); rerr == nil {
		ctl.peakRSS = max(ctl.peakRSS, rss)
	}
	if err != nil {
		ctl.failures++
		if len(ctl.failed) < 20 {
			ctl.failed = append(ctl.failed, fmt.Sprintf("control probe at %s: %v", time.Now().Format("15:04:05.000"), err))
		}
		if ctl.c != nil {
			ctl.c.close()
			ctl.c = nil // a new connection for the next probe
		}
	}
	return err
}

func (ctl *fuzzControl) try() error {
	select {
	case <-ctl.srv.Exited():
		ctl.exited = true
		return fmt.Errorf("the server exited:\n%s", clip(ctl.srv.Output(), 4000))
	default:
	}
	if ctl.c == nil {
		c, err := dialFuzzConn(ctl.srv.Addr)
		if err != nil {
			return err
		}
		ctl.c = c
	}
	if reply, err := ctl.c.do(fuzzProbeTimeout, "PING"); err != nil || string(reply) != "+PONG\r\n" {
		return fmt.Errorf("PING: %q %v", reply, err)
	}
	if ctl.key == "" {
		return nil
	}
	reply, err := ctl.c.do(fuzzProbeTimeout, "GET", ctl.key)
	if err != nil {
		return fmt.Errorf("GET sentinel: %w", err)
	}
	v, err := resptest.Parse(reply)
	if err != nil || v.Kind != '$' || !bytes.Equal(v.Str, []byte(ctl.value)) {
		return fmt.Errorf("GET sentinel: %q, want %q", reply, ctl.value)
	}
	return nil
}

// report adds the probes and the memory bound to res: every probe is a
// check.
func (ctl *fuzzControl) report(res *Result, cfg fuzzConfig) {
	res.Passed += ctl.probes - ctl.failures
	res.Failed += ctl.failures
	res.Failures = append(res.Failures, ctl.failed...)
	res.Check(ctl.probes > 0, "no control probe ran")
	res.Check(!ctl.exited, "the server exited during the load")
	res.Check(ctl.peakRSS > 0 && ctl.peakRSS < cfg.rssLimit, "server RSS peaked at %d MiB, limit %d MiB",
		ctl.peakRSS>>20, cfg.rssLimit>>20)
}

func (ctl *fuzzControl) close() {
	if ctl.c != nil {
		ctl.c.close()
	}
}
