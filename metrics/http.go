package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Readiness is a process's lifecycle as /readyz reports it: starting, then
// serving (while a check passes), then stopping. The zero value is starting.
type Readiness struct {
	state atomic.Int32
	check atomic.Pointer[func(context.Context) error]
}

const (
	starting int32 = iota
	serving
	stopping
)

// Serving marks the process ready as long as check (nil: none) passes.
func (r *Readiness) Serving(check func(context.Context) error) {
	if check != nil {
		r.check.Store(&check)
	}
	r.state.CompareAndSwap(starting, serving)
}

// Stopping marks the process not ready, for good.
func (r *Readiness) Stopping() { r.state.Store(stopping) }

// Ready returns nil if the process is ready, or why not.
func (r *Readiness) Ready(ctx context.Context) error {
	switch r.state.Load() {
	case starting:
		return errors.New("starting")
	case stopping:
		return errors.New("shutting down")
	}
	if check := r.check.Load(); check != nil {
		return (*check)(ctx)
	}
	return nil
}

// readyTimeout bounds a readiness check (it may read the bucket).
const readyTimeout = 5 * time.Second

// Handler serves /metrics from g, /healthz, /readyz from ready, and
// net/http/pprof under /debug/pprof/.
func Handler(g prometheus.Gatherer, ready *Readiness) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, req *http.Request) {
		ctx, cancel := context.WithTimeout(req.Context(), readyTimeout)
		defer cancel()
		if err := ready.Ready(ctx); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	// pprof.Index serves the named profiles below /debug/pprof/ too.
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// NewRegistry returns a registry with the Go runtime and process
// collectors; a Collector is registered once its sources exist.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return reg
}

// Listener is the HTTP server of the metrics endpoints.
type Listener struct {
	ln  net.Listener
	srv *http.Server
}

// Listen starts serving h on addr.
func Listen(addr string, h http.Handler, logger *slog.Logger) (*Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: cannot listen on %s: %v", addr, errors.Unwrap(err))
	}
	l := &Listener{ln: ln, srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		if err := l.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics listener stopped", "addr", ln.Addr(), "err", err)
		}
	}()
	return l, nil
}

// Addr is the address the listener serves on.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// Close stops the listener, letting requests in flight finish until ctx
// ends.
func (l *Listener) Close(ctx context.Context) error { return l.srv.Shutdown(ctx) }
