//go:build !race

package keyspace

const raceEnabled = false
