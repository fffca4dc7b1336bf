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
// Keys missing from the memtables are looked up in key order, first from the
// block cache only. The data blocks those lookups lacked are then fetched
// together: blocks of one table close to each other as one ranged read
// (sst.Reader.MissingSpans), the reads in parallel. An MGET of 100
// consecutive keys thus costs the bucket a request or two where it cost one
// per block. The lookups that lacked a block then finish, split into
// contiguous parts in parallel, in case a bloom filter's false positive or
// an eviction sends them to the bucket again.
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
	var waits []blockWait // lookups stopped at an uncached block, in key order
	for _, i := range rest {
		r, ok, w, err := db.tables.walk(ctx, rs.man, keys[i], 0, true, &db.m.bloomSkips)
		switch {
		case err != nil:
			return nil, err
		case w != nil:
			w.key = i
			waits = append(waits, *w)
		case ok:
			set(i, r)
		}
	}
	if len(waits) == 0 {
		return out, nil
	}
	if err := loadSpans(ctx, keys, waits, db.cache.Capacity()/4); err != nil {
		return nil, err
	}
	finish := func(part []blockWait) error {
		for _, w := range part {
			r, ok, _, err := db.tables.walk(ctx, rs.man, keys[w.key], w.pos, false, &db.m.bloomSkips)
			if err != nil {
				return err
			}
			if ok {
				set(w.key, r)
			}
		}
		return nil
	}
	return out, inParts(waits, 8, finish)
}

// blockWait is a lookup that stopped at a table whose data block for the
// key was not cached.
type blockWait struct {
	key int // index into GetMulti's keys
	pos int // the table's place in walk's order
	rd  *sst.Reader
}

// loadSpans fetches the blocks the waiting lookups need, each table's as few
// spans as MissingSpans makes, up to getMultiParallel reads at a time. It
// loads at most budget bytes: past that, loaded blocks would push out each
// other before their lookups ran, and the rest of the lookups read their
// blocks one by one.
func loadSpans(ctx context.Context, keys [][]byte, waits []blockWait, budget int64) error {
	var spans []sst.Span
	for lo := 0; lo < len(waits); {
		rd := waits[lo].rd
		var tk [][]byte // rd's keys, ascending (waits are in key order)
		hi := lo
		for ; hi < len(waits) && waits[hi].rd == rd; hi++ {
			tk = append(tk, keys[waits[hi].key])
		}
		// Keys of one table usually wait side by side; a table seen again
		// further on gets spans of its own, which at worst re-read a block.
		s, err := rd.MissingSpans(ctx, tk)
		if err != nil {
			return err
		}
		for i := range s {
			if budget -= s[i].Bytes(); budget < 0 {
				break
			}
			spans = append(spans, s[i])
		}
		lo = hi
	}
	return inParts(spans, 1, func(part []sst.Span) error {
		for i := range part {
			if err := part[i].Load(ctx); err != nil {
				return err
			}
		}
		return nil
	})
}

// inParts runs fn over up to getMultiParallel contiguous parts of xs of at
// least minPart each, in parallel (one part runs inline), and returns the
// first error.
func inParts[T any](xs []T, minPart int, fn func([]T) error) error {
	parts := min(getMultiParallel, (len(xs)+minPart-1)/minPart)
	if parts <= 1 {
		return fn(xs)
	}
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*len(xs)/parts, (p+1)*len(xs)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[p] = fn(xs[lo:hi])
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
