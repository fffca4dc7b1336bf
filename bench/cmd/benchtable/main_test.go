package main

import (
	"strings"
	"testing"
)

const sample = `goos: linux
BenchmarkFill/seq/strata/writers=16-2     	    5000	    250000 ns/op	      4000 ops/s	       900.0 p50-us	      2.50 writes/walput
BenchmarkFill/seq/pebble/writers=16-2     	   10000	    125000 ns/op	      8000 ops/s	       450.0 p50-us
BenchmarkGet/cold/strata-2                	  100000	     10000 ns/op
BenchmarkGet/cold/strata-2                	  100000	     30000 ns/op
BenchmarkGet/cold/strata-2                	  100000	     20000 ns/op
BenchmarkGet/cold/pebble-2                	  100000	      5000 ns/op
BenchmarkRecovery-2                       	       1	  12000000 ns/op	        12.00 open-ms
--- FAIL: BenchmarkBroken
PASS
`

func TestParseAndPrint(t *testing.T) {
	tb, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	tb.print(&out)
	// Compare with runs of spaces collapsed: column widths are not the point.
	var lines []string
	for _, l := range strings.Split(out.String(), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{
		"Fill/seq/writers=16 ops/s 4000 8000 0.50",
		"Fill/seq/writers=16 p50-us 900 450 2.00",
		"Fill/seq/writers=16 writes/walput 2.50 - -",
		"Get/cold ns/op 20000 5000 4.00", // median of three
		"Recovery open-ms 12.0 - -",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "writers=16 ns/op") || strings.Contains(got, "Recovery ns/op") {
		t.Errorf("ns/op shown beside other metrics:\n%s", got)
	}
}
