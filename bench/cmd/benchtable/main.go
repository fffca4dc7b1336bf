// Command benchtable reads `go test -bench` output on stdin and prints one
// table comparing Strata with Pebble: a row per benchmark and metric, with
// the engine's path element ("strata" or "pebble") taken out of the name.
// Benchmarks that only one engine runs get "-" in the other column. With
// -count > 1 each cell is the median of the runs.
//
//	go test -bench . | go run ./cmd/benchtable
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

var engines = []string{"strata", "pebble"}

// row is one benchmark and metric; samples are keyed by engine.
type row struct {
	bench, unit string
	samples     map[string][]float64
}

// table keeps rows in the order they first appear.
type table struct {
	rows  []*row
	index map[[2]string]*row
}

var procSuffix = regexp.MustCompile(`-\d+$`)

func main() {
	passthrough := flag.Bool("v", false, "copy the input to stderr while reading it")
	flag.Parse()
	var in io.Reader = os.Stdin
	if *passthrough {
		in = io.TeeReader(os.Stdin, os.Stderr)
	}
	t, err := parse(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	if len(t.rows) == 0 {
		fmt.Fprintln(os.Stderr, "benchtable: no benchmark results in the input")
		os.Exit(1)
	}
	t.print(os.Stdout)
}

// parse reads benchmark result lines: name, iterations, then value-unit pairs.
func parse(r io.Reader) (*table, error) {
	t := &table{index: map[[2]string]*row{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			continue
		}
		bench, engine := splitEngine(procSuffix.ReplaceAllString(strings.TrimPrefix(f[0], "Benchmark"), ""))
		units := map[string]float64{}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("bad value %q in %q", f[i], sc.Text())
			}
			units[f[i+1]] = v
		}
		for _, u := range orderUnits(units) {
			t.add(bench, u, engine, units[u])
		}
	}
	return t, sc.Err()
}

// splitEngine removes the engine element from a benchmark name. A name with
// none belongs to Strata (the Strata-only benchmarks).
func splitEngine(name string) (bench, engine string) {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		if slices.Contains(engines, p) {
			return strings.Join(slices.Delete(parts, i, i+1), "/"), p
		}
	}
	return name, "strata"
}

// orderUnits puts rates first. ns/op is kept only for a benchmark that
// reports nothing else: its own metrics say more (a rate says the same, and
// the Strata-only benchmarks time whole runs).
func orderUnits(units map[string]float64) []string {
	var rates, others []string
	for u := range units {
		if strings.HasSuffix(u, "/s") {
			rates = append(rates, u)
		} else if u != "ns/op" {
			others = append(others, u)
		}
	}
	slices.Sort(rates)
	slices.Sort(others)
	out := rates
	if _, ok := units["ns/op"]; ok && len(rates)+len(others) == 0 {
		out = append(out, "ns/op")
	}
	return append(out, others...)
}

func (t *table) add(bench, unit, engine string, v float64) {
	k := [2]string{bench, unit}
	r := t.index[k]
	if r == nil {
		r = &row{bench: bench, unit: unit, samples: map[string][]float64{}}
		t.index[k] = r
		t.rows = append(t.rows, r)
	}
	r.samples[engine] = append(r.samples[engine], v)
}

func (t *table) print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "benchmark\tmetric\tstrata\tpebble\tstrata/pebble\t")
	for _, r := range t.rows {
		s, sok := median(r.samples["strata"])
		p, pok := median(r.samples["pebble"])
		ratio := "-"
		if sok && pok && p != 0 {
			ratio = strconv.FormatFloat(s/p, 'f', 2, 64)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", r.bench, r.unit, cell(s, sok), cell(p, pok), ratio)
	}
	tw.Flush()
}

func median(v []float64) (float64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2], true
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2, true
}

// cell formats a value with about three significant digits.
func cell(v float64, ok bool) string {
	switch {
	case !ok:
		return "-"
	case v >= 100 || v <= -100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10 || v <= -10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
