package main

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm"
	"github.com/stratakv/strata/resp"
)

// openDiskCache wraps bkt with the --disk-cache cache, or returns bkt and a
// nil cache when the flag is empty. bkt must already be instrumented, so
// that object-store request metrics count only the requests the cache
// could not serve.
func openDiskCache(f *serverFlags, bkt objstore.Bucket, logger *slog.Logger) (objstore.Bucket, *blob.DiskCache, error) {
	if f.diskCache == "" {
		return bkt, nil, nil
	}
	size, err := parseSize(f.diskCacheSize)
	if err == nil && size == 0 {
		err = errors.New("must be positive")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("disk-cache-size: %v", err)
	}
	if dir, ok := f.bucketFlags.localDir(); ok {
		inside, err := within(dir, f.diskCache)
		if err != nil {
			return nil, nil, fmt.Errorf("disk-cache: %v", err)
		}
		if inside {
			return nil, nil, fmt.Errorf("disk-cache %s is inside the bucket directory %s: its files would be taken for objects", f.diskCache, dir)
		}
	}
	dc, err := blob.NewDiskCache(bkt, blob.DiskCacheOptions{Dir: f.diskCache, MaxBytes: size})
	if err != nil {
		return nil, nil, err
	}
	st := dc.Stats()
	logger.Info("disk cache opened", "dir", f.diskCache, "size", f.diskCacheSize, "files", st.Files,
		"bytes", st.Bytes, "evicted", st.Evictions)
	return dc, dc, nil
}

// within reports whether path is dir or lies under it.
func within(dir, path string) (bool, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return false, err
	}
	p, err := filepath.Abs(path)
	if err != nil {
		return false, err
	}
	rel, err := filepath.Rel(d, p)
	if err != nil {
		return false, nil // on another volume
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)), nil
}

// diskCacheFigures are the disk cache's figures for INFO and /metrics.
func diskCacheFigures(s blob.DiskCacheStats) []lsm.Figure {
	counter, gauge := lsm.CounterFigure, lsm.GaugeFigure[int64]
	return []lsm.Figure{
		counter("disk_cache_hits", "Object parts read from the disk cache.", s.Hits),
		counter("disk_cache_misses", "Object parts the disk cache fetched from the bucket.", s.Misses),
		counter("disk_cache_fetches", "Ranged reads the disk cache made of the bucket (one per run of missing parts).", s.Fetches),
		counter("disk_cache_fetched_bytes", "Bytes the disk cache read from the bucket.", s.FetchedBytes),
		counter("disk_cache_written_parts", "Parts written through to the disk cache by uploads.", s.WrittenParts),
		counter("disk_cache_evictions", "Parts evicted from the disk cache to stay within its size.", s.Evictions),
		counter("disk_cache_bad_parts", "Disk cache part files found torn or corrupt, deleted and fetched again.", s.BadParts),
		gauge("disk_cache_bytes", "Bytes of disk cache part files.", s.Bytes),
		gauge("disk_cache_files", "Disk cache part files.", s.Files),
		gauge("disk_cache_capacity_bytes", "Disk cache size limit.", s.Capacity),
	}
}

// diskCacheInfo is INFO's Diskcache section.
func diskCacheInfo(dc *blob.DiskCache) resp.InfoSection {
	if dc == nil {
		return resp.InfoSection{Name: "Diskcache", Fields: [][2]string{{"disk_cache", "off"}}}
	}
	return resp.InfoSection{Name: "Diskcache",
		Fields: append([][2]string{{"disk_cache", "on"}}, resp.FigureFields(diskCacheFigures(dc.Stats()))...)}
}
