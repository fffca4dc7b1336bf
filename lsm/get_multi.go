package lsm

import (
	"bytes"
	"context"
	"slices"
	"sync"

	"github.com/stratakv/strata/lsm/sst"
)

// getMultiParallel is how many goroutines GetMulti spreads its SST lookups
// over. Lookups that miss the block cache wait on the bucket, so a few in
// parallel overlap those waits.
const getMultiParallel = 8

// GetMulti returns the values of keys as of one moment: every key is read at
// the same seq, manifest and clock, so the result never shows half of a
// batch, without locking out writers. A nil value is an absent key; the
// values are the caller's.
//
// Keys missing from the memtables are looked up in key order, split into
// contiguous parts read in parallel: neighbouring keys share SST blocks, and
// within a part the second key finds the block the first one fetched.
func (db *DB) GetMulti(ctx context.Context, keys [][]byte) ([][]byte, error) {
	seq := db.visibleSeq.Load()
	rs := db.state.Load()
	now := db.clock.Now()
	db.m.gets.Add(uint64(len(keys)))
	out := make([][]byte, len(keys))
	set := func(i int, r sst.Row) {
		if live(&r, now) {
			out[i] = bytes.Clone(r.Value)
			if out[i] == nil {
				out[i] = []byte{}
			}
		}
	}
	var rest []int // keys the memtables do not have
	for i, k := range keys {
		if r, ok := rs.memGet(k, seq); ok {
			set(i, r)
		} else {
			rest = append(rest, i)
		}
	}
	slices.SortFunc(rest, func(a, b int) int { return bytes.Compare(keys[a], keys[b]) })
	lookup := func(part []int) error {
		for _, i := range part {
			r, ok, err := db.tables.lookup(ctx, rs.man, keys[i], &db.m.bloomSkips)
			if err != nil {
				return err
			}
			if ok {
				set(i, r)
			}
		}
		return nil
	}
	parts := min(getMultiParallel, (len(rest)+7)/8) // at least 8 keys a part
	if parts <= 1 {
		return out, lookup(rest)
	}
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*len(rest)/parts, (p+1)*len(rest)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[p] = lookup(rest[lo:hi])
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
