package compactor

import (
	"context"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/manifest"
)

// Decision is what a compaction filter does with a row.
type Decision uint8

const (
	// Keep writes the row unchanged.
	Keep Decision = iota
	// Drop removes the row. Like every removal it leaves a tombstone unless
	// the output is the bottom run, so no older row below resurfaces.
	Drop
	// Tombstone turns the row into a tombstone of its key.
	Tombstone
)

// Filter decides, during one compaction, the fate of each key's newest row
// that is a live put. Tombstones and rows expired at the compaction clock
// never reach it: the retention rules handle them.
type Filter interface {
	Filter(row sst.Row) Decision
}

// FilterContext is what a FilterFactory may use to build a job's filter.
type FilterContext struct {
	// Manifest is the manifest the job was planned on: a read view of every
	// flushed row, for filters that look up other keys (the Redis filter
	// reads a collection's metadata).
	Manifest *manifest.Manifest
	Bucket   objstore.Bucket
	// Clock is the compaction clock: the manifest's clock tick.
	Clock int64
	// Bottom reports whether the output is the oldest run.
	Bottom bool
}

// FilterFactory builds the filter of one compaction job.
type FilterFactory func(ctx context.Context, fc FilterContext) (Filter, error)
