package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMatrixShort runs the matrix on two tests and checks every server got
// a throughput for each, and the report was written with its chart.
func TestMatrixShort(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server, strata and redis-benchmark")
	}
	dir := t.TempDir()
	env := &Env{Out: dir, Short: true, Log: io.Discard, Report: newReport("matrix", "test")}
	if err := runMatrix(context.Background(), env, []string{"-n", "2000", "-tests", "set,get", "-rounds", "2"}); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := env.Report.Write(dir, &out); err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"| SET | 1 |", "| GET | 1 |", "| SET | 16 |", "| GET | 16 |"} {
		line := ""
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, row) && strings.Contains(l, "x |") {
				line = l
			}
		}
		if line == "" || strings.Contains(line, "| 0 |") {
			t.Errorf("no full row %q:\n%s", row, out.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "matrix-ratios.png")); err != nil {
		t.Error(err)
	}
	// The CPU table has a figure for every server in every row: "-"
	// would mean /proc was not read, or was read for another process.
	for _, row := range []string{"| SET | 1 |", "| GET | 1 |", "| SET | 16 |", "| GET | 16 |"} {
		cpuRow := ""
		inCPU := false
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.Contains(l, "server CPU per request") {
				inCPU = true
			}
			if inCPU && strings.HasPrefix(l, row) {
				cpuRow = l
				break
			}
		}
		cells := strings.Split(cpuRow, "|")
		if len(cells) < 9 {
			t.Errorf("no CPU row %q:\n%s", row, out.String())
			continue
		}
		for _, i := range []int{3, 4, 6, 7} { // the four servers' µs per request
			if _, err := strconv.ParseFloat(strings.TrimSpace(cells[i]), 64); err != nil {
				t.Errorf("CPU row %q: cell %d is %q, not a figure", row, i, cells[i])
			}
		}
	}
	if !strings.Contains(out.String(), "the median of 2 rounds") {
		t.Errorf("the note does not say the figures are medians of 2 rounds:\n%s", out.String())
	}
}

// TestMatrixPinned runs the pinned matrix on one test: the servers and
// redis-benchmark run under taskset, and the note says where.
func TestMatrixPinned(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server, strata and redis-benchmark")
	}
	if runtime.NumCPU() < 2 {
		t.Skip("needs 2 CPUs")
	}
	dir := t.TempDir()
	env := &Env{Out: dir, Short: true, Log: io.Discard, Report: newReport("matrix-pinned", "test")}
	if err := runMatrix(context.Background(), env, []string{"-pin", "0:1-", "-n", "2000", "-tests", "set", "-pipelines", "1"}); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := env.Report.Write(dir, &out); err != nil {
		t.Fatal(err)
	}
	clients := "1"
	if runtime.NumCPU() > 2 {
		clients = fmt.Sprintf("1-%d", runtime.NumCPU()-1)
	}
	want := "each server on CPU 0 (strata's GOMAXPROCS follows), redis-benchmark on CPU " + clients
	if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "| SET | 1 |") {
		t.Errorf("report lacks %q or its SET row:\n%s", want, out.String())
	}
}

func TestPinning(t *testing.T) {
	last := runtime.NumCPU() - 1
	if last < 1 {
		t.Skip("needs 2 CPUs")
	}
	want := fmt.Sprintf("1-%d", last)
	if last == 1 {
		want = "1"
	}
	s, c, err := pinning("0:1-")
	if err != nil || s != "0" || c != want {
		t.Errorf("pinning(0:1-) = %q, %q, %v; want 0, %s", s, c, err, want)
	}
	if s, c, err := pinning(""); s != "" || c != "" || err != nil {
		t.Errorf("pinning(\"\") = %q, %q, %v: want no pinning", s, c, err)
	}
	for _, bad := range []string{"0", ":1", "0:"} {
		if _, _, err := pinning(bad); err == nil {
			t.Errorf("pinning(%q) accepted", bad)
		}
	}
}

// TestStopKeepingData: a server stopped with StopKeepingData leaves its
// data directory (so deleting it cannot slow the next server's file
// creations) until removeKept, which cleanupAtExit calls; Stop removes it
// at once.
func TestStopKeepingData(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	ctx := context.Background()
	keep, err := StartRedis(ctx, "everysec")
	if err != nil {
		t.Skip(err)
	}
	gone, err := StartRedis(ctx, "everysec")
	if err != nil {
		keep.Stop()
		t.Fatal(err)
	}
	keep.StopKeepingData()
	gone.Stop()
	if _, err := os.Stat(keep.Dir); err != nil {
		t.Fatalf("StopKeepingData removed its data directory: %v", err)
	}
	if _, err := os.Stat(gone.Dir); !os.IsNotExist(err) {
		t.Fatalf("Stop left its data directory: %v", err)
	}
	removeKept()
	if _, err := os.Stat(keep.Dir); !os.IsNotExist(err) {
		t.Fatalf("removeKept left a kept data directory: %v", err)
	}
}

