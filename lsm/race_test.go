//go:build race

package lsm

// raceEnabled: the race detector is on (its sync.Pool drops a quarter of
// what it is given, so allocation counts mean nothing).
const raceEnabled = true
