package lsm

import (
	"bytes"
	"context"

	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/manifest"
)

// IterOptions bound an iterator. Prefix, when set, overrides both bounds with
// the range of keys that start with it.
type IterOptions struct {
	LowerBound []byte // inclusive
	UpperBound []byte // exclusive
	Prefix     []byte
}

// Iterator walks the live keys of a DB in order, one row per key: the newest
// version visible when the iterator was created, skipping deleted and
// expired keys. It stays valid while memtables are flushed and SSTs are
// compacted and collected underneath it.
type Iterator struct {
	db     *DB
	merged sst.Iterator
	skip   sst.KeySkipper // merged's, when it has SkipKey
	seq    uint64
	now    int64
	lower  []byte
	key    []byte // copy of the current key
	row    sst.Row
	valid  bool
	err    error

	// The mutable memtable's iterator, room for a few children, their
	// merge and a few sorted runs' iterators: an Iterator comes from the
	// DB's pool and goes back at Close, so a scan of a memtable and a few
	// SSTs or runs allocates nothing. (Each scan allocating ~4 KB here was
	// a quarter of LRANGE's CPU under a pipelined load, most of it the
	// page faults and zeroing of the heap growing into fresh memory.)
	mem   memIter
	kids  [sst.MergeInline]sst.Iterator
	merge sst.MergingIter
	lv    [iterLevels]levelIter
	nlv   int // of lv in use
}

// iterLevels is how many sorted runs (an L0 SST is one) an Iterator reads
// without allocating; it merges up to sst.MergeInline children so: the
// memtables, the L0 SSTs below the compaction trigger and a few runs.
const iterLevels = 8

var _ sst.Iterator = (*Iterator)(nil)

// NewIter returns an unpositioned iterator over a consistent view of the DB.
func (db *DB) NewIter(ctx context.Context, o IterOptions) *Iterator {
	return db.newIter(ctx, o, nil)
}

// newIter is NewIter with the rows of an IndexedBatch (own, may be nil)
// merged above everything else.
func (db *DB) newIter(ctx context.Context, o IterOptions, own *memtable) *Iterator {
	lower, upper := o.LowerBound, o.UpperBound
	if o.Prefix != nil {
		lower, upper = o.Prefix, prefixSuccessor(o.Prefix)
	}
	seq := db.visibleSeq.Load()
	rs := db.state.Load()
	it, _ := db.iterPool.Get().(*Iterator)
	if it == nil {
		it = new(Iterator)
	}
	it.db, it.seq, it.now, it.lower = db, seq, db.clock.Now(), lower
	it.mem = memIter{m: rs.mem, lower: lower, upper: upper}
	children := append(it.kids[:0], &it.mem)
	if own != nil {
		children = append(children, own.newIter(lower, upper))
	}
	for _, m := range rs.imm {
		children = append(children, m.newIter(lower, upper))
	}
	for i, t := range rs.man.L0 {
		if overlaps(t.Stats.Smallest, t.Stats.Largest, lower, upper) {
			children = append(children, it.level(ctx, rs.man.L0[i:i+1], lower, upper))
		}
	}
	for _, r := range rs.man.Runs {
		if n := len(r.SSTs); n > 0 && overlaps(r.SSTs[0].Stats.Smallest, r.SSTs[n-1].Stats.Largest, lower, upper) {
			children = append(children, it.level(ctx, r.SSTs, lower, upper))
		}
	}
	db.m.iters.Add(1)
	if len(children) == 1 {
		it.merged = children[0]
	} else {
		it.merge.Init(children)
		it.merged = &it.merge
	}
	it.skip, _ = it.merged.(sst.KeySkipper)
	return it
}

