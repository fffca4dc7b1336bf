package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/redis/go-redis/v9"
)

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// scrape returns the value of each sample of /metrics, keyed by its name
// and labels as the text format writes them (`name{label="v"}`).
func scrape(t *testing.T, base string) map[string]float64 {
	t.Helper()
	code, body := httpGet(t, base+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics = %d: %s", code, body)
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	out := map[string]float64{}
	for name, fam := range fams {
		for _, m := range fam.Metric {
			key := name
			if len(m.Label) > 0 {
				var ls []string
				for _, l := range m.Label {
					ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
				}
				key += "{" + strings.Join(ls, ",") + "}"
			}
			out[key] = value(m)
			if h := m.Histogram; h != nil { // as the text format names them
				out[key+"_count"] = float64(h.GetSampleCount())
				out[key+"_sum"] = h.GetSampleSum()
			}
		}
	}
	return out
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return 0
}

// TestServerMetrics runs `strata server` in-process over a temp directory
// with a small memtable and in-process compaction, drives it with go-redis
// until the engine has flushed and compacted, and checks what /metrics,
// /healthz, /readyz and /debug/pprof/ answer.
func TestServerMetrics(t *testing.T) {
	port, mport := freePort(t), freePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", mport)
	f, err := parseServerArgs([]string{"--dir", t.TempDir(), "--bind", "127.0.0.1", "--port", strconv.Itoa(port),
		"--metrics-addr", fmt.Sprintf("127.0.0.1:%d", mport), "--memtable-size", "64kb", "--loglevel", "warning",
		"--disk-cache", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- serve(f, slog.New(slog.DiscardHandler)) }()

	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := httpGet(t, base+"/readyz")
		if code == 200 {
			break
		}
		if code != 0 && code != 503 {
			t.Fatalf("/readyz during startup = %d: %s", code, body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready after 30 s: %d %s", code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code, _ := httpGet(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz = %d", code)
	}

	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), MaxRetries: -1})
	defer rdb.Close()
	// 64 KiB memtables: 2 MiB of values is some 30 flushes, past the
	// compactor's L0 trigger several times.
	const n = 2000
	val := strings.Repeat("v", 1000)
	for i := 0; i < n; i += 100 {
		pipe := rdb.Pipeline()
		for j := i; j < i+100; j++ {
			pipe.Set(ctx, fmt.Sprintf("key:%06d", j), val, 0)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.Get(ctx, "key:000000").Err(); err != nil {
		t.Fatal(err)
	}

	var m map[string]float64
	for {
		m = scrape(t, base)
		if m["strata_compactions_total"] > 0 {
			break
		}
		if time.Now().After(deadline.Add(30 * time.Second)) {
			t.Fatalf("no compaction after the workload: flushes %v, L0 %v", m["strata_lsm_flushes_total"], m["strata_lsm_l0_ssts"])
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("flushes %v, compactions %v, uploads %v, L0 %v, runs %v", m["strata_lsm_flushes_total"],
		m["strata_compactions_total"], m[`objstore_bucket_operations_total{bucket="strata",operation="upload"}`],
		m["strata_lsm_l0_ssts"], m["strata_lsm_sorted_runs"])
	if m[`objstore_bucket_operations_total{bucket="strata",operation="upload"}`] == 0 {
		t.Error("no object-store uploads counted")
	}
	if m["strata_disk_cache_written_parts_total"] == 0 || m["strata_disk_cache_files"] == 0 {
		t.Errorf("disk cache: %v parts written through, %v files; flushes and compactions write through",
			m["strata_disk_cache_written_parts_total"], m["strata_disk_cache_files"])
	}
	if m["strata_lsm_flushes_total"] < 4 {
		t.Errorf("flushes = %v, want several", m["strata_lsm_flushes_total"])
	}
	if got := m[`strata_command_calls_total{command="set"}`]; got != n {
		t.Errorf("set calls = %v, want %d", got, n)
	}
	if got := m[`strata_command_calls_total{command="get"}`]; got != 1 {
		t.Errorf("get calls = %v, want 1", got)
	}
	if m["strata_connected_clients"] < 1 || m["strata_wal_objects_total"] == 0 || m["strata_wal_batches_total"] < n/100 {
		t.Errorf("clients %v, WAL objects %v, WAL batches %v", m["strata_connected_clients"],
			m["strata_wal_objects_total"], m["strata_wal_batches_total"])
	}
	// Every stored WAL object is one observation of PUT time and of
	// group size, and the groups add up to the batches.
	if objs := m["strata_wal_objects_total"]; m["strata_wal_put_seconds_count"] != objs ||
		m["strata_wal_object_batches_count"] != objs || m["strata_wal_object_batches_sum"] != m["strata_wal_batches_total"] {
		t.Errorf("WAL histograms: put count %v, group count %v, group sum %v; objects %v, batches %v",
			m["strata_wal_put_seconds_count"], m["strata_wal_object_batches_count"], m["strata_wal_object_batches_sum"],
			objs, m["strata_wal_batches_total"])
	}
	// The local journal gets ready in the background (it zero-fills its
	// files); from then on durable writes are made durable through it.
	for i := 0; m["strata_local_journal_records_total"] == 0; i++ {
		if time.Now().After(deadline.Add(60 * time.Second)) {
			t.Fatalf("no upload went through the local journal: %v direct, failed %v",
				m["strata_local_journal_direct_total"], m["strata_local_journal_failed"])
		}
		if err := rdb.Set(ctx, fmt.Sprintf("more:%d", i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		m = scrape(t, base)
	}
	// Every WAL object (and manifest; all are under 1 MiB here) was made
	// durable one way or the other.
	if j, d, w := m["strata_local_journal_records_total"], m["strata_local_journal_direct_total"], m["strata_wal_objects_total"]; j+d < w || m["strata_local_journal_failed"] != 0 {
		t.Errorf("local journal: %v records + %v direct < %v WAL objects, or failed (%v)", j, d, w, m["strata_local_journal_failed"])
	}
	checkInfoMatchesMetrics(t, ctx, rdb, base)
	if code, body := httpGet(t, base+"/debug/pprof/"); code != 200 || !strings.Contains(body, "goroutine") {
		t.Errorf("/debug/pprof/ = %d", code)
	}
	if code, _ := httpGet(t, base+"/readyz"); code != 200 {
		t.Errorf("/readyz while serving = %d", code)
	}

	rdb.Shutdown(ctx) // the connection closes under the reply
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("server did not shut down")
	}
	if code, _ := httpGet(t, base+"/healthz"); code != 0 {
		t.Errorf("metrics listener still answers after shutdown: %d", code)
	}
}

// checkInfoMatchesMetrics: INFO and /metrics show the same figures. Every
// strata_* and objstore operation series has its INFO field (the name
// without strata_ and, for counters, _total; objstore_<op>[_failures];
// histograms' _count and _sum), and every field of INFO's Strata,
// Compactor, Objstore, Diskcache and Localjournal sections is a series. Values match: read INFO,
// scrape, read INFO again; a counter's scrape lies between the two reads,
// a gauge that did not move equals both.
func checkInfoMatchesMetrics(t *testing.T, ctx context.Context, rdb *redis.Client, base string) {
	t.Helper()
	before := infoFigures(t, ctx, rdb)
	m := scrape(t, base)
	after := infoFigures(t, ctx, rdb)
	opSeries := regexp.MustCompile(`^objstore_bucket_operation(s|_failures)_total\{bucket="strata",operation="(\w+)"\}$`)
	seen := map[string]bool{}
	compared := 0
	for key, v := range m {
		var field string
		switch {
		case strings.HasPrefix(key, "strata_command_") || key == "strata_connected_clients":
			continue // INFO's commandstats and clients sections, checked above through go-redis
		case strings.HasPrefix(key, "strata_"):
			field = strings.TrimSuffix(strings.TrimPrefix(key, "strata_"), "_total")
			if _, ok := before[field]; !ok && strings.HasSuffix(key, "_total") {
				field = strings.TrimPrefix(key, "strata_") // a figure whose own name ends in _total
			}
		case opSeries.MatchString(key):
			sm := opSeries.FindStringSubmatch(key)
			field = "objstore_" + sm[2]
			if sm[1] == "_failures" {
				field += "_failures"
			}
		default:
			continue
		}
		if _, hist := m[key+"_count"]; hist || strings.Contains(field, "{") {
			continue // a histogram as a whole, or a labelled series: INFO shows its _count and _sum
		}
		seen[field] = true
		b, ok1 := before[field]
		a, ok2 := after[field]
		if !ok1 || !ok2 {
			t.Errorf("/metrics has %s, INFO has no %s", key, field)
			continue
		}
		lo, hi := min(a, b), max(a, b)
		if v < lo || v > hi {
			t.Errorf("%s = %v, INFO %s = %v then %v", key, v, field, b, a)
		}
		compared++
	}
	for field := range before {
		if !seen[field] && !strings.HasSuffix(field, "_avg") {
			t.Errorf("INFO has %s, /metrics has no series for it", field)
		}
	}
	if compared < 40 {
		t.Errorf("compared only %d figures", compared)
	}
	t.Logf("INFO and /metrics agree on %d figures", compared)
}

// infoFigures returns the numeric fields of INFO's Strata, Compactor and
// Objstore sections.
func infoFigures(t *testing.T, ctx context.Context, rdb *redis.Client) map[string]float64 {
	t.Helper()
	txt, err := rdb.Info(ctx, "everything").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	section := ""
	for _, line := range strings.Split(txt, "\r\n") {
		if name, ok := strings.CutPrefix(line, "# "); ok {
			section = name
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || (section != "Strata" && section != "Compactor" && section != "Objstore" && section != "Diskcache" && section != "Localjournal") {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			out[k] = f
		}
	}
	return out
}
