package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

func init() {
	register(experiment{
		name:  "matrix",
		about: "redis-benchmark side by side: redis-server (appendfsync always, everysec) and strata (durable, async)",
		run:   runMatrix,
	})
	register(experiment{
		name: "matrix-pinned",
		about: "the matrix with each server on CPU 0 and redis-benchmark on the other CPUs, " +
			"as a server with a core of its own and its clients elsewhere",
		run: func(ctx context.Context, env *Env, args []string) error {
			return runMatrix(ctx, env, append([]string{"-pin", "0:1-"}, args...))
		},
	})
}

// matrixServers are the four servers of the matrix, in table order: each
// strata mode is compared with the redis-server mode of the same promise
// (always: a reply means durable; everysec/async: a crash may lose the
// last moments).
var matrixServers = []struct {
	name  string
	start func(ctx context.Context, cpus string) (*Server, error)
}{
	{"redis always", func(ctx context.Context, cpus string) (*Server, error) { return StartRedisOn(ctx, cpus, "always") }},
	{"strata durable", func(ctx context.Context, cpus string) (*Server, error) {
		return StartStrataOn(ctx, cpus, nil, "--appendfsync", "always")
	}},
	{"redis everysec", func(ctx context.Context, cpus string) (*Server, error) { return StartRedisOn(ctx, cpus, "everysec") }},
	{"strata async", func(ctx context.Context, cpus string) (*Server, error) {
		return StartStrataOn(ctx, cpus, nil, "--appendfsync", "everysec")
	}},
}

// benchRow is one redis-benchmark test's result.
type benchRow struct {
	rps, p50, p99 float64 // requests/s, latency ms
	cpu           float64 // the server's CPU per request, µs (user + system); < 0: unknown
}

func runMatrix(ctx context.Context, env *Env, args []string) error {
	fs := flag.NewFlagSet("matrix", flag.ContinueOnError)
	n := fs.Int("n", 100000, "requests per test (-short: 10000)")
	clients := fs.Int("clients", 50, "redis-benchmark -c")
	tests := fs.String("tests", "set,get,incr,lpush,lpop,sadd,hset,zadd,lrange_100,mset", "redis-benchmark -t")
	pipelines := fs.String("pipelines", "1,16", "redis-benchmark -P values")
	rounds := fs.Int("rounds", 3, "rounds, each running every server; the tables show medians (-short: 1)")
	pin := fs.String("pin", "", "SERVER:CLIENT taskset CPU lists, e.g. 0:1- (a trailing - means to the last CPU); empty: no pinning")
	if err := fs.Parse(args); err != nil {
		return err
	}
	serverCPUs, clientCPUs, err := pinning(*pin)
	if err != nil {
		return err
	}
	if env.Short && !flagSet(fs, "n") {
		*n = 10000
	}
	if env.Short && !flagSet(fs, "rounds") {
		*rounds = 1
	}
	if *rounds < 1 {
		return fmt.Errorf("-rounds %d: want at least 1", *rounds)
	}
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		return fmt.Errorf("redis-benchmark not found (apt-get install redis-tools): %w", err)
	}
	// runs[server][pipeline][test]: one row per round. The servers take
	// turns within each round, so drift in the machine's load over the
	// minutes of a run falls on all four alike.
	runs := map[string]map[string]map[string][]benchRow{}
	var order []string // tests in redis-benchmark's order
	for round := 1; round <= *rounds; round++ {
		for _, s := range matrixServers {
			srv, err := s.start(ctx, serverCPUs)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			if runs[s.name] == nil {
				runs[s.name] = map[string]map[string][]benchRow{}
			}
			for _, p := range strings.Split(*pipelines, ",") {
				fmt.Fprintf(env.Log, "matrix: round %d/%d: %s -P %s\n", round, *rounds, s.name, p)
				rows, names, err := benchTests(ctx, srv, clientCPUs, *clients, *n, p, strings.Split(*tests, ","))
				if err != nil {
					srv.StopKeepingData()
					return fmt.Errorf("%s -P %s: %w", s.name, p, err)
				}
				if runs[s.name][p] == nil {
					runs[s.name][p] = map[string][]benchRow{}
				}
				for name, r := range rows {
					runs[s.name][p][name] = append(runs[s.name][p][name], r)
				}
				if len(names) > len(order) {
					order = names
				}
			}
			srv.StopKeepingData()
		}
	}
	// results[server][pipeline][test]
	results := map[string]map[string]map[string]benchRow{}
	for srv, byP := range runs {
		results[srv] = map[string]map[string]benchRow{}
		for p, byTest := range byP {
			results[srv][p] = map[string]benchRow{}
			for name, rs := range byTest {
				results[srv][p][name] = medianRow(rs)
			}
		}
	}
	where := "one machine, the servers and redis-benchmark sharing its CPUs"
	if *pin != "" {
		where = fmt.Sprintf("one machine, each server on CPU %s (strata's GOMAXPROCS follows), redis-benchmark on CPU %s", serverCPUs, clientCPUs)
	}
	matrixTables(env, results, order, strings.Split(*pipelines, ","), *clients, *n, *rounds, where)
	return nil
}