// TestMedianRow: each figure's median is taken on its own.
func TestMedianRow(t *testing.T) {
	odd := medianRow([]benchRow{{rps: 3, p50: 9, p99: 1}, {rps: 1, p50: 8, p99: 7}, {rps: 2, p50: 7, p99: 4}})
	if odd != (benchRow{rps: 2, p50: 8, p99: 4}) {
		t.Errorf("median of 3 = %+v", odd)
	}
	even := medianRow([]benchRow{{rps: 4, p50: 1, p99: 2}, {rps: 2, p50: 3, p99: 6}})
	if even != (benchRow{rps: 3, p50: 2, p99: 4}) {
		t.Errorf("median of 2 = %+v", even)
	}
}

// TestCPUPerRequest checks how a run's server CPU is charged to requests,
// an LRANGE run's less the LPUSHes that fill its list.
func TestCPUPerRequest(t *testing.T) {
	for _, c := range []struct {
		name        string
		used        float64
		n           int
		lpush, want float64
	}{
		{"SET", 2000, 100, -1, 20},
		{"SET", -1, 100, 5, -1}, // the server's CPU unknown
		{"LRANGE_100", 3000, 100, 10, 20},
		{"LRANGE_100", 3000, 100, -1, -1}, // no LPUSH figure to take off
		{"LRANGE_600", 500, 100, 10, 0},   // the LPUSHes' share over the whole: 0, not negative
		{"GET", 0, 0, -1, -1},
	} {
		if got := cpuPerRequest(c.name, c.used, c.n, c.lpush); got != c.want {
			t.Errorf("cpuPerRequest(%q, %v, %d, %v) = %v, want %v", c.name, c.used, c.n, c.lpush, got, c.want)
		}
	}
}

// TestProcCPU reads this process's CPU time before and after spinning for
// 100 ms: it must grow, and a process that does not exist has none.
func TestProcCPU(t *testing.T) {
	c0, ok := procCPU(os.Getpid())
	if !ok {
		t.Fatal("procCPU of this process: not ok")
	}
	x := 0
	for start := time.Now(); time.Since(start) < 100*time.Millisecond; {
		x++
	}
	c1, _ := procCPU(os.Getpid())
	if got := c1 - c0; got < 50*time.Millisecond {
		t.Errorf("100 ms of spinning (%d loops) counted as %v of CPU", x, got)
	}
	if _, ok := procCPU(1 << 30); ok {
		t.Error("procCPU of a pid that cannot exist: ok")
	}
}

// TestAddRun charges runs' CPU to their tests: an LRANGE run's less the
// LPUSH test's per request, its filling LPUSH row dropped; without an LPUSH
// test before it, neither row has a figure.
func TestAddRun(t *testing.T) {
	all := map[string]benchRow{}
	var order []string
	order = addRun(all, order, map[string]benchRow{"LPUSH": {rps: 9}}, []string{"LPUSH"}, 1000, 100)
	order = addRun(all, order, map[string]benchRow{"LPUSH": {rps: 8}, "LRANGE_100": {rps: 7}},
		[]string{"LPUSH", "LRANGE_100"}, 3000, 100)
	if want := []string{"LPUSH", "LRANGE_100"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if r := all["LPUSH"]; r.rps != 9 || r.cpu != 10 {
		t.Errorf("LPUSH %+v, want the LPUSH test's row at 10 µs", r)
	}
	if r := all["LRANGE_100"]; r.rps != 7 || r.cpu != 20 {
		t.Errorf("LRANGE_100 %+v, want (3000 - 100×10) / 100 = 20 µs", r)
	}

	alone := map[string]benchRow{}
	addRun(alone, nil, map[string]benchRow{"LPUSH": {rps: 8}, "LRANGE_100": {rps: 7}},
		[]string{"LPUSH", "LRANGE_100"}, 3000, 100)
	if alone["LPUSH"].cpu != -1 || alone["LRANGE_100"].cpu != -1 {
		t.Errorf("LRANGE without an LPUSH test: %+v, want both CPU figures unknown", alone)
	}
}
