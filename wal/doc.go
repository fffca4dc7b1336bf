// Package wal writes and replays Strata's write-ahead log: a sequence of
// objects wal/<id>.sst in the bucket, each one an unordered SST (rows in seq
// order) holding every batch that arrived while the previous object was being
// stored (group commit).
//
// Invariants:
//
//  1. Objects are acknowledged in id order: an object counts as stored
//     only once every lower id is. Object id starts only once every id up
//     to id-Inflight is acknowledged, and a PUT starts beside one in flight
//     only for a backlog of at least pipelineMinBytes or, with a
//     FlushInterval, for a batch that has waited that long. A flush starts as
//     soon as a PUT slot is free and there is something to write, no sooner
//     than FlushInterval after the previous flush started unless a whole
//     object (MaxObjectBytes) is pending.
//  2. A batch (all rows with one seq) is never split across objects.
//  3. Every waiter whose seq an object holds is released by that object's
//     single PUT; WaitDurable(seq) returns nil only once an object holding
//     seq (and every earlier one) is stored.
//  4. Objects are created with create-if-absent. Losing that race means a
//     newer writer has fenced this one: the writer stops, and nothing it has
//     not already acknowledged is ever acknowledged.
//  5. An object starting with fenceMagic is a fence, written by a new writer
//     to claim the next id; replay skips it.
//  6. Ids are dense from the first object not yet garbage-collected: a
//     writer claims ids one after another and stops at its first conflict.
//  7. Appended rows are copied once, into pending's chunks, and each chunk
//     belongs to pending or to one taken object at a time (rowqueue.go), so
//     an object's rows stay intact until it is encoded and released.
package wal
