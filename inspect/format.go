package inspect

import (
	"fmt"
	"io"

	"github.com/stratakv/strata/keyspace"
	"github.com/stratakv/strata/lsm/sst"
)

// FormatBytes formats a byte count with a binary unit: 512 B, 12.3 KiB.
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// formatTick formats a clock tick (Unix ms), or "none" for 0.
func formatTick(ms int64) string {
	if ms == 0 {
		return "none"
	}
	return fmt.Sprintf("%d (%s)", ms, keyspace.FormatTime(ms))
}

// writeRows prints rows, at most limit of them (limit <= 0: all), one line
// each: seq, kind, expiry, then the row described per keyspace.
func writeRows(w io.Writer, rows []sst.Row, limit int) {
	n := len(rows)
	if limit > 0 && limit < n {
		n = limit
	}
	for _, r := range rows[:n] {
		exp := ""
		if r.ExpireAt != 0 {
			exp = " expire_at=" + keyspace.FormatTime(r.ExpireAt)
		}
		fmt.Fprintf(w, "seq=%d %s%s  %s\n", r.Seq, r.Kind, exp, keyspace.DescribeRow(r.Key, r.Value, r.Kind == sst.KindPut))
	}
	if n < len(rows) {
		fmt.Fprintf(w, "... %d more rows (--limit %d)\n", len(rows)-n, limit)
	}
}

// writeStats prints an object's stats block.
func writeStats(w io.Writer, st sst.Stats) {
	fmt.Fprintf(w, "entries %d  tombstones %d  seq %d..%d  clock_tick %s\n",
		st.Entries, st.Tombstones, st.MinSeq, st.MaxSeq, formatTick(st.ClockTick))
	if st.EarliestExpiry != 0 {
		fmt.Fprintf(w, "earliest expiry %s\n", keyspace.FormatTime(st.EarliestExpiry))
	}
	fmt.Fprintf(w, "smallest %s\nlargest  %s\n", keyspace.DescribeKey(st.Smallest), keyspace.DescribeKey(st.Largest))
}