// level returns an iterator over a sorted run of ssts: one of it.lv while
// they last.
func (it *Iterator) level(ctx context.Context, ssts []manifest.SST, lower, upper []byte) *levelIter {
	var l *levelIter
	if it.nlv < len(it.lv) {
		l = &it.lv[it.nlv]
		it.nlv++
	} else {
		l = new(levelIter)
	}
	l.init(ctx, it.db, ssts, lower, upper)
	return l
}

// overlaps reports whether [smallest, largest] meets [lower, upper).
func overlaps(smallest, largest, lower, upper []byte) bool {
	if lower != nil && bytes.Compare(largest, lower) < 0 {
		return false
	}
	return upper == nil || bytes.Compare(smallest, upper) < 0
}

// prefixSuccessor returns the smallest key greater than every key with the
// prefix, or nil if there is none (all 0xff).
func prefixSuccessor(prefix []byte) []byte {
	s := bytes.Clone(prefix)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] != 0xff {
			s[i]++
			return s[:i+1]
		}
	}
	return nil
}

// First positions at the first live key.
func (it *Iterator) First() bool { return it.settle(it.current(it.merged.First())) }

// SeekGE positions at the first live key >= key.
func (it *Iterator) SeekGE(key []byte) bool { return it.settle(it.current(it.merged.SeekGE(key))) }

// Next moves to the next live key.
func (it *Iterator) Next() bool {
	if !it.valid {
		return false
	}
	return it.settle(it.skipKey())
}

// skipKey advances the merged stream past every version of it.key and
// returns the row it stopped at, which settle goes on from.
func (it *Iterator) skipKey() *sst.Row {
	if it.skip != nil {
		return it.current(it.skip.SkipKey(it.key))
	}
	return it.current(sst.SkipKey(it.merged, it.key))
}

// current returns the merged stream's row if ok says it has one, else
// nil.
func (it *Iterator) current(ok bool) *sst.Row {
	if !ok {
		return nil
	}
	return it.merged.Row()
}

// settle moves forward from r, the merged stream's current row (nil when
// it has none), to the next key whose newest visible version is live.
func (it *Iterator) settle(r *sst.Row) bool {
	it.valid = false
	for r != nil {
		if r.Seq > it.seq && r.Seq < batchSeqBase {
			r = it.current(it.merged.Next()) // written after the iterator was made
			continue
		}
		it.key = append(it.key[:0], r.Key...)
		if live(r, it.now) {
			it.row = *r
			it.row.Key = it.key
			it.valid = true
			return true
		}
		r = it.skipKey()
	}
	it.err = it.merged.Error()
	return false
}

// Valid reports whether the iterator is at a key.
func (it *Iterator) Valid() bool { return it.valid }

// Key returns the current key; valid until the next positioning call.
func (it *Iterator) Key() []byte { return it.row.Key }

// Value returns the current value; valid until the next positioning call.
func (it *Iterator) Value() []byte { return it.row.Value }

// Row returns the current row.
func (it *Iterator) Row() *sst.Row { return &it.row }

// Error returns the error that ended iteration, if any.
func (it *Iterator) Error() error { return it.err }

// Close releases the iterator and returns the error that ended iteration,
// if any. The iterator goes back to its DB's pool: neither it nor anything
// it returned may be used after Close, nor may it be closed again.
func (it *Iterator) Close() error {
	if it.merged == nil {
		return it.err
	}
	if err := it.merged.Close(); err != nil && it.err == nil {
		it.err = err
	}
	err, db := it.err, it.db
	it.release()
	db.iterPool.Put(it)
	return err
}

// release drops everything a closed iterator refers to, so that a pooled
// one holds no memtable, table or block, keeping only buffers.
func (it *Iterator) release() {
	for i := range it.nlv {
		it.lv[i].release()
	}
	it.nlv = 0
	it.db, it.merged, it.skip, it.lower, it.err, it.valid = nil, nil, nil, nil, nil, false
	it.key, it.row = it.key[:0], sst.Row{}
	it.mem = memIter{}
	clear(it.kids[:])
	it.merge = sst.MergingIter{}
}
