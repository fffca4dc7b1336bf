package sst

import "bytes"

// Iterator is the one iterator contract of the project: SST iterators,
// memtable iterators and the engine's merging iterator all implement it.
//
// A fresh iterator is unpositioned. First and SeekGE position it; Next
// advances it. Each returns Valid(). When an iterator becomes invalid, Error
// tells whether it reached the end (nil) or failed.
type Iterator interface {
	// First positions at the first row within the iterator's bounds.
	First() bool
	// SeekGE positions at the first row whose key is >= key (the newest
	// version first when several rows share a key).
	SeekGE(key []byte) bool
	// Next moves to the following row.
	Next() bool
	// Valid reports whether the iterator is positioned at a row.
	Valid() bool
	// Row returns the current row, which the iterator owns: the row and
	// its slices stay valid only until the next positioning call (Clone it
	// to keep it), and are not to be modified. A pointer, so that a walk
	// through several layers of iterators does not copy the row at each.
	// REQUIRES: Valid().
	Row() *Row
	// Error returns the first error the iterator met, if any.
	Error() error
	// Close releases the iterator's resources and returns Error().
	Close() error
}

// A KeySkipper is an Iterator that can move past the remaining versions of
// its current key in fewer steps than one Next per version: the memtable's
// iterator follows one link, the merging iterator moves each child once.
// A reader that wants one version per key (the engine's iterator) skips
// older versions this way.
type KeySkipper interface {
	Iterator
	// SkipKey moves to the first following row whose key is not key.
	// REQUIRES: Valid(), and key is the current row's key.
	SkipKey(key []byte) bool
}

// SkipKey moves it past the rows of key, its current row's key: with
// its own SkipKey if it has one, else one Next at a time.
func SkipKey(it Iterator, key []byte) bool {
	if s, ok := it.(KeySkipper); ok {
		return s.SkipKey(key)
	}
	return stepPast(it, key)
}

// stepPast is SkipKey for an iterator without one: Next until the key
// changes.
func stepPast(it Iterator, key []byte) bool {
	for it.Next() {
		if !bytes.Equal(it.Row().Key, key) {
			return true
		}
	}
	return false
}
