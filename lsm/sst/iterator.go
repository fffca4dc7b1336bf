package sst

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
	// Row returns the current row. Its slices stay valid only until the next
	// positioning call; Clone them to keep them.
	// REQUIRES: Valid().
	Row() Row
	// Error returns the first error the iterator met, if any.
	Error() error
	// Close releases the iterator's resources and returns Error().
	Close() error
}
