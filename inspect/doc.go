// Package inspect reads a Strata bucket for operators, as `strata inspect`
// shows it: the latest manifest and the LSM's shape, the manifest history,
// the rows of an SST or WAL object with their keys decoded per keyspace, and
// a verification of every object the latest manifest still needs.
//
// Invariants:
//
//  1. Read-only: nothing here uploads, deletes, fences or takes an epoch, so
//     it is safe against a bucket a server and a compactor are using.
//  2. Every object is read whole and decoded with every checksum verified
//     (sst.DecodeAll, wal.DecodeObject, manifest.Decode): what is printed
//     was checked, and a damaged object is reported by name, never shown.
//  3. Verify reports problems per object and keeps going; it returns an error
//     only when it cannot tell what to verify (no manifest, listing fails).
package inspect
