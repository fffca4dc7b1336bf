package inspect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/keyspace"
	"github.com/stratakv/strata/manifest"
)

// LoadManifest loads manifest id, or the latest one if id is 0 (manifest ids
// start at 1).
func LoadManifest(ctx context.Context, bkt objstore.Bucket, id uint64) (*manifest.Manifest, error) {
	st := manifest.NewStore(bkt)
	if id == 0 {
		return st.Latest(ctx)
	}
	return st.Load(ctx, id)
}

// WriteManifest prints m: its fields, the shape line, then L0 and every run
// with each SST's size, entry count, seq range and key range.
func WriteManifest(w io.Writer, m *manifest.Manifest) {
	fmt.Fprintf(w, "manifest %d (%s)\n", m.ID, blob.ManifestName(m.ID))
	fmt.Fprintf(w, "writer_epoch %d  compactor_epoch %d\n", m.WriterEpoch, m.CompactorEpoch)
	fmt.Fprintf(w, "clock_tick %s\n", formatTick(m.ClockTick))
	fmt.Fprintf(w, "replay_after_wal_id %d  next_wal_id %d  last_seq %d  next_run_id %d\n",
		m.ReplayAfterWALID, m.NextWALID, m.LastSeq, m.NextRunID)
	fmt.Fprintln(w, Shape(m))
	fmt.Fprintf(w, "L0: %d SSTs, %s (newest first)\n", len(m.L0), FormatBytes(sstBytes(m.L0)))
	writeSSTs(w, m.L0)
	for _, r := range m.Runs {
		fmt.Fprintf(w, "run %d: %d SSTs, %s\n", r.ID, len(r.SSTs), FormatBytes(sstBytes(r.SSTs)))
		writeSSTs(w, r.SSTs)
	}
}

func writeSSTs(w io.Writer, ssts []manifest.SST) {
	for _, s := range ssts {
		st := &s.Stats
		fmt.Fprintf(w, "  %s  %s  entries %d  tombstones %d  seq %d..%d\n",
			blob.SSTName(s.ID), FormatBytes(int64(s.Size)), st.Entries, st.Tombstones, st.MinSeq, st.MaxSeq)
		fmt.Fprintf(w, "    from %s\n    to   %s\n", keyspace.DescribeKey(st.Smallest), keyspace.DescribeKey(st.Largest))
	}
}

// Shape is the LSM's shape on one line: L0, each run, and the totals.
func Shape(m *manifest.Manifest) string {
	var b strings.Builder
	all := m.AllSSTs()
	var entries uint64
	for _, s := range all {
		entries += s.Stats.Entries
	}
	fmt.Fprintf(&b, "shape: L0 %d SSTs %s | %d runs", len(m.L0), FormatBytes(sstBytes(m.L0)), len(m.Runs))
	if len(m.Runs) > 0 {
		runs := make([]string, len(m.Runs))
		for i, r := range m.Runs {
			runs[i] = fmt.Sprintf("r%d %d×%s", r.ID, len(r.SSTs), FormatBytes(sstBytes(r.SSTs)))
		}
		fmt.Fprintf(&b, " [%s]", strings.Join(runs, ", "))
	}
	fmt.Fprintf(&b, " | total %d SSTs, %s, %d entries", len(all), FormatBytes(sstBytes(all)), entries)
	return b.String()
}

func sstBytes(ssts []manifest.SST) int64 {
	var n int64
	for _, s := range ssts {
		n += int64(s.Size)
	}
	return n
}

// HistoryEntry is one manifest object of the bucket.
type HistoryEntry struct {
	ID       uint64
	Modified time.Time // zero if the store does not say
	Size     int64
	Manifest *manifest.Manifest // nil if Err
	Err      error              // the manifest did not load
}

// History lists every manifest in the bucket, oldest first, loading each.
// A manifest that does not load is listed with its error.
func History(ctx context.Context, bkt objstore.Bucket) ([]HistoryEntry, error) {
	ids, err := manifestIDs(ctx, bkt)
	if err != nil {
		return nil, err
	}
	st := manifest.NewStore(bkt)
	out := make([]HistoryEntry, 0, len(ids))
	for _, id := range ids {
		e := HistoryEntry{ID: id}
		if a, err := bkt.Attributes(ctx, blob.ManifestName(id)); err == nil {
			e.Modified, e.Size = a.LastModified, a.Size
		}
		e.Manifest, e.Err = st.Load(ctx, id)
		if errors.Is(e.Err, manifest.ErrNotFound) {
			continue // collected between the listing and the read
		}
		out = append(out, e)
	}
	return out, nil
}

// WriteHistory prints History's entries, one line each.
func WriteHistory(w io.Writer, entries []HistoryEntry) {
	for _, e := range entries {
		when := "-"
		if !e.Modified.IsZero() {
			when = e.Modified.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%6d  %s  %9s  ", e.ID, when, FormatBytes(e.Size))
		if e.Err != nil {
			fmt.Fprintf(w, "ERROR %v\n", e.Err)
			continue
		}
		m := e.Manifest
		fmt.Fprintf(w, "epochs w%d/c%d  L0 %d  runs %d  ssts %d  last_seq %d  replay_after_wal %d\n",
			m.WriterEpoch, m.CompactorEpoch, len(m.L0), len(m.Runs), len(m.AllSSTs()), m.LastSeq, m.ReplayAfterWALID)
	}
}

// manifestIDs lists the ids of the manifests in the bucket, ascending.
func manifestIDs(ctx context.Context, bkt objstore.Bucket) ([]uint64, error) {
	var ids []uint64
	err := bkt.Iter(ctx, blob.ManifestDir, func(name string) error {
		if id, ok := blob.ParseManifestName(name); ok {
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("inspect: list %s: %w", blob.ManifestDir, err)
	}
	slices.Sort(ids)
	return ids, nil
}
