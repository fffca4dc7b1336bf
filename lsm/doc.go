// Package lsm is Strata's storage engine: an LSM tree whose only durable
// state is objects in a bucket (DESIGN.md §3–§6). Writes go to a WAL object
// with group commit and to a skiplist memtable; frozen memtables are flushed
// to L0 SSTs published by a manifest compare-and-swap; reads merge the
// memtables, L0 and the sorted runs a compactor (package compactor, never
// imported here) produces.
//
// Invariants:
//
//  1. Every batch gets one seq, assigned under commitMu together with its WAL
//     append and memtable insert, so WAL order = seq order = insert order.
//  2. A write is acknowledged (WriteHandle.Durable returns nil) only after a
//     WAL object holding it is stored; replay after any crash restores it.
//  3. A batch is atomic: its rows share one seq and one WAL object.
//  4. Reads see the newest row per key with seq <= the read's seq. A
//     tombstone or a row whose expire_at <= now hides the key, never exposing
//     an older row beneath it.
//  5. The manifest records a flushed memtable (L0 SST, last seq,
//     replay_after_wal_id, clock tick) only after its rows are durable in the
//     WAL and its SST is stored; replay skips rows with seq <= last seq.
//  6. The clock never goes backwards, across restarts: it is seeded from the
//     manifest's clock tick and the replayed WAL objects' ticks, and a write
//     records the clock's last tick, at or above every tick handed out
//     before it.
//  7. Opening fences every older writer: the writer epoch is bumped in the
//     manifest and the next WAL id is claimed with a fence object, so an
//     older writer can neither store a WAL object nor publish a manifest,
//     and acknowledges nothing the new writer did not replay.
//  8. Unflushed memory is bounded: writes wait while memtables exceed
//     MaxUnflushedBytes; flushes wait while L0 is at L0StopSSTs.
package lsm
