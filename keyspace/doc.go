// Package keyspace is the Redis data model over the lsm engine: strings,
// hashes, lists, sets and sorted sets in sixteen databases, with per-key
// expiry, as engine rows of one LSM (format.go draws them).
//
// Invariants:
//
//  1. Every command's changes are one engine batch, written under the lock
//     stripes of its keys (taken in ascending order): a crash leaves a
//     command wholly applied or not at all, so a collection's count always
//     equals its element rows.
//  2. A key's metadata row is the truth: its type, version, expiry and
//     count. Its engine row carries the key's expire_at, so the engine
//     hides an expired key from every read.
//  3. A collection's element rows are keyed by (generation, key, version).
//     A collection gets a version never used before each time it is
//     created (versions start from the persisted engine clock << 20), so
//     DEL, overwrite and expiry touch only the metadata row and a
//     re-created key never sees old elements.
//  4. FLUSHDB/FLUSHALL move databases to generations never used before, in
//     one batch; old generations' rows are unreachable at once.
//  5. The expiry index holds one row per key with an expiry, written in the
//     batch that sets the expiry; its value is the key's version, and a row
//     is acted on only if both its time and version match the metadata.
//  6. Rows no command can reach (dead versions, generations, stale index
//     rows) are removed by the compaction filter, never by a command.
//  7. Empty collections are deleted, as Redis does.
package keyspace
