package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/stratakv/strata/compactor"
	"github.com/stratakv/strata/lsm"
	"github.com/stratakv/strata/wal"
)

// CommandStat is one command's counters (resp.CommandStat, copied by the
// wiring so this package does not import resp).
type CommandStat struct {
	Name                          string
	Calls, Usec, Failed, Rejected uint64
}

// Sources are the snapshot functions a Collector reads at scrape time. A nil
// function leaves its metrics out: a standalone compactor has no engine and
// no commands.
type Sources struct {
	Engine    func() lsm.Metrics
	Compactor func() compactor.Stats
	Commands  func() []CommandStat
	Clients   func() int
	// Extra are more figures, exported as the engine's are: those of
	// parts of the binary below the engine (the disk cache).
	Extra func() []lsm.Figure
}

// Collector is a prometheus.Collector over Sources.
type Collector struct {
	src Sources
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns a collector over src.
func NewCollector(src Sources) *Collector { return &Collector{src: src} }

// Describe implements prometheus.Collector. The set of command series grows
// as commands are first called, so the collector is unchecked: it sends no
// descriptions.
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	e := emitter{ch: ch}
	if c.src.Commands != nil {
		for _, st := range c.src.Commands() {
			e.counterL("strata_command_calls_total", "Calls of each command that ran.", "command", st.Name, float64(st.Calls))
			e.counterL("strata_command_duration_seconds_total", "Time spent in each command.", "command", st.Name,
				float64(st.Usec)/1e6)
			e.counterL("strata_command_failed_calls_total", "Calls of each command that replied with an error.",
				"command", st.Name, float64(st.Failed))
			e.counterL("strata_command_rejected_calls_total", "Calls of each command refused before running.",
				"command", st.Name, float64(st.Rejected))
		}
	}
	if c.src.Clients != nil {
		e.gauge("strata_connected_clients", "Connected RESP clients.", float64(c.src.Clients()))
	}
	if c.src.Engine != nil {
		collectFigures(e, c.src.Engine().Figures())
	}
	if c.src.Compactor != nil {
		collectFigures(e, c.src.Compactor().Figures())
	}
	if c.src.Extra != nil {
		collectFigures(e, c.src.Extra())
	}
}

// collectFigures exports figures as strata_<name>, counters with _total:
// the names INFO shows them under, prefixed (lsm.Figure).
func collectFigures(e emitter, figs []lsm.Figure) {
	for _, f := range figs {
		name := "strata_" + f.Name
		switch f.Kind {
		case lsm.Counter:
			e.counter(name+"_total", f.Help, f.Value)
		case lsm.Gauge:
			e.gauge(name, f.Help, f.Value)
		case lsm.Histogram:
			e.histogram(name, f.Help, f.Hist)
		}
	}
}

// emitter builds const metrics; their descriptions are made per scrape,
// which costs a little allocation and keeps no state between scrapes.
type emitter struct{ ch chan<- prometheus.Metric }

func (e emitter) emit(name, help string, t prometheus.ValueType, v float64, labels ...string) {
	var keys, values []string
	for i := 0; i+1 < len(labels); i += 2 {
		keys, values = append(keys, labels[i]), append(values, labels[i+1])
	}
	e.ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(name, help, keys, nil), t, v, values...)
}

func (e emitter) counter(name, help string, v float64) {
	e.emit(name, help, prometheus.CounterValue, v)
}
func (e emitter) gauge(name, help string, v float64) { e.emit(name, help, prometheus.GaugeValue, v) }

// histogram emits a snapshot taken of fixed buckets (per-bucket counts)
// as a Prometheus histogram (cumulative counts).
func (e emitter) histogram(name, help string, h wal.Histogram) {
	buckets := make(map[float64]uint64, len(h.Bounds))
	var cum uint64
	for i, b := range h.Bounds {
		cum += h.Counts[i]
		buckets[b] = cum
	}
	e.ch <- prometheus.MustNewConstHistogram(prometheus.NewDesc(name, help, nil, nil), h.Count, h.Sum, buckets)
}
func (e emitter) counterL(name, help, label, value string, v float64) {
	e.emit(name, help, prometheus.CounterValue, v, label, value)
}
