package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/stratakv/strata/compactor"
	"github.com/stratakv/strata/lsm"
	"github.com/stratakv/strata/wal"
)

// CommandStat is one command's counters (resp.CommandStat, copied by the
// wiring so this package does not import resp).
type CommandStat struct {
	Name                          string
	Calls, Usec, Failed, Rejected uint64
}

// Sources are the snapshot functions a Collector reads at scrape time. A nil
// function leaves its metrics out: a standalone compactor has no engine and
// no commands.
type Sources struct {
	Engine    func() lsm.Metrics
	Compactor func() compactor.Stats
	Commands  func() []CommandStat
	Clients   func() int
}

// Collector is a prometheus.Collector over Sources.
type Collector struct {
	src Sources
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns a collector over src.
func NewCollector(src Sources) *Collector { return &Collector{src: src} }

// Describe implements prometheus.Collector. The set of command series grows
// as commands are first called, so the collector is unchecked: it sends no
// descriptions.
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	e := emitter{ch: ch}
	if c.src.Commands != nil {
		for _, st := range c.src.Commands() {
			e.counterL("strata_command_calls_total", "Calls of each command that ran.", "command", st.Name, float64(st.Calls))
			e.counterL("strata_command_duration_seconds_total", "Time spent in each command.", "command", st.Name,
				float64(st.Usec)/1e6)
			e.counterL("strata_command_failed_calls_total", "Calls of each command that replied with an error.",
				"command", st.Name, float64(st.Failed))
			e.counterL("strata_command_rejected_calls_total", "Calls of each command refused before running.",
				"command", st.Name, float64(st.Rejected))
		}
	}
	if c.src.Clients != nil {
		e.gauge("strata_connected_clients", "Connected RESP clients.", float64(c.src.Clients()))
	}
	if c.src.Engine != nil {
		collectEngine(e, c.src.Engine())
	}
	if c.src.Compactor != nil {
		collectCompactor(e, c.src.Compactor())
	}
}

func collectEngine(e emitter, m lsm.Metrics) {
	e.counter("strata_lsm_writes_total", "Write batches applied.", float64(m.Writes))
	e.counter("strata_lsm_gets_total", "Point lookups.", float64(m.Gets))
	e.counter("strata_lsm_iterators_total", "Iterators opened.", float64(m.Iterators))
	e.counter("strata_lsm_bloom_skips_total", "SST point lookups skipped by the bloom filter.", float64(m.BloomSkips))
	e.gauge("strata_lsm_memtable_bytes", "Bytes in the mutable memtable.", float64(m.MemtableBytes))
	e.gauge("strata_lsm_immutable_memtables", "Frozen memtables waiting to be flushed.", float64(m.ImmutableMemtables))
	e.gauge("strata_lsm_unflushed_bytes", "Bytes in the memtable and the frozen memtables.", float64(m.UnflushedBytes))
	e.counter("strata_lsm_flushes_total", "Memtables flushed to L0 SSTs.", float64(m.Flushes))
	e.counter("strata_lsm_flush_bytes_total", "Bytes of L0 SSTs written by flushes.", float64(m.FlushBytes))
	e.counter("strata_lsm_write_stalls_total", "Writes that waited for memtable flushes.", float64(m.WriteStalls))
	e.counter("strata_lsm_write_slowdowns_total", "Writes delayed because L0 was long.", float64(m.WriteSlowdowns))
	e.counter("strata_lsm_write_stall_seconds_total", "Time writes spent stalled or slowed.", m.StallTime.Seconds())
	e.gauge("strata_lsm_l0_ssts", "SSTs in L0.", float64(m.L0SSTs))
	e.gauge("strata_lsm_sorted_runs", "Sorted runs below L0.", float64(m.SortedRuns))
	e.gauge("strata_lsm_ssts", "SSTs the current manifest references.", float64(m.SSTs))
	e.gauge("strata_lsm_sst_bytes", "Bytes of the SSTs the current manifest references.", float64(m.SSTBytes))
	e.gauge("strata_lsm_manifest_id", "Id of the manifest the engine reads.", float64(m.ManifestID))
	e.gauge("strata_lsm_writer_epoch", "This writer's epoch.", float64(m.WriterEpoch))
	e.gauge("strata_lsm_last_seq", "Newest sequence number written.", float64(m.LastSeq))
	e.gauge("strata_lsm_durable_seq", "Newest sequence number stored in the WAL.", float64(m.DurableSeq))

	e.counter("strata_wal_objects_total", "WAL objects stored.", float64(m.WAL.Objects))
	e.counter("strata_wal_bytes_total", "Bytes of WAL objects stored.", float64(m.WAL.Bytes))
	e.counter("strata_wal_batches_total", "Write batches stored in the WAL (batches per object: divide by objects).",
		float64(m.WAL.Batches))
	e.counter("strata_wal_put_retries_total", "Failed WAL PUT attempts that were retried.", float64(m.WAL.PutRetries))
	e.histogram("strata_wal_put_seconds", "Time to store one WAL object, from its first PUT attempt to success.", m.WAL.PutSeconds)
	e.histogram("strata_wal_object_batches", "Write batches per WAL object: the size of group commit's groups.", m.WAL.ObjectBatches)

	e.counter("strata_block_cache_hits_total", "Block cache hits.", float64(m.BlockCache.Hits))
	e.counter("strata_block_cache_misses_total", "Block cache misses.", float64(m.BlockCache.Misses))
	e.gauge("strata_block_cache_bytes", "Bytes charged to the block cache.", float64(m.BlockCache.Bytes))
	e.gauge("strata_block_cache_entries", "Blocks in the block cache.", float64(m.BlockCache.Entries))
	e.gauge("strata_block_cache_capacity_bytes", "Block cache capacity.", float64(m.BlockCache.Capacity))
}

