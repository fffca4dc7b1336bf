// Package bench compares the Strata engine (lsm over a durable local-disk
// bucket) with Pebble on the same disk. It is a separate module so that
// Pebble never enters the main module's dependencies; the benchmarks live in
// the _test files and scripts/bench.sh runs them and prints one table via
// cmd/benchtable.
//
// Invariants of the comparison:
//
//  1. Both engines run in temporary directories on the same file system,
//     with default options except where a benchmark says otherwise (block
//     cache size for reads).
//  2. A write is counted only once it is durable: Strata's Write followed by
//     WriteHandle.Durable, Pebble's Set with pebble.Sync (Pebble groups
//     concurrent syncs itself, as Strata groups WAL objects).
//  3. Keys are 16 bytes and values 100 bytes unless a benchmark says
//     otherwise; both engines see the same key sequence.
//  4. Every read is checked: a missing preloaded key fails the benchmark, so
//     an engine cannot win by returning nothing.
//  5. Setup (preloading, warming, reopening) is outside the timed region.
package bench
