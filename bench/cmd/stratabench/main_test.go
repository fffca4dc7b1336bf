package main

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestMain removes what the experiments leave for the end of a run: the
// strata build and the data directories of stopped servers.
func TestMain(m *testing.M) {
	code := m.Run()
	cleanupAtExit()
	os.Exit(code)
}

// TestSplitCommonFlags: -out and -short are taken wherever they stand,
// and every other argument reaches the experiment in its order. Before,
// an experiment flag before them ("latency -delays 20ms") was refused.
func TestSplitCommonFlags(t *testing.T) {
	for _, tc := range []struct{ args, common, rest string }{
		{"-delays 20ms -out d", "-out d", "-delays 20ms"},
		{"-out d -short -delays 20ms", "-out d -short", "-delays 20ms"},
		{"--out=d -n 5 --short=false", "--out=d --short=false", "-n 5"},
		{"-n 5 -- -out x", "", "-n 5 -out x"},
		{"", "", ""},
	} {
		common, rest := splitCommonFlags(strings.Fields(tc.args))
		if !slices.Equal(common, strings.Fields(tc.common)) || !slices.Equal(rest, strings.Fields(tc.rest)) {
			t.Errorf("%q: common %q, rest %q; want %q, %q", tc.args, common, rest, tc.common, tc.rest)
		}
	}
}

// TestFailedRunKeepsResults: an experiment that fails (here at its flags,
// as `stratabench matrix -h` does) leaves the results of the last good run
// alone. It used to overwrite matrix.md with an empty report.
func TestFailedRunKeepsResults(t *testing.T) {
	dir := t.TempDir()
	good := []byte("## matrix\n\nthe last good run\n")
	if err := os.WriteFile(dir+"/matrix.md", good, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := run([]string{"matrix", "-out", dir, "-no-such-flag"}); code == 0 {
		t.Fatal("a run with a bad flag succeeded")
	}
	got, err := os.ReadFile(dir + "/matrix.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(good) {
		t.Fatalf("matrix.md overwritten by a failed run:\n%s", got)
	}
}
