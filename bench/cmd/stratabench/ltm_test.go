package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLTMShort runs the short ltm experiment (smaller still: 20 000 keys,
// 3 s phases) and checks that its tables have their rows and sane values.
func TestLTMShort(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs strata server")
	}
	dir := t.TempDir()
	env := &Env{Out: dir, Short: true, Log: io.Discard, Report: newReport("ltm", "test")}
	if testing.Verbose() {
		env.Log = os.Stderr
	}
	err := runLTM(context.Background(), env, []string{"-keys", "20000", "-duration", "3s", "-settle-max", "30s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Report.Write(dir, io.Discard); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "ltm.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### Load", "### Reads", "### Space and memory", "GET uniform", "GET zipfian",
		"GET hot", "GET hot 20k keys, redis-server", "MGET 100 consecutive", "SCAN COUNT 1000", "ltm-rss-load.png", "ltm-latency-get.png"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("ltm.md lacks %q", want)
		}
	}
	for _, png := range []string{"ltm-rss-load.png", "ltm-rss-time.png", "ltm-latency-get.png", "ltm-latency-range.png"} {
		if fi, err := os.Stat(filepath.Join(dir, png)); err != nil || fi.Size() == 0 {
			t.Errorf("chart %s: %v", png, err)
		}
	}
	checkReadRows(t, string(md))
}

// checkReadRows: every read phase has non-zero throughput and
// p50 <= p99 <= p999.
func checkReadRows(t *testing.T, md string) {
	t.Helper()
	rows := 0
	for _, line := range strings.Split(md, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 10 || !strings.HasPrefix(cells[0], "GET") && !strings.HasPrefix(cells[0], "MGET") &&
			!strings.HasPrefix(cells[0], "SCAN") {
			continue
		}
		rows++
		f := make([]float64, 0, 4)
		for _, c := range cells[2:7] {
			v, err := strconv.ParseFloat(c, 64)
			if err != nil {
				t.Fatalf("row %q: cell %q: %v", line, c, err)
			}
			f = append(f, v)
		}
		cmdps, keysps, p50, p99, p999 := f[0], f[1], f[2], f[3], f[4]
		if cmdps <= 0 || keysps < cmdps || p50 <= 0 || p99 < p50 || p999 < p99 {
			t.Errorf("row %q: cmd/s %v keys/s %v p50 %v p99 %v p999 %v", line, cmdps, keysps, p50, p99, p999)
		}
	}
	if rows != 8 {
		t.Errorf("%d read rows, want 8 (6 phases, 2 on redis-server)", rows)
	}
}
