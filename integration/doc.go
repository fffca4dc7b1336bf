// Package integration holds Strata's end-to-end tests (DESIGN.md §1, §10):
// the strata binary built from this module, real object storage (MinIO
// through blob/blobtest), a separate compactor process and, once the RESP
// server exists, real Redis clients. The package has no non-test code
// besides this file.
//
// Invariants:
//
//  1. Tests run the binary built from this checkout, once per test binary,
//     never one found on PATH; it is built with -race when the tests are, so
//     a data race in a child process fails the test that started it.
//  2. No child process outlives its test: each runs in its own process
//     group, killed whole when the test ends, and on Linux the kernel kills
//     it when the test process dies (Pdeathsig).
//  3. Data is checked against a model of acknowledged writes only: a write
//     enters the model after its WriteHandle.Durable returned nil, and each
//     key has one writer, so the model is exact and never guesses.
//  4. Expiry is judged by the engine's clock (lsm.DB.Now), never the test's,
//     with a small tolerance around the instant of the read.
//  5. Long tests skip under -short. A missing MinIO skips on a developer
//     machine and fails under CI=true (blobtest). Lengths come from the
//     environment (STRATA_SOAK); the defaults are what CI runs.
package integration
