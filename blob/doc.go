// Package blob is Strata's access to object storage: opening a bucket from a
// spec or thanos objstore configuration (Open, OpenConfig), a durable local
// disk bucket (LocalBucket), an in-memory bucket (NewMemBucket), object
// naming (naming.go), the conditional-write capability check
// (CheckConditionalWrites), and wrappers that retry (NewRetryBucket), inject
// faults (NewFaultBucket), count calls (NewCountingBucket), export
// metrics (WithMetrics) and cache SST parts on local disk (NewDiskCache). objstore.Bucket is the bucket type everywhere; a
// create-if-absent write is Upload with objstore.WithIfNotExists(), and
// losing it is bkt.IsConditionNotMetErr(err).
//
// Invariants:
//
//  1. An Upload to a LocalBucket that returns nil survives power loss:
//     either the body is fsynced in a temp file before it gets its name and
//     the directory holding the name is fsynced before Upload returns (so
//     are the parents of directories it creates), or (a create-if-absent
//     upload through the local journal) a record of the name and body is
//     fdatasynced in the journal, which the next NewLocalBucket replays
//     before anything reads the bucket (local_journal.go, J1-J4).
//  2. A name in a LocalBucket never refers to a partial object: the body is
//     complete before a rename or link publishes it, so no reader, in any
//     process, sees half an object.
//  3. Create-if-absent on a LocalBucket is atomic across goroutines and
//     processes sharing the directory: the final name is made by
//     renameat2(RENAME_NOREPLACE), or link(2) where the file system lacks
//     it, which fail with EEXIST for every contender but one. Exactly one
//     create of a name succeeds; the others get condition-not-met.
//  4. A LocalBucket never lets a name escape its root (no "..", no absolute
//     names) and never lists its temp directory ".tmp/", which no object
//     name may use.
//  5. A RetryBucket retries only transient errors: never not-found,
//     condition-not-met, access-denied, invalid arguments, or errors after
//     the caller's context ended; and it never retries an error returned by
//     an Iter callback.
//  6. A RetryBucket's create-if-absent reports success only if the object
//     holds exactly its body: when an attempt failed and a retry meets
//     condition-not-met, the object is read back and compared. It cannot
//     tell our bytes from identical bytes of another writer, so
//     create-if-absent bodies should identify their writer.
//  7. Every wrapper (retry, fault, counting, metrics, prefix) classifies
//     errors by asking the bucket it wraps, so IsObjNotFoundErr,
//     IsConditionNotMetErr and IsAccessDeniedErr hold through any stack of
//     wrappers; ErrInjected is none of the three.
//  8. A FaultBucket is deterministic: the same seed and the same sequence of
//     calls inject the same faults.
//  9. Open and OpenConfig never put a credential in an error or a log line.
//  10. CheckConditionalWrites passes only if the bucket refused a second
//     create-if-absent of one name and kept the first body; a bucket that
//     cannot do that gets an error wrapping ErrNoConditionalWrites.
//  11. A DiskCache never serves bytes it has not checked: every read of a
//     part file verifies its crc32c, part size and last-part flag, and a
//     torn, truncated or altered file is deleted and its part fetched
//     again. Part files are published by rename, never written in place.
//  12. A DiskCache caches only names its Cacheable says are immutable. An
//     Upload's parts are kept only if the upload returned nil; a Delete or a
//     later Upload of the name drops its parts, and parts that fetches
//     already under way bring back for the old object are thrown away.
//  13. A DiskCache's part files total at most MaxBytes after every call,
//     and concurrent readers of one missing part make one bucket read.
//  14. A Delete on a LocalBucket is not durable when it returns: after a
//     power loss the object may be back (whole, or torn if its data was
//     only in the journal and the journal's forget record kept replay from
//     mending it). Only garbage is ever deleted (GC), under names that are
//     never created again, and GC deletes what comes back; a WAL object
//     that does not decode is kept like a fence until FenceRetention.
package blob
