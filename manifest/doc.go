// Package manifest holds the manifest of a Strata LSM: which SSTs make up L0
// and the sorted runs, how far the WAL is flushed, the epochs that fence old
// writers and compactors, and the compaction clock. It defines the manifest's
// format (format.go) and a Store that reads and writes manifests in a bucket
// with create-if-absent as the only synchronization (store.go).
//
// Invariants:
//
//  1. Manifest ids are dense. Every manifest after the first is written at
//     exactly the id of the manifest it was derived from plus one, so the
//     newest manifest is found from any older one by probing id+1, id+2, …
//     (Store.Refresh) without listing. Garbage collection deletes only
//     manifests older than the newest few, never a gap in the middle.
//
//  2. A manifest object is never overwritten or modified. It is created with
//     create-if-absent; the loser of a race for an id gets ErrConflict, reads
//     the winner and re-applies its change on top (Store.Update). A manifest in
//     memory that came from the Store is a value too: clone before changing.
//
//  3. Each field has one owner, so re-applying a change on a newer manifest
//     merges instead of undoing someone else's work:
//     - the writer owns WriterEpoch (bumped on open), additions to L0 (at the
//     front, newest first), ReplayAfterWALID, NextWALID, LastSeq and
//     ClockTick;
//     - the compactor owns CompactorEpoch, Runs, NextRunID and the removal
//     from L0 of exactly the SSTs it compacted.
//     An apply function touches only its owner's fields and derives them from
//     the manifest it is given, not from the one it read earlier.
//
//  4. Every stored manifest passes Validate: L0 is newest first (MaxSeq never
//     increases along the list); each run's SSTs are in key order with
//     non-overlapping key ranges; no SST id appears twice anywhere; every
//     SST's Smallest <= Largest, MinSeq <= MaxSeq and MaxSeq <= LastSeq; run
//     ids are unique and below NextRunID. The Store refuses to write a
//     manifest that fails, and Decode reports one as corruption.
//
//  5. WriterEpoch, CompactorEpoch, ReplayAfterWALID, LastSeq, ClockTick and
//     NextRunID never decrease from a manifest to its successor; Update
//     refuses a change that would move one back. NextWALID is only a hint.
//
//  6. Epochs fence. A writer (compactor) bumps its epoch on open; from then
//     on an apply function of an older one sees a higher epoch and fails with
//     ErrFenced (CheckWriter, CheckCompactor) instead of writing, so a fenced
//     process changes the manifest no more.
//
//  7. A stored manifest is self-checking: a checksum covers every byte, it
//     carries its own id, which must equal the id in its object name, and any
//     mismatch is reported as sst.ErrCorruption, never served. The newest
//     manifest being corrupt is an error; Latest never falls back to an older
//     one, whose SSTs may already be collected.
package manifest
