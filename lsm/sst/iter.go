package sst

import (
	"bytes"
	"context"
	"errors"
)

// IterOptions bound an iterator to [LowerBound, UpperBound); nil means
// unbounded.
type IterOptions struct {
	LowerBound []byte
	UpperBound []byte // exclusive
	// NoFillCache keeps blocks this iterator reads out of the cache, so a
	// compaction's one-pass scan does not evict the blocks readers need.
	NoFillCache bool
}

// Readahead for sequential scans: the first block read after a seek is read
// alone; each further sequential miss reads a span of following blocks in one
// request, doubling from minReadahead up to maxReadahead bytes.
const (
	minReadahead = 64 << 10
	maxReadahead = 1 << 20
)

var errIterClosed = errors.New("sst: iterator closed")

var _ KeySkipper = (*TableIter)(nil)

// TableIter is a two-level iterator: the index chooses data blocks, a
// blockIter walks one of them. It never loads a block whose rows all lie
// outside [LowerBound, UpperBound): the index holds each block's first and
// last key. Reader.NewIter makes one; Reader.InitIter reuses one, for a
// holder that opens one table after another (a sorted run's iterator).
type TableIter struct {
	r     *Reader
	ctx   context.Context
	o     IterOptions
	index indexBlock // pinned for the iterator's life once loaded
	ready bool       // index loaded

	bi         blockIter
	empty      Row  // what Row returns when the iterator is not valid; never written
	blk        int  // index of the block in bi, -1 if none
	checkUpper bool // the current block may hold keys >= UpperBound
	valid      bool
	closed     bool
	err        error

	// A span of raw (undecoded) blocks [spanFirst, spanEnd) read ahead.
	span               []byte
	spanOff            uint64
	spanFirst, spanEnd int
	readahead          int
}

// NewIter returns an iterator over the object's rows within o's bounds. It
// does no I/O until positioned.
func (r *Reader) NewIter(ctx context.Context, o IterOptions) Iterator {
	it := new(TableIter)
	r.InitIter(it, ctx, o)
	return it
}

// InitIter makes it an iterator over the object's rows within o's bounds,
// as NewIter, keeping only the key buffer it had. REQUIRES: it was closed
// (or is new), and nothing uses what it returned before.
func (r *Reader) InitIter(it *TableIter, ctx context.Context, o IterOptions) {
	*it = TableIter{r: r, ctx: ctx, o: o, blk: -1, bi: blockIter{key: it.bi.key[:0]}}
}

func (it *TableIter) Valid() bool  { return it.valid }
func (it *TableIter) Error() error { return it.err }

// Row returns the current row. REQUIRES: Valid().
func (it *TableIter) Row() *Row {
	if it.valid {
		return it.bi.row()
	}
	return &it.empty
}

// Close releases the iterator's table and blocks, keeping only its key
// buffer for InitIter; positioning it afterwards fails.
func (it *TableIter) Close() error {
	*it = TableIter{closed: true, err: it.err, blk: -1, bi: blockIter{key: it.bi.key[:0]}}
	return it.err
}

func (it *TableIter) First() bool {
	if it.o.LowerBound != nil {
		return it.SeekGE(it.o.LowerBound)
	}
	if !it.start() {
		return false
	}
	it.readahead = 0
	if it.index.n == 0 {
		return it.invalidate()
	}
	if e := it.index.entry(0); it.pastUpper(&e) || !it.loadBlock(0) {
		return it.invalidate()
	}
	if !it.bi.first() {
		return it.blockDone()
	}
	return it.checkRow()
}

func (it *TableIter) SeekGE(key []byte) bool {
	if lb := it.o.LowerBound; lb != nil && bytes.Compare(key, lb) < 0 {
		key = lb
	}
	if ub := it.o.UpperBound; ub != nil && bytes.Compare(key, ub) >= 0 {
		return it.invalidate()
	}
	if !it.start() {
		return false
	}
	it.readahead = 0
	i := it.index.search(key)
	if i == it.index.n {
		return it.invalidate()
	}
	if i != it.blk || it.bi.data == nil {
		if e := it.index.entry(i); it.pastUpper(&e) || !it.loadBlock(i) {
			return it.invalidate()
		}
	}
	if !it.bi.seekGE(key) {
		return it.blockDone()
	}
	return it.checkRow()
}

func (it *TableIter) Next() bool {
	if !it.valid {
		return false
	}
	if !it.bi.nextRow() {
		return it.blockDone()
	}
	return it.checkRow()
}

