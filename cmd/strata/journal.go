package main

import (
	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm"
	"github.com/stratakv/strata/resp"
)

func journalFigures(s blob.JournalStats) []lsm.Figure {
	counter := lsm.CounterFigure
	failed := uint64(0)
	if s.Err != nil {
		failed = 1
	}
	return []lsm.Figure{
		counter("local_journal_records", "Uploads to the local bucket made durable by a journal record.", s.Journaled),
		counter("local_journal_direct", "Uploads small enough for the journal that it could not take (not ready yet, full, failed): they fsynced their file and directory.", s.Direct),
		counter("local_journal_syncs", "fdatasyncs of journal files (records share them: group commit).", s.Syncs),
		counter("local_journal_checkpoints", "Journal checkpoints (a syncfs, then the file's records voided).", s.Checkpoints),
		counter("local_journal_forgets", "Forget records written before deleting or overwriting a journaled object.", s.Forgotten),
		counter("local_journal_replayed", "Records read back from dead processes' journals when the bucket was opened.", s.Replayed),
		counter("local_journal_restored", "Objects written again by that replay (torn or lost by a power loss).", s.Restored),
		lsm.GaugeFigure("local_journal_failed", "1 once the journal failed and uploads fsync by themselves.", failed),
	}
}

// recycleFigures count the local bucket's recycling of deleted WAL objects'
// files (blob/local_temps.go).
func recycleFigures(s blob.RecycleStats) []lsm.Figure {
	return []lsm.Figure{
		lsm.GaugeFigure("local_recycled_files", "Deleted WAL objects' files kept, blocks and all, for later WAL objects.", s.Files),
		lsm.GaugeFigure("local_recycled_bytes", "The bytes those files hold: disk in use outside the bucket's objects.", s.Bytes),
		lsm.CounterFigure("local_recycled", "Deleted WAL objects whose files were kept.", s.Recycled),
		lsm.CounterFigure("local_recycled_reused", "WAL objects written over a kept file's blocks.", s.Reused),
		lsm.CounterFigure("local_recycled_freed", "Kept files removed unused (none fit for the recycling age, or at close).", s.Freed),
	}
}

// journalInfo is INFO's Localjournal section. lb is nil for a bucket that
// is not a local directory, and for one under a prefix, whose LocalBucket
// the prefix wrapper hides.
func journalInfo(lb *blob.LocalBucket) resp.InfoSection {
	if lb == nil {
		return resp.InfoSection{Name: "Localjournal", Fields: [][2]string{{"local_journal", "none"}}}
	}
	s := lb.JournalStats()
	fields := [][2]string{{"local_journal", "on"}}
	if !lb.Journaling() {
		fields[0][1] = "off"
	}
	if s.Err != nil {
		fields = append(fields, [2]string{"local_journal_error", s.Err.Error()})
	}
	fields = append(fields, resp.FigureFields(journalFigures(s))...)
	return resp.InfoSection{Name: "Localjournal", Fields: append(fields, resp.FigureFields(recycleFigures(lb.RecycleStats()))...)}
}
