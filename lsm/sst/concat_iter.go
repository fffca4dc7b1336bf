package sst

import "bytes"

// ConcatParts describe a sorted run to a ConcatIter: parts with ascending,
// disjoint key ranges, each opened only when the iteration reaches it.
type ConcatParts interface {
	// Len returns the number of parts.
	Len() int
	// Bounds returns the smallest and largest key of part i.
	Bounds(i int) (smallest, largest []byte)
	// Open returns an iterator over part i, already limited to the
	// iteration's bounds.
	Open(i int) (Iterator, error)
}

// ConcatIter iterates a sorted run one part at a time, so a bounded scan
// opens only the parts that overlap its bounds. A type that embeds one and
// is its own ConcatParts (the engine's level iterator) makes a run's
// iterator one allocation.
type ConcatIter struct {
	parts        ConcatParts
	n            int
	lower, upper []byte // nil for none; upper exclusive
	idx          int
	cur          Iterator
	skip         KeySkipper // cur's, nil when it has none
	err          error
}

var _ KeySkipper = (*ConcatIter)(nil)

// NewConcatIter returns an iterator over parts in order, within [lower,
// upper) (nil: unbounded).
func NewConcatIter(parts ConcatParts, lower, upper []byte) *ConcatIter {
	c := new(ConcatIter)
	c.Init(parts, lower, upper)
	return c
}

// Init makes c an unpositioned iterator over parts, as NewConcatIter.
func (c *ConcatIter) Init(parts ConcatParts, lower, upper []byte) {
	*c = ConcatIter{parts: parts, n: parts.Len(), lower: lower, upper: upper}
}

// open positions on part i (or past the end) with a fresh child iterator.
func (c *ConcatIter) open(i int) bool {
	if c.cur != nil {
		if err := c.cur.Close(); err != nil && c.err == nil {
			c.err = err
		}
		c.cur, c.skip = nil, nil
	}
	c.idx = i
	if i >= c.n || c.err != nil {
		return false
	}
	if smallest, _ := c.parts.Bounds(i); c.upper != nil && bytes.Compare(smallest, c.upper) >= 0 {
		c.idx = c.n
		return false
	}
	it, err := c.parts.Open(i)
	if err != nil {
		c.err = err
		return false
	}
	c.cur = it
	c.skip, _ = it.(KeySkipper)
	return true
}

// skipEmpty moves on to following parts while the current one is exhausted.
func (c *ConcatIter) skipEmpty(valid bool) bool {
	for !valid {
		if c.cur != nil {
			if err := c.cur.Error(); err != nil {
				c.err = err
				return false
			}
		}
		if !c.open(c.idx + 1) {
			return false
		}
		valid = c.cur.First()
	}
	return true
}

func (c *ConcatIter) First() bool {
	if c.lower != nil {
		return c.SeekGE(c.lower)
	}
	c.err = nil
	if !c.open(0) {
		return false
	}
	return c.skipEmpty(c.cur.First())
}

func (c *ConcatIter) SeekGE(key []byte) bool {
	c.err = nil
	if c.lower != nil && bytes.Compare(key, c.lower) < 0 {
		key = c.lower
	}
	// The first part whose largest key is >= key.
	lo, hi := 0, c.n
	for lo < hi {
		mid := (lo + hi) / 2
		if _, largest := c.parts.Bounds(mid); bytes.Compare(largest, key) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if !c.open(lo) {
		return false
	}
	return c.skipEmpty(c.cur.SeekGE(key))
}

func (c *ConcatIter) Next() bool {
	if c.cur == nil {
		return false
	}
	return c.skipEmpty(c.cur.Next())
}

// SkipKey moves past the remaining versions of key, the current row's key.
// The parts' key ranges are disjoint, so the versions all lie in the
// current part.
func (c *ConcatIter) SkipKey(key []byte) bool {
	if c.skip == nil {
		if c.cur == nil {
			return false
		}
		return c.skipEmpty(stepPast(c.cur, key))
	}
	return c.skipEmpty(c.skip.SkipKey(key))
}

func (c *ConcatIter) Valid() bool  { return c.cur != nil && c.cur.Valid() }
func (c *ConcatIter) Row() *Row    { return c.cur.Row() }
func (c *ConcatIter) Error() error { return c.err }

func (c *ConcatIter) Close() error {
	c.open(c.n)
	return c.err
}
