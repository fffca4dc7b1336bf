package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestCrashShort runs the crash campaign's CI version: 5 SIGKILL cycles on
// local disk and 2 on MinIO under 16 writers, every acknowledged write
// checked after each restart.
func TestCrashShort(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	log := &strings.Builder{}
	res, err := runCrash(ctx, []string{"-short"}, log)
	t.Log("\n" + log.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res.Summary("crash"))
	for _, f := range res.Failures {
		t.Error(f)
	}
	if res.Failed > 0 || res.Passed == 0 {
		t.Fatalf("crash: %d passed, %d failed", res.Passed, res.Failed)
	}
}
