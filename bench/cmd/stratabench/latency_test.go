package main

import (
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
)

// TestLatencyShort runs the latency experiment's -short version and checks
// its tables: a row per setting, throughput, p99 ≥ p50, WAL PUTs bounded
// by the flush interval, and no bucket GETs for warm reads from the disk
// cache.
func TestLatencyShort(t *testing.T) {
	if testing.Short() {
		t.Skip("runs strata servers on a slowed object store")
	}
	env := &Env{Out: t.TempDir(), Short: true, Log: io.Discard, Report: newReport("latency", "test")}
	if err := runLatency(context.Background(), env, nil); err != nil {
		t.Fatal(err)
	}
	var md strings.Builder
	if err := env.Report.Write(env.Out, &md); err != nil {
		t.Fatal(err)
	}
	sets, reads := tableRows(t, md.String(), "Durable SET"), tableRows(t, md.String(), "Point reads")
	if len(sets) != 2 || len(reads) != 6 {
		t.Fatalf("%d SET rows, %d read rows; want 2 and 6:\n%s", len(sets), len(reads), md.String())
	}
	for _, r := range append(sets, reads...) {
		if tput, p50, p99 := num(t, r[3]), num(t, r[4]), num(t, r[5]); tput <= 0 || p50 <= 0 || p99 < p50 {
			t.Errorf("row %v: throughput %v, p50 %v, p99 %v", r, tput, p50, p99)
		}
	}
	// At a 50ms interval at most 20 flushes start per second.
	if puts := num(t, sets[1][6]); puts <= 0 || puts > 21 {
		t.Errorf("WAL PUTs/s at a 50ms flush interval = %v", puts)
	}
	for _, r := range reads {
		gets := num(t, r[6])
		if r[1] == "no disk cache" && gets < 0.3 || r[1] != "no disk cache" && r[2] == "warm" && gets > 0.01 {
			t.Errorf("row %v: %v bucket GETs per read", r, gets)
		}
	}
}

// tableRows returns the cells of the table whose title starts with title.
func tableRows(t *testing.T, md, title string) [][]string {
	t.Helper()
	_, rest, ok := strings.Cut(md, "### "+title)
	if !ok {
		t.Fatalf("no table %q in\n%s", title, md)
	}
	var rows [][]string
	// After the title line and a blank one: the header, its separator, rows.
	for _, line := range strings.Split(rest, "\n")[4:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		rows = append(rows, cells)
	}
	return rows
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("cell %q: %v", s, err)
	}
	return f
}
