package lsm

import "github.com/stratakv/strata/wal"

// FigureKind says how a Figure behaves over time.
type FigureKind int

const (
	// Counter only grows while the process runs.
	Counter FigureKind = iota
	// Gauge goes up and down.
	Gauge
	// Histogram is a distribution; its value is in Hist.
	Histogram
)

// A Figure is one number an operator reads, in the single table that both
// INFO and /metrics are rendered from, so the two never disagree. Name is
// the INFO field; /metrics exports it as strata_<Name>, with _total added
// for counters.
type Figure struct {
	Name  string
	Help  string
	Kind  FigureKind
	Value float64
	Hist  wal.Histogram // Kind == Histogram
}

// CounterFigure is a Counter figure.
func CounterFigure(name, help string, v uint64) Figure {
	return Figure{Name: name, Help: help, Kind: Counter, Value: float64(v)}
}

// GaugeFigure is a Gauge figure.
func GaugeFigure[T int | int64 | uint64](name, help string, v T) Figure {
	return Figure{Name: name, Help: help, Kind: Gauge, Value: float64(v)}
}

// Figures returns the snapshot as figures, in a fixed order. Object-store
// requests are not among them: the binary counts those where it wraps the
// bucket, across the engine and an in-process compactor.
func (m Metrics) Figures() []Figure {
	return []Figure{
		CounterFigure("lsm_writes", "Write batches applied.", m.Writes),
		CounterFigure("lsm_gets", "Point lookups.", m.Gets),
		CounterFigure("lsm_iterators", "Iterators opened.", m.Iterators),
		CounterFigure("lsm_bloom_skips", "SST point lookups skipped by the bloom filter.", m.BloomSkips),
		GaugeFigure("lsm_memtable_bytes", "Bytes in the mutable memtable.", m.MemtableBytes),
		GaugeFigure("lsm_immutable_memtables", "Frozen memtables waiting to be flushed.", m.ImmutableMemtables),
		GaugeFigure("lsm_unflushed_bytes", "Bytes in the memtable and the frozen memtables.", m.UnflushedBytes),
		CounterFigure("lsm_flushes", "Memtables flushed to L0 SSTs.", m.Flushes),
		CounterFigure("lsm_flush_bytes", "Bytes of L0 SSTs written by flushes.", m.FlushBytes),
		CounterFigure("lsm_write_stalls", "Writes that waited for memtable flushes.", m.WriteStalls),
		CounterFigure("lsm_write_slowdowns", "Writes delayed because L0 was long.", m.WriteSlowdowns),
		{Name: "lsm_write_stall_seconds", Help: "Time writes spent stalled or slowed.", Kind: Counter, Value: m.StallTime.Seconds()},
		GaugeFigure("lsm_l0_ssts", "SSTs in L0.", m.L0SSTs),
		GaugeFigure("lsm_sorted_runs", "Sorted runs below L0.", m.SortedRuns),
		GaugeFigure("lsm_ssts", "SSTs the current manifest references.", m.SSTs),
		GaugeFigure("lsm_sst_bytes", "Bytes of the SSTs the current manifest references.", m.SSTBytes),
		GaugeFigure("lsm_manifest_id", "Id of the manifest the engine reads.", m.ManifestID),
		GaugeFigure("lsm_writer_epoch", "This writer's epoch.", m.WriterEpoch),
		GaugeFigure("lsm_last_seq", "Newest sequence number written.", m.LastSeq),
		GaugeFigure("lsm_durable_seq", "Newest sequence number stored in the WAL.", m.DurableSeq),

		CounterFigure("wal_objects", "WAL objects stored.", m.WAL.Objects),
		CounterFigure("wal_bytes", "Bytes of WAL objects stored.", m.WAL.Bytes),
		CounterFigure("wal_batches", "Write batches stored in the WAL (batches per object: divide by objects).", m.WAL.Batches),
		CounterFigure("wal_put_retries", "Failed WAL PUT attempts that were retried.", m.WAL.PutRetries),
		CounterFigure("wal_put_hedges", "WAL PUTs slow enough that a second, identical PUT was started.", m.WAL.PutHedges),
		CounterFigure("wal_puts_beside", "WAL PUTs started while another was in flight (a backlog, or writes that waited a flush interval).", m.WAL.PutsBeside),
		{Name: "wal_put_seconds", Help: "Time to store one WAL object, from its first PUT attempt to success.",
			Kind: Histogram, Hist: m.WAL.PutSeconds},
		{Name: "wal_object_batches", Help: "Write batches per WAL object: the size of group commit's groups.",
			Kind: Histogram, Hist: m.WAL.ObjectBatches},

		CounterFigure("block_cache_hits", "Data block reads the block cache answered (index and filter blocks are not counted).", m.BlockCache.Hits),
		CounterFigure("block_cache_misses", "Data block reads the block cache could not answer.", m.BlockCache.Misses),
		GaugeFigure("block_cache_bytes", "Bytes charged to the block cache.", m.BlockCache.Bytes),
		GaugeFigure("block_cache_entries", "Blocks in the block cache.", m.BlockCache.Entries),
		GaugeFigure("block_cache_capacity_bytes", "Block cache capacity.", m.BlockCache.Capacity),
	}
}
