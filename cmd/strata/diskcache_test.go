package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratakv/strata/blob"
)

// TestDiskCacheSettings: the settings parse from a config file, a cache
// directory inside a local bucket is refused, and one beside it is not.
func TestDiskCacheSettings(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "strata.conf")
	os.WriteFile(conf, []byte("disk-cache /var/cache/strata\ndisk-cache-size 10mb\n"), 0o644)
	f, err := parseServerArgs([]string{conf})
	if err != nil {
		t.Fatal(err)
	}
	if f.diskCache != "/var/cache/strata" || f.diskCacheSize != "10mb" {
		t.Errorf("parsed disk-cache %q, disk-cache-size %q", f.diskCache, f.diskCacheSize)
	}
	if f, _ := parseServerArgs(nil); f.diskCache != "" || f.diskCacheSize != "1gb" {
		t.Errorf("defaults: disk-cache %q, disk-cache-size %q", f.diskCache, f.diskCacheSize)
	}

	data := filepath.Join(dir, "data")
	logger := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"--dir", data, "--disk-cache", filepath.Join(data, "cache")}, false},
		{[]string{"--dir", data, "--disk-cache", data}, false},
		{[]string{"--bucket", "file://" + data, "--disk-cache", filepath.Join(data, "sst")}, false},
		{[]string{"--bucket", data, "--disk-cache", filepath.Join(data, "x", "..", "y")}, false},
		{[]string{"--dir", data, "--disk-cache", data + "-cache"}, true},
		{[]string{"--dir", data, "--disk-cache", filepath.Join(dir, "cache")}, true},
		{[]string{"--bucket", "mem://", "--disk-cache", filepath.Join(data, "cache")}, true},
		{[]string{"--disk-cache", filepath.Join(dir, "c0"), "--disk-cache-size", "0"}, false},
		{[]string{"--disk-cache", filepath.Join(dir, "c1"), "--disk-cache-size", "lots"}, false},
		{[]string{"--dir", data}, true}, // off
	} {
		f, err := parseServerArgs(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		bkt, dc, err := openDiskCache(f, blob.NewMemBucket(), logger)
		if (err == nil) != tc.ok {
			t.Errorf("%v: err %v, want ok=%v", tc.args, err, tc.ok)
		}
		if err == nil && (dc != nil) != (f.diskCache != "") || dc != nil && bkt != dc {
			t.Errorf("%v: cache %v, bucket %T", tc.args, dc, bkt)
		}
	}
	if sec := diskCacheInfo(nil); len(sec.Fields) != 1 || sec.Fields[0] != [2]string{"disk_cache", "off"} {
		t.Errorf("INFO section without a cache: %+v", sec)
	}
	for _, fig := range diskCacheFigures(blob.DiskCacheStats{}) {
		if !strings.HasPrefix(fig.Name, "disk_cache_") || fig.Help == "" {
			t.Errorf("figure %+v", fig)
		}
	}
}
