// Package blobtest gives tests real object stores: a MinIO server started from
// the binary that scripts/minio.sh builds (found through $STRATA_MINIO_BIN,
// then $STRATA_CACHE/minio with STRATA_CACHE defaulting to
// $HOME/.cache/strata/bin, then minio on PATH).
//
// A package that calls MinIO shares one server process among its tests and
// stops it at exit:
//
//	func TestMain(m *testing.M) { blobtest.Main(m) }
//
// Invariants:
//
//  1. No MinIO outlives the test binary: each runs in its own process group,
//     which Stop and Cleanup kill whole; on Linux the kernel also kills it
//     when the test process dies (Pdeathsig), even by SIGKILL or a timeout.
//  2. MinIO listens on 127.0.0.1 only, with fixed test credentials.
//  3. Every MinIO or NewMinIO call gets a new bucket of its own, so tests
//     sharing a server never see each other's objects.
//  4. A missing test dependency skips the test on a developer machine and
//     fails it when CI=true, so CI never passes by skipping.
//  5. Only the caller of NewMinIO may stop its server; the shared one stops
//     only in Cleanup.
package blobtest
