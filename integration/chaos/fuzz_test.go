package main

import (
	"bytes"
	"context"
	"testing"
)

// TestFuzzShort runs the bad-input campaign's CI version: the server must
// survive the load, answer the control probes, keep its memory bounded,
// and word its errors as redis-server does.
func TestFuzzShort(t *testing.T) {
	var log bytes.Buffer
	res, err := runFuzz(context.Background(), []string{"-short"}, &log)
	if err != nil {
		t.Fatalf("fuzz: %v\n%s", err, log.String())
	}
	t.Log(res.Summary("fuzz"))
	for _, f := range res.Failures {
		t.Errorf("FAIL: %s", f)
	}
	if res.Failed > 0 || res.Passed == 0 {
		t.Fatalf("%s\n%s", res.Summary("fuzz"), log.String())
	}
}
