package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/metrics"
	"github.com/stratakv/strata/resp"
)

// metricsEndpoint is a subcommand's --metrics-addr listener. A nil
// *metricsEndpoint (the flag left empty) is valid and does nothing.
type metricsEndpoint struct {
	reg   *prometheus.Registry
	ready metrics.Readiness
	ln    *metrics.Listener
}

// startMetrics starts serving /metrics, /healthz, /readyz (503 until
// serving is called) and /debug/pprof/ on addr, or returns nil if addr is "".
// It starts before the bucket is opened, so /healthz answers during a slow
// recovery.
func startMetrics(addr string, logger *slog.Logger) (*metricsEndpoint, error) {
	if addr == "" {
		return nil, nil
	}
	e := &metricsEndpoint{reg: metrics.NewRegistry()}
	ln, err := metrics.Listen(addr, metrics.Handler(e.reg, &e.ready), logger)
	if err != nil {
		return nil, err
	}
	e.ln = ln
	logger.Info("serving metrics", "addr", ln.Addr())
	return e, nil
}

// instrument wraps bkt with objstore's per-operation request metrics
// (objstore_bucket_operations_total{operation="upload"} and so on). It wraps
// outside the retry layer: a request that succeeded on a retry counts once.
func (e *metricsEndpoint) instrument(bkt objstore.Bucket) objstore.Bucket {
	if e == nil {
		return bkt
	}
	return objstore.WrapWithMetrics(bkt, e.reg, "strata")
}

// serving exports src and marks the process ready while check passes.
func (e *metricsEndpoint) serving(src metrics.Sources, check func(context.Context) error) {
	if e == nil {
		return
	}
	e.reg.MustRegister(metrics.NewCollector(src))
	e.ready.Serving(check)
}

// stopping makes /readyz answer 503 from now on.
func (e *metricsEndpoint) stopping() {
	if e != nil {
		e.ready.Stopping()
	}
}

func (e *metricsEndpoint) close() {
	if e == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e.ln.Close(ctx)
}

// commandStats adapts the RESP server's counters to the exporter's type.
func commandStats(srv *resp.Server) func() []metrics.CommandStat {
	return func() []metrics.CommandStat {
		st := srv.CommandStats()
		out := make([]metrics.CommandStat, len(st))
		for i, s := range st {
			out[i] = metrics.CommandStat{Name: s.Name, Calls: s.Calls, Usec: s.Usec, Failed: s.Failed, Rejected: s.Rejected}
		}
		return out
	}
}
