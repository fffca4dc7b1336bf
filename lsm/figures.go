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

func counter(name, help string, v uint64) Figure {
	return Figure{Name: name, Help: help, Kind: Counter, Value: float64(v)}
}

func gauge[T int | int64 | uint64](name, help string, v T) Figure {
	return Figure{Name: name, Help: help, Kind: Gauge, Value: float64(v)}
}

// Figures returns the snapshot as figures, in a fixed order. Object-store
// requests are not among them: the binary counts those where it wraps the
// bucket, across the engine and an in-process compactor.
func (m Metrics) Figures() []Figure {
	return []Figure{
		counter("lsm_writes", "Write batches applied.", m.Writes),
		counter("lsm_gets", "Point lookups.", m.Gets),
		counter("lsm_iterators", "Iterators opened.", m.Iterators),
		counter("lsm_bloom_skips", "SST point lookups skipped by the bloom filter.", m.BloomSkips),
		gauge("lsm_memtable_bytes", "Bytes in the mutable memtable.", m.MemtableBytes),
		gauge("lsm_immutable_memtables", "Frozen memtables waiting to be flushed.", m.ImmutableMemtables),
		gauge("lsm_unflushed_bytes", "Bytes in the memtable and the frozen memtables.", m.UnflushedBytes),
		counter("lsm_flushes", "Memtables flushed to L0 SSTs.", m.Flushes),
		counter("lsm_flush_bytes", "Bytes of L0 SSTs written by flushes.", m.FlushBytes),
		counter("lsm_write_stalls", "Writes that waited for memtable flushes.", m.WriteStalls),
		counter("lsm_write_slowdowns", "Writes delayed because L0 was long.", m.WriteSlowdowns),
		{Name: "lsm_write_stall_seconds", Help: "Time writes spent stalled or slowed.", Kind: Counter, Value: m.StallTime.Seconds()},
		gauge("lsm_l0_ssts", "SSTs in L0.", m.L0SSTs),
		gauge("lsm_sorted_runs", "Sorted runs below L0.", m.SortedRuns),
		gauge("lsm_ssts", "SSTs the current manifest references.", m.SSTs),
		gauge("lsm_sst_bytes", "Bytes of the SSTs the current manifest references.", m.SSTBytes),
		gauge("lsm_manifest_id", "Id of the manifest the engine reads.", m.ManifestID),
		gauge("lsm_writer_epoch", "This writer's epoch.", m.WriterEpoch),
		gauge("lsm_last_seq", "Newest sequence number written.", m.LastSeq),
		gauge("lsm_durable_seq", "Newest sequence number stored in the WAL.", m.DurableSeq),

		counter("wal_objects", "WAL objects stored.", m.WAL.Objects),
		counter("wal_bytes", "Bytes of WAL objects stored.", m.WAL.Bytes),
		counter("wal_batches", "Write batches stored in the WAL (batches per object: divide by objects).", m.WAL.Batches),
		counter("wal_put_retries", "Failed WAL PUT attempts that were retried.", m.WAL.PutRetries),
		counter("wal_put_hedges", "WAL PUTs slow enough that a second, identical PUT was started.", m.WAL.PutHedges),
		{Name: "wal_put_seconds", Help: "Time to store one WAL object, from its first PUT attempt to success.",
			Kind: Histogram, Hist: m.WAL.PutSeconds},
		{Name: "wal_object_batches", Help: "Write batches per WAL object: the size of group commit's groups.",
			Kind: Histogram, Hist: m.WAL.ObjectBatches},

		counter("block_cache_hits", "Block cache hits.", m.BlockCache.Hits),
		counter("block_cache_misses", "Block cache misses.", m.BlockCache.Misses),
		gauge("block_cache_bytes", "Bytes charged to the block cache.", m.BlockCache.Bytes),
		gauge("block_cache_entries", "Blocks in the block cache.", m.BlockCache.Entries),
		gauge("block_cache_capacity_bytes", "Block cache capacity.", m.BlockCache.Capacity),
	}
}
