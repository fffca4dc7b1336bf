package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestFenceShort runs the fencing campaign's CI version: 2 takeovers of a
// loaded bucket on local disk and 2 on MinIO.
func TestFenceShort(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	log := &strings.Builder{}
	res, err := runFence(ctx, []string{"-short"}, log)
	t.Log("\n" + log.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res.Summary("fence"))
	for _, f := range res.Failures {
		t.Error(f)
	}
	if res.Failed > 0 || res.Passed == 0 {
		t.Fatalf("fence: %d passed, %d failed", res.Passed, res.Failed)
	}
}
