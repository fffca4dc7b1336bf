package metrics

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/stratakv/strata/compactor"
	"github.com/stratakv/strata/lsm"
	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/wal"
)

// TestCollector: every source's figures come out under their names, read at
// scrape time, and a nil source is left out.
func TestCollector(t *testing.T) {
	calls := uint64(0)
	c := NewCollector(Sources{
		Engine: func() lsm.Metrics {
			return lsm.Metrics{MemtableBytes: 1234, L0SSTs: 3, SortedRuns: 2, Flushes: 7, WriteStalls: 1,
				StallTime: 1500 * time.Millisecond, WAL: wal.Stats{Objects: 4, Batches: 40},
				BlockCache: sst.CacheMetrics{Hits: 9, Misses: 1}}
		},
		Compactor: func() compactor.Stats { return compactor.Stats{Jobs: 5, GC: compactor.GCStats{SSTsDeleted: 6}} },
		Commands: func() []CommandStat {
			calls++
			return []CommandStat{{Name: "set", Calls: calls, Usec: 2_000_000, Failed: 1}}
		},
		Clients: func() int { return 2 },
	})
	want := `
# HELP strata_command_calls_total Calls of each command that ran.
# TYPE strata_command_calls_total counter
strata_command_calls_total{command="set"} 1
# HELP strata_command_duration_seconds_total Time spent in each command.
# TYPE strata_command_duration_seconds_total counter
strata_command_duration_seconds_total{command="set"} 2
# HELP strata_connected_clients Connected RESP clients.
# TYPE strata_connected_clients gauge
strata_connected_clients 2
# HELP strata_lsm_memtable_bytes Bytes in the mutable memtable.
# TYPE strata_lsm_memtable_bytes gauge
strata_lsm_memtable_bytes 1234
# HELP strata_lsm_l0_ssts SSTs in L0.
# TYPE strata_lsm_l0_ssts gauge
strata_lsm_l0_ssts 3
# HELP strata_lsm_flushes_total Memtables flushed to L0 SSTs.
# TYPE strata_lsm_flushes_total counter
strata_lsm_flushes_total 7
# HELP strata_lsm_write_stall_seconds_total Time writes spent stalled or slowed.
# TYPE strata_lsm_write_stall_seconds_total counter
strata_lsm_write_stall_seconds_total 1.5
# HELP strata_block_cache_hits_total Data block reads the block cache answered (index and filter blocks are not counted).
# TYPE strata_block_cache_hits_total counter
strata_block_cache_hits_total 9
# HELP strata_compactions_total Compaction jobs completed.
# TYPE strata_compactions_total counter
strata_compactions_total 5
# HELP strata_gc_deleted_ssts_total Unreferenced SSTs deleted.
# TYPE strata_gc_deleted_ssts_total counter
strata_gc_deleted_ssts_total 6
`
	names := []string{"strata_command_calls_total", "strata_command_duration_seconds_total", "strata_connected_clients",
		"strata_lsm_memtable_bytes", "strata_lsm_l0_ssts", "strata_lsm_flushes_total",
		"strata_lsm_write_stall_seconds_total", "strata_block_cache_hits_total", "strata_compactions_total",
		"strata_gc_deleted_ssts_total"}
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	// A second scrape reads the sources again.
	if got := testutil.ToFloat64(onlyMetric(c, "strata_connected_clients")); got != 2 {
		t.Errorf("clients = %v", got)
	}
	if n := testutil.CollectAndCount(NewCollector(Sources{Compactor: func() compactor.Stats { return compactor.Stats{} }}),
		"strata_lsm_flushes_total"); n != 0 {
		t.Errorf("no engine, yet %d flush series", n)
	}
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %+v", err, problems)
	}
}

// onlyMetric wraps the collector so that ToFloat64 sees one metric.
func onlyMetric(c *Collector, name string) *filtered { return &filtered{c: c, name: name} }

type filtered struct {
	c    *Collector
	name string
}

func (f *filtered) Describe(chan<- *prometheus.Desc) {}
func (f *filtered) Collect(ch chan<- prometheus.Metric) {
	all := make(chan prometheus.Metric)
	go func() { f.c.Collect(all); close(all) }()
	for m := range all {
		if strings.Contains(m.Desc().String(), `"`+f.name+`"`) {
			ch <- m
		}
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// TestHandler: health always, readiness only while serving and the check
// passes, metrics and pprof on the same mux.
func TestHandler(t *testing.T) {
	var ready Readiness
	reg := NewRegistry()
	reg.MustRegister(NewCollector(Sources{Clients: func() int { return 3 }}))
	l, err := Listen("127.0.0.1:0", Handler(reg, &ready), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(context.Background())
	base := "http://" + l.Addr().String()
	checkCode := func(path string, want int) string {
		t.Helper()
		code, body := get(t, base+path)
		if code != want {
			t.Errorf("%s = %d (%q), want %d", path, code, body, want)
		}
		return body
	}
	checkCode("/healthz", 200)
	checkCode("/readyz", 503)
	var fail error
	ready.Serving(func(context.Context) error { return fail })
	checkCode("/readyz", 200)
	fail = io.ErrUnexpectedEOF
	checkCode("/readyz", 503)
	fail = nil
	if body := checkCode("/metrics", 200); !strings.Contains(body, "strata_connected_clients 3") ||
		!strings.Contains(body, "go_goroutines") {
		t.Errorf("metrics body lacks the collector's or the runtime's series:\n%s", body)
	}
	if body := checkCode("/debug/pprof/", 200); !strings.Contains(body, "goroutine") {
		t.Errorf("pprof index: %q", body)
	}
	checkCode("/debug/pprof/goroutine?debug=1", 200)
	ready.Stopping()
	checkCode("/readyz", 503)
	ready.Serving(nil) // stopping is final
	checkCode("/readyz", 503)
	checkCode("/healthz", 200)
}
