package main

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/metrics"
	"github.com/stratakv/strata/resp"
)

// metricsEndpoint holds a subcommand's metrics: the registry INFO and
// /metrics both read, and the --metrics-addr listener serving it (nil when
// the flag is empty).
type metricsEndpoint struct {
	reg   *prometheus.Registry
	ready metrics.Readiness
	ln    *metrics.Listener
}

// startMetrics makes the registry and, unless addr is "", starts serving
// /metrics, /healthz, /readyz (503 until serving is called) and
// /debug/pprof/ on addr. It starts before the bucket is opened, so /healthz
// answers during a slow recovery.
func startMetrics(addr string, logger *slog.Logger) (*metricsEndpoint, error) {
	e := &metricsEndpoint{reg: metrics.NewRegistry()}
	if addr == "" {
		return e, nil
	}
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
// Everything that uses the bucket (engine, in-process compactor) shares it.
func (e *metricsEndpoint) instrument(bkt objstore.Bucket) objstore.Bucket {
	return objstore.WrapWithMetrics(bkt, e.reg, "strata")
}

// serving exports src and marks the process ready while check passes.
func (e *metricsEndpoint) serving(src metrics.Sources, check func(context.Context) error) {
	e.reg.MustRegister(metrics.NewCollector(src))
	e.ready.Serving(check)
}

// stopping makes /readyz answer 503 from now on.
func (e *metricsEndpoint) stopping() { e.ready.Stopping() }

func (e *metricsEndpoint) close() {
	if e.ln == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e.ln.Close(ctx)
}

// objstoreInfo is INFO's Objstore section, read from the same registry
// series /metrics serves: objstore_<operation> is
// objstore_bucket_operations_total{operation=...} and
// objstore_<operation>_failures is objstore_bucket_operation_failures_total.
func (e *metricsEndpoint) objstoreInfo() resp.InfoSection {
	sec := resp.InfoSection{Name: "Objstore"}
	fams, err := e.reg.Gather()
	if err != nil {
		return sec
	}
	suffix := map[string]string{"objstore_bucket_operations_total": "", "objstore_bucket_operation_failures_total": "_failures"}
	for _, fam := range fams {
		sfx, ok := suffix[fam.GetName()]
		if !ok {
			continue
		}
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "operation" {
					sec.Fields = append(sec.Fields, [2]string{"objstore_" + l.GetValue() + sfx,
						strconv.FormatFloat(m.GetCounter().GetValue(), 'f', -1, 64)})
				}
			}
		}
	}
	slices.SortFunc(sec.Fields, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return sec
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
