package compactor

import "github.com/stratakv/strata/lsm"

// Figures returns the statistics as the figures INFO and /metrics show
// (see lsm.Figure), in a fixed order.
func (s Stats) Figures() []lsm.Figure {
	c := lsm.CounterFigure
	return []lsm.Figure{
		c("compactions", "Compaction jobs completed.", s.Jobs),
		c("compaction_read_bytes", "Bytes of SSTs read by compactions.", s.BytesRead),
		c("compaction_written_bytes", "Bytes of SSTs written by compactions.", s.BytesWritten),
		c("compaction_expired_rows", "Expired rows dropped by compactions.", s.Expired),
		c("compaction_filtered_rows", "Rows dropped by the compaction filter.", s.Filtered),
		c("compaction_conflicts", "Manifest CAS conflicts with the writer, re-applied.", s.Conflicts),
		c("gc_passes", "Garbage collection passes.", s.GC.Passes),
		c("gc_deleted_ssts", "Unreferenced SSTs deleted.", s.GC.SSTsDeleted),
		c("gc_deleted_wal_objects", "WAL objects deleted.", s.GC.WALDeleted),
		c("gc_deleted_manifests", "Old manifests deleted.", s.GC.ManifestsDeleted),
		c("gc_errors", "Failed listings, reads and deletes in GC (retried next pass).", s.GC.Errors),
	}
}
