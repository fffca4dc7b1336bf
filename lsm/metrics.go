package lsm

import (
	"sync/atomic"
	"time"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/wal"
)

type metricsCounters struct {
	writes, gets, iters atomic.Uint64
	bloomSkips          atomic.Uint64
	flushes, flushBytes atomic.Uint64
	stalls, slowdowns   atomic.Uint64
	stallNanos          atomic.Int64
}

// Metrics is a snapshot of the engine's state and counters.
type Metrics struct {
	Writes, Gets, Iterators uint64
	BloomSkips              uint64 // SST point lookups skipped by the bloom filter

	MemtableBytes      int64
	ImmutableMemtables int
	UnflushedBytes     int64
	Flushes            uint64
	FlushBytes         uint64

	WriteStalls    uint64 // writes that waited for memtable flushes
	WriteSlowdowns uint64 // writes delayed because L0 was long
	StallTime      time.Duration

	L0SSTs     int
	SortedRuns int
	SSTs       int
	SSTBytes   uint64

	ManifestID  uint64
	WriterEpoch uint64
	LastSeq     uint64 // newest seq written
	DurableSeq  uint64 // newest seq stored in the WAL

	WAL         wal.Stats
	BlockCache  sst.CacheMetrics
	ObjectStore blob.OpCounts
}

// Metrics returns a snapshot of the engine's metrics.
func (db *DB) Metrics() Metrics {
	db.mu.Lock()
	man := db.man
	mem, imm := db.mem, db.imm
	db.mu.Unlock()
	m := Metrics{
		Writes:         db.m.writes.Load(),
		Gets:           db.m.gets.Load(),
		Iterators:      db.m.iters.Load(),
		BloomSkips:     db.m.bloomSkips.Load(),
		MemtableBytes:  mem.size(),
		Flushes:        db.m.flushes.Load(),
		FlushBytes:     db.m.flushBytes.Load(),
		WriteStalls:    db.m.stalls.Load(),
		WriteSlowdowns: db.m.slowdowns.Load(),
		StallTime:      time.Duration(db.m.stallNanos.Load()),
		L0SSTs:         len(man.L0),
		SortedRuns:     len(man.Runs),
		ManifestID:     man.ID,
		WriterEpoch:    db.epoch,
		LastSeq:        db.visibleSeq.Load(),
		DurableSeq:     db.wal.DurableSeq(),
		WAL:            db.wal.Stats(),
		BlockCache:     db.cache.Metrics(),
		ObjectStore:    db.counts.Counts(),
	}
	m.ImmutableMemtables = len(imm)
	m.UnflushedBytes = m.MemtableBytes
	for _, t := range imm {
		m.UnflushedBytes += t.size()
	}
	for _, t := range man.AllSSTs() {
		m.SSTs++
		m.SSTBytes += t.Size
	}
	return m
}