func collectCompactor(e emitter, st compactor.Stats) {
	e.counter("strata_compactions_total", "Compaction jobs completed.", float64(st.Jobs))
	e.counter("strata_compaction_read_bytes_total", "Bytes of SSTs read by compactions.", float64(st.BytesRead))
	e.counter("strata_compaction_written_bytes_total", "Bytes of SSTs written by compactions.", float64(st.BytesWritten))
	e.counter("strata_compaction_expired_rows_total", "Expired rows dropped by compactions.", float64(st.Expired))
	e.counter("strata_compaction_filtered_rows_total", "Rows dropped by the compaction filter.", float64(st.Filtered))
	e.counter("strata_compaction_conflicts_total", "Manifest CAS conflicts with the writer, re-applied.", float64(st.Conflicts))
	e.counter("strata_gc_passes_total", "Garbage collection passes.", float64(st.GC.Passes))
	e.counter("strata_gc_deleted_ssts_total", "Unreferenced SSTs deleted.", float64(st.GC.SSTsDeleted))
	e.counter("strata_gc_deleted_wal_objects_total", "WAL objects deleted.", float64(st.GC.WALDeleted))
	e.counter("strata_gc_deleted_manifests_total", "Old manifests deleted.", float64(st.GC.ManifestsDeleted))
	e.counter("strata_gc_errors_total", "Failed listings, reads and deletes in GC (retried next pass).", float64(st.GC.Errors))
}

// emitter builds const metrics; their descriptions are made per scrape,
// which costs a little allocation and keeps no state between scrapes.
type emitter struct{ ch chan<- prometheus.Metric }

func (e emitter) emit(name, help string, t prometheus.ValueType, v float64, labels ...string) {
	var keys, values []string
	for i := 0; i+1 < len(labels); i += 2 {
		keys, values = append(keys, labels[i]), append(values, labels[i+1])
	}
	e.ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(name, help, keys, nil), t, v, values...)
}

func (e emitter) counter(name, help string, v float64) {
	e.emit(name, help, prometheus.CounterValue, v)
}
func (e emitter) gauge(name, help string, v float64) { e.emit(name, help, prometheus.GaugeValue, v) }

// histogram emits a snapshot taken of fixed buckets (per-bucket counts)
// as a Prometheus histogram (cumulative counts).
func (e emitter) histogram(name, help string, h wal.Histogram) {
	buckets := make(map[float64]uint64, len(h.Bounds))
	var cum uint64
	for i, b := range h.Bounds {
		cum += h.Counts[i]
		buckets[b] = cum
	}
	e.ch <- prometheus.MustNewConstHistogram(prometheus.NewDesc(name, help, nil, nil), h.Count, h.Sum, buckets)
}
func (e emitter) counterL(name, help, label, value string, v float64) {
	e.emit(name, help, prometheus.CounterValue, v, label, value)
}
