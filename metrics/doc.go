// Package metrics exports Strata's metrics to Prometheus and serves the
// operator endpoints: /metrics, /healthz, /readyz and /debug/pprof/.
//
// It sits at the edge, beside cmd/strata: it reads the engine's and the
// compactor's Metrics structs, and the command counters the RESP server
// hands it as plain values (resp does not import this package, and this
// package does not import resp).
//
// Invariants:
//
//  1. No package-global state: every figure is read from its source at
//     scrape time, by a collector over the source's snapshot function, so
//     two servers in one process never share a counter.
//  2. A counter exported as *_total only ever grows while its source lives
//     (CONFIG RESETSTAT resets the command counters, as in Redis; Prometheus
//     treats that as a counter reset).
//  3. /healthz answers 200 whenever the process can answer at all; /readyz
//     answers 200 only between Serving and Stopping and while the readiness
//     check passes (the engine is not fenced).
//  4. pprof is served on the metrics listener only, never on the RESP port
//     and never on http.DefaultServeMux.
package metrics
