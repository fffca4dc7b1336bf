//go:build race

package keyspace

// raceEnabled lets heavy tests shrink under the race detector, which slows
// them ten times; they log the size they ran with.
const raceEnabled = true