// pinning parses -pin SERVER:CLIENT; a list ending in "-" runs to the last
// CPU. Both lists must name CPUs this process may use.
func pinning(pin string) (server, client string, err error) {
	if pin == "" {
		return "", "", nil
	}
	server, client, ok := strings.Cut(pin, ":")
	if !ok || server == "" || client == "" {
		return "", "", fmt.Errorf("-pin %q: want SERVER:CLIENT CPU lists, e.g. 0:1-", pin)
	}
	last := runtime.NumCPU() - 1
	for _, l := range []*string{&server, &client} {
		if first, ok := strings.CutSuffix(*l, "-"); ok {
			if first == strconv.Itoa(last) {
				*l = first
			} else {
				*l += strconv.Itoa(last)
			}
		}
	}
	if last < 1 {
		return "", "", fmt.Errorf("-pin needs 2 CPUs, this machine has %d", last+1)
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return "", "", fmt.Errorf("-pin: taskset not found (util-linux): %w", err)
	}
	return server, client, nil
}

func roundsNote(rounds int) string {
	if rounds == 1 {
		return "one run"
	}
	return fmt.Sprintf("the median of %d rounds, the four servers taking turns in each", rounds)
}

// medianRow is the median of each figure of rs, taken separately.
func medianRow(rs []benchRow) benchRow {
	med := func(rs []benchRow, f func(benchRow) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	var known []benchRow // the rounds whose CPU is known
	for _, r := range rs {
		if r.cpu >= 0 {
			known = append(known, r)
		}
	}
	cpu := -1.0
	if len(known) > 0 {
		cpu = med(known, func(r benchRow) float64 { return r.cpu })
	}
	return benchRow{
		rps: med(rs, func(r benchRow) float64 { return r.rps }),
		p50: med(rs, func(r benchRow) float64 { return r.p50 }),
		p99: med(rs, func(r benchRow) float64 { return r.p99 }),
		cpu: cpu,
	}
}

// flagSet reports whether name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// benchTests runs redis-benchmark once per test against srv, so that the
// server's CPU time can be charged to each: rows by test name, and the names
// in order. An LRANGE test first runs an LPUSH of n requests to fill the
// list (redis-benchmark does that itself); its CPU is the invocation's less
// n times the LPUSH test's CPU per request, or unknown if the LPUSH test did
// not run before it. That LPUSH's own row is dropped once the LPUSH test has
// one, as redis-benchmark's single run of several tests dropped it.
func benchTests(ctx context.Context, srv *Server, cpus string, clients, n int, pipeline string, tests []string) (map[string]benchRow, []string, error) {
	all := map[string]benchRow{}
	var order []string
	for _, test := range tests {
		c0, ok0 := srv.cpuTime()
		rows, names, err := redisBenchmark(ctx, cpus, srv.Addr, clients, n, pipeline, test)
		if err != nil {
			return nil, nil, err
		}
		c1, ok1 := srv.cpuTime()
		used := -1.0
		if ok0 && ok1 {
			used = float64(c1-c0) / float64(time.Microsecond)
		}
		order = addRun(all, order, rows, names, used, n)
	}
	return all, order, nil
}

// addRun adds the rows of one redis-benchmark run, which used µs of server
// CPU (-1: unknown) over n requests per test, to all, skipping names it
// holds, and returns order with the new names appended.
func addRun(all map[string]benchRow, order []string, rows map[string]benchRow, names []string, used float64, n int) []string {
	lp, ok := all["LPUSH"] // measured by a run of its own, before this one
	if !ok {
		lp.cpu = -1
	}
	for _, name := range names {
		if _, dup := all[name]; dup {
			continue
		}
		r := rows[name]
		r.cpu = cpuPerRequest(name, used, n, lp.cpu)
		if len(names) > 1 && !strings.HasPrefix(name, "LRANGE") {
			r.cpu = -1 // an LRANGE run's filling LPUSH: its CPU is not its own
		}
		all[name] = r
		order = append(order, name)
	}
	return order
}

// cpuPerRequest charges used µs of server CPU, over a redis-benchmark run
// of test name with n requests, to each request: -1 if unknown. An LRANGE
// run also made n LPUSHes, at lpush µs each (-1: unknown).
func cpuPerRequest(name string, used float64, n int, lpush float64) float64 {
	switch {
	case used < 0 || n <= 0:
		return -1
	case !strings.HasPrefix(name, "LRANGE"):
		return used / float64(n)
	case lpush < 0:
		return -1
	}
	return max(used-lpush*float64(n), 0) / float64(n)
}

// redisBenchmark runs redis-benchmark --csv and returns its rows by test
// name (the first word: "LRANGE_100", "MSET") and the names in order.
func redisBenchmark(ctx context.Context, cpus, addr string, clients, n int, pipeline, tests string) (map[string]benchRow, []string, error) {
	host, port, _ := strings.Cut(addr, ":")
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	bin, args := onCPUs(cpus, "redis-benchmark", []string{"-h", host, "-p", port, "-c", strconv.Itoa(clients),
		"-n", strconv.Itoa(n), "-P", pipeline, "-t", tests, "-r", "100000", "--csv", "-q"})
	out, err := exec.CommandContext(ctx, bin, args...).Output()
	if err != nil {
		return nil, nil, err
	}
	recs, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("parsing redis-benchmark --csv: %w", err)
	}
	rows := map[string]benchRow{}
	var names []string
	for _, r := range recs {
		if len(r) < 7 || r[0] == "test" {
			continue
		}
		name, _, _ := strings.Cut(r[0], " ")
		if _, dup := rows[name]; dup {
			continue // "LPUSH (needed to benchmark LRANGE)": the LPUSH test again
		}
		var br benchRow
		br.rps, _ = strconv.ParseFloat(r[1], 64)
		br.p50, _ = strconv.ParseFloat(r[4], 64)
		br.p99, _ = strconv.ParseFloat(r[6], 64)
		rows[name] = br
		names = append(names, name)
	}
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("no rows in redis-benchmark output: %q", out)
	}
	return rows, names, nil
}

