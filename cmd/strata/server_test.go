package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1024": 1024, "10k": 10_000, "10kb": 10 << 10, "5mb": 5 << 20,
		"5M": 5_000_000, "1gb": 1 << 30, "2g": 2_000_000_000, "7b": 7} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "mb", "-1", "1.5mb", "ten"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) accepted", bad)
		}
	}
}

// TestServerArgs: a config file sets what it names, flags after it win, and
// a mistake in the file names the file, line and setting.
func TestServerArgs(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "strata.conf")
	os.WriteFile(conf, []byte("# comment\n\nport 7000\nbind \"127.0.0.1 ::1\"\nAPPENDFSYNC everysec\ncompaction off\nwal-flush-interval 50ms\n"), 0o644)
	f, err := parseServerArgs([]string{conf, "--port", "7001"})
	if err != nil {
		t.Fatal(err)
	}
	if f.port != 7001 || f.bind != "127.0.0.1 ::1" || f.appendFsync != "everysec" || f.compaction != "off" ||
		f.walFlushInterval != "50ms" || f.dir != "./data" {
		t.Errorf("parsed %+v", *f)
	}
	os.WriteFile(conf, []byte("port 7000\nmaxmemory 1gb\n"), 0o644)
	if _, err := parseServerArgs([]string{conf}); err == nil || !strings.Contains(err.Error(), "strata.conf:2") ||
		!strings.Contains(err.Error(), "maxmemory") {
		t.Errorf("unknown setting: %v", err)
	}
	os.WriteFile(conf, []byte("port seven\n"), 0o644)
	if _, err := parseServerArgs([]string{conf}); err == nil || !strings.Contains(err.Error(), "strata.conf:1") {
		t.Errorf("bad value: %v", err)
	}
	if _, err := parseServerArgs([]string{"--port", "1", "extra"}); err == nil {
		t.Error("a stray argument after the flags was accepted")
	}
}

// TestWALInterval: auto PUTs at once under always and once a second under
// everysec; an explicit duration wins over both; nonsense is refused.
func TestWALInterval(t *testing.T) {
	for _, c := range []struct {
		fsync, interval string
		want            time.Duration
	}{
		{"always", "auto", 0},
		{"everysec", "auto", time.Second},
		{"everysec", "0", 0},
		{"always", "50ms", 50 * time.Millisecond},
	} {
		f := &serverFlags{appendFsync: c.fsync, walFlushInterval: c.interval}
		if got, err := f.walInterval(); err != nil || got != c.want {
			t.Errorf("appendfsync %s, interval %s: got %v, %v; want %v", c.fsync, c.interval, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "fast", "-1s", "10"} {
		f := &serverFlags{appendFsync: "always", walFlushInterval: bad}
		if _, err := f.walInterval(); err == nil {
			t.Errorf("interval %q accepted", bad)
		}
	}
}