// SkipKey moves past the remaining versions of key, the current row's key.
// A row's key is stored after the prefix it shares with the row before it,
// so while the rows are versions of key, only the bytes after that prefix
// need comparing; a block's first row shares none.
func (it *TableIter) SkipKey(key []byte) bool {
	for it.Next() {
		k, n := it.bi.key, it.bi.shared
		if len(k) != len(key) || !bytes.Equal(k[n:], key[n:]) {
			return true
		}
	}
	return false
}

// start loads the index on first use. It reports false (and sets the
// error) if the iterator cannot be positioned.
func (it *TableIter) start() bool {
	it.valid = false
	if it.err != nil {
		return false
	}
	if it.closed {
		it.err = errIterClosed
		return false
	}
	if !it.ready {
		x, err := it.r.indexBlock(it.ctx)
		if err != nil {
			it.err = err
			return false
		}
		it.index, it.ready = x, true
	}
	return true
}

// blockDone moves past the end of the current block to the next block that
// can hold rows below UpperBound.
func (it *TableIter) blockDone() bool {
	for {
		if it.bi.err != nil {
			it.err = corruptErr(it.r.name, int64(it.index.entry(it.blk).handle.offset), it.bi.err)
			return it.invalidate()
		}
		next := it.blk + 1
		if next >= it.index.n {
			return it.invalidate()
		}
		e := it.index.entry(next)
		if it.pastUpper(&e) {
			return it.invalidate()
		}
		if it.readahead == 0 {
			it.readahead = minReadahead
		} else {
			it.readahead = min(2*it.readahead, maxReadahead)
		}
		if !it.loadBlock(next) {
			return it.invalidate()
		}
		if it.bi.first() {
			return it.checkRow()
		}
	}
}

// pastUpper reports whether every row of block e is >= UpperBound.
func (it *TableIter) pastUpper(e *indexEntry) bool {
	return it.o.UpperBound != nil && e.compareFirstKey(it.o.UpperBound) >= 0
}

// checkRow validates the position against UpperBound.
func (it *TableIter) checkRow() bool {
	if it.checkUpper && bytes.Compare(it.bi.key, it.o.UpperBound) >= 0 {
		return it.invalidate()
	}
	it.valid = true
	return true
}

func (it *TableIter) invalidate() bool {
	it.valid = false
	return false
}

// loadBlock points bi at block i, from the read-ahead span, the cache or the
// object. On failure it sets it.err.
func (it *TableIter) loadBlock(i int) bool {
	e := it.index.entry(i)
	data, err := it.blockData(i, e.handle)
	if err == nil {
		if err = it.bi.init(data); err != nil {
			err = corruptErr(it.r.name, int64(e.handle.offset), err)
		}
	}
	if err != nil {
		it.err, it.blk = err, -1
		it.bi.data = nil
		return false
	}
	it.blk = i
	it.checkUpper = it.o.UpperBound != nil && bytes.Compare(e.lastKey, it.o.UpperBound) >= 0
	return true
}

func (it *TableIter) blockData(i int, h blockHandle) ([]byte, error) {
	r := it.r
	if i >= it.spanFirst && i < it.spanEnd {
		return it.fromSpan(h)
	}
	if r.cache != nil {
		if v, ok := r.cache.get(r.id, h.offset); ok {
			return v, nil
		}
	}
	if it.readahead == 0 {
		return r.readBlock(it.ctx, h, !it.o.NoFillCache)
	}
	// Read blocks i..end-1 in one request: as many as fit in the readahead
	// budget, stopping before a block past UpperBound or already cached.
	end, length := i+1, h.length+trailerLen
	for ; end < it.index.n; end++ {
		e := it.index.entry(end)
		if length+e.handle.length+trailerLen > uint64(it.readahead) || it.pastUpper(&e) {
			break
		}
		if r.cache != nil {
			if _, ok := r.cache.get(r.id, e.handle.offset); ok {
				break
			}
		}
		length += e.handle.length + trailerLen
	}
	span, err := r.read(it.ctx, int64(h.offset), int64(length))
	if err != nil {
		return nil, err
	}
	it.span, it.spanOff, it.spanFirst, it.spanEnd = span, h.offset, i, end
	return it.fromSpan(h)
}

// fromSpan decodes a block of the read-ahead span and offers it to the cache.
func (it *TableIter) fromSpan(h blockHandle) ([]byte, error) {
	r := it.r
	fill := r.cache != nil && !it.o.NoFillCache
	var b []byte
	var err error
	if fill {
		b, _, err = decodeBlockOwned(it.span[h.offset-it.spanOff:], h.length)
	} else {
		b, _, err = decodeBlock(it.span[h.offset-it.spanOff:], h.length, maxBlockLen)
	}
	if err != nil {
		return nil, corruptErr(r.name, int64(h.offset), err)
	}
	if fill {
		r.cache.set(r.id, h.offset, b, false)
	}
	return b, nil
}
