package main

import (
	"context"
	"io"
	"strings"
	"testing"
)

// TestCostShort runs the cost experiment's -short version and checks its
// tables: a row per run with writes and reads served, p99 ≥ p50, WAL PUTs
// at a 50ms flush interval bounded by 20/s, and a priced row per write and
// read setting.
func TestCostShort(t *testing.T) {
	if testing.Short() {
		t.Skip("runs strata servers under steady load on a slowed object store")
	}
	env := &Env{Out: t.TempDir(), Short: true, Log: io.Discard, Report: newReport("cost", "test")}
	if err := runCost(context.Background(), env, nil); err != nil {
		t.Fatal(err)
	}
	var md strings.Builder
	if err := env.Report.Write(env.Out, &md); err != nil {
		t.Fatal(err)
	}
	writes, reads := tableRows(t, md.String(), "Object-store requests per 1M durable"), tableRows(t, md.String(), "Object-store requests per 1M point")
	monthly := tableRows(t, md.String(), "Monthly")
	if len(writes) != 2 || len(reads) != 2 || len(monthly) != 4 {
		t.Fatalf("%d write, %d read, %d cost rows; want 2, 2, 4:\n%s", len(writes), len(reads), len(monthly), md.String())
	}
	for _, r := range append(writes, reads...) {
		if served, p50, p99 := num(t, r[2]), num(t, r[3]), num(t, r[4]); served <= 0 || p50 <= 0 || p99 < p50 {
			t.Errorf("row %v: served %v/s, p50 %v, p99 %v", r, served, p50, p99)
		}
	}
	if r := writes[1]; r[0] != "flush interval 50ms" || num(t, r[5]) > 21 || num(t, r[7]) < num(t, r[8]) {
		t.Errorf("50ms row %v: want at most 20 WAL PUTs/s, and no more WAL PUTs than PUTs", r)
	}
	for _, r := range monthly {
		if !strings.HasPrefix(r[9], "$") || r[9] == "$0" {
			t.Errorf("cost row %v: total %q", r, r[9])
		}
	}
}
