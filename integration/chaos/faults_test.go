package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestFaultsShort runs the faults campaign's CI version: 20 s of load on a
// store where 5% of calls fail and 1% take 2 s, every acknowledged write
// checked through the faulty server and after a restart without faults;
// then MinIO stopped for 5 s under load, the same server taking writes
// again once it is back.
func TestFaultsShort(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	log := &strings.Builder{}
	res, err := runFaults(ctx, []string{"-short"}, log)
	t.Log("\n" + log.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res.Summary("faults"))
	for _, f := range res.Failures {
		t.Error(f)
	}
	if res.Failed > 0 || res.Passed == 0 {
		t.Fatalf("faults: %d passed, %d failed", res.Passed, res.Failed)
	}
}