func matrixTables(env *Env, res map[string]map[string]map[string]benchRow, tests, pipelines []string, clients, n, rounds int, where string) {
	ratio := func(a, b float64) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2fx", a/b)
	}
	t := &Table{
		Title: "redis-benchmark requests/s, strata against redis-server of the same durability",
		Columns: []string{"test", "P", "redis always", "strata durable", "durable/always",
			"redis everysec", "strata async", "async/everysec"},
		Note: fmt.Sprintf("%d clients, %d requests per test, -r 100000, %s; %s; redis-server 7 with "+
			"appendonly yes. Aims (issue 8): async within 0.8x of everysec for GET/SET, durable at or above always.",
			clients, n, where, roundsNote(rounds)),
	}
	lat := &Table{
		Title:   "redis-benchmark latency p50 / p99 (ms)",
		Columns: []string{"test", "P", "redis always", "strata durable", "redis everysec", "strata async"},
	}
	cpu := &Table{
		Title: "server CPU per request (µs, user + system)",
		Columns: []string{"test", "P", "redis always", "strata durable", "durable/always",
			"redis everysec", "strata async", "async/everysec"},
		Note: "Each server's utime + stime from /proc over one redis-benchmark run of the test, divided by its " +
			"requests (every thread: Go's, io_uring's workers, redis-server's background threads); counted in 10 ms " +
			"ticks, so a test of a few hundred ms is good to a few percent. CPU per request moves less than " +
			"requests/s with the machine's speed. An LRANGE test's run starts with an LPUSH of as many requests, " +
			"whose CPU (the LPUSH test's per request) is taken off. strata/redis above 1.0 means strata spends more.",
	}
	us := func(b benchRow) string {
		if b.cpu < 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", b.cpu)
	}
	cpuRatio := func(a, b benchRow) string {
		if a.cpu < 0 || b.cpu <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.2fx", a.cpu/b.cpu)
	}
	var labels []string
	var durable, async []float64
	for _, p := range pipelines {
		for _, name := range tests {
			ra, sd := res["redis always"][p][name], res["strata durable"][p][name]
			re, sa := res["redis everysec"][p][name], res["strata async"][p][name]
			t.AddRow(name, p, int(ra.rps), int(sd.rps), ratio(sd.rps, ra.rps), int(re.rps), int(sa.rps), ratio(sa.rps, re.rps))
			pq := func(b benchRow) string { return fmt.Sprintf("%.3g / %.3g", b.p50, b.p99) }
			lat.AddRow(name, p, pq(ra), pq(sd), pq(re), pq(sa))
			cpu.AddRow(name, p, us(ra), us(sd), cpuRatio(sd, ra), us(re), us(sa), cpuRatio(sa, re))
			labels = append(labels, fmt.Sprintf("%s P%s", name, p))
			durable = append(durable, safeDiv(sd.rps, ra.rps))
			async = append(async, safeDiv(sa.rps, re.rps))
		}
	}
	env.Report.Table(t)
	env.Report.Table(lat)
	env.Report.Table(cpu)
	_ = env.Report.BarChart("ratios", "strata / redis-server requests/s (1.0 = parity)", "ratio",
		Series{Name: "durable / always", Y: durable, Labels: labels},
		Series{Name: "async / everysec", Y: async, Labels: labels})
}

func safeDiv(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
