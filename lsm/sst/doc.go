// Package sst is Strata's object format: SSTs (rows sorted by key, newest
// version first) and WAL objects (the same format, rows in append order). It
// holds the wire format (format.go), the Builder, the Reader with its
// two-level iterator, DecodeAll for whole objects, and the shared block Cache.
//
// Invariants:
//
//  1. Every byte of an object is covered by a checksum: each block (data,
//     index, filter, stats) by the crc32c in its trailer, over the stored
//     bytes and the compression type; the footer by its own crc32c. Blocks are
//     back to back, with no padding, from offset 0 to the footer.
//  2. No decoded byte is used before its checksum has been verified, and a
//     mismatch, bad magic, truncated block or undecodable field is reported
//     as an error wrapping ErrCorruption with the object name and offset.
//     Nothing in this package panics on any input or returns unverified data.
//  3. An ordered object's rows are strictly increasing by (key asc, seq
//     desc): the Builder rejects anything else, so the first row with a given
//     key is its newest version. An unordered (WAL) object's seqs never
//     decrease. DecodeAll re-checks both.
//  4. The index has one entry per data block, in object order, with the
//     block's first and last user key. In an ordered object the first block
//     whose last key is >= k holds the first row with key >= k, and a block
//     whose first key is >= UpperBound is never read by an iterator.
//  5. A decoded block is at most maxBlockLen bytes; a length in damaged input
//     can never make a reader allocate more.
//  6. Objects are immutable and never modified once written, so decoded
//     blocks are shared read-only: by the Cache, iterators and Get alike.
//     Slices returned by an iterator's Row stay valid until its next
//     positioning call; Get and DecodeAll return rows that own their memory.
//  7. The Cache never holds more than its capacity in charged bytes (values
//     plus a per-entry overhead). Index and filter blocks are evicted from a
//     shard only when it holds no normal entry. Cache keys are (reader id,
//     block offset) with ids unique per Cache, so objects never share entries.
//  8. The format is versioned in the footer; versions are only ever added
//     and a reader refuses a version it does not know (not as corruption).
//     Constants marked "part of the format" never change meaning.
package sst
