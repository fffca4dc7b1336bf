package sst

import "bytes"

// ConcatSource describes a sorted run to NewConcatIter: n parts with
// ascending, disjoint key ranges, each opened only when the iteration
// reaches it.
type ConcatSource struct {
	N int
	// Bounds returns the smallest and largest key of part i.
	Bounds func(i int) (smallest, largest []byte)
	// Open returns an iterator over part i, already limited to the bounds.
	Open func(i int) (Iterator, error)
	// Lower and Upper bound the iteration (Upper exclusive); nil for none.
	Lower, Upper []byte
}

// concatIter iterates a sorted run one part at a time, so a bounded scan
// opens only the parts that overlap its bounds.
type concatIter struct {
	src ConcatSource
	idx int
	cur Iterator
	err error
}

var _ Iterator = (*concatIter)(nil)

// NewConcatIter returns an iterator over the parts of src in order.
func NewConcatIter(src ConcatSource) Iterator { return &concatIter{src: src} }

// open positions on part i (or past the end) with a fresh child iterator.
func (c *concatIter) open(i int) bool {
	if c.cur != nil {
		if err := c.cur.Close(); err != nil && c.err == nil {
			c.err = err
		}
		c.cur = nil
	}
	c.idx = i
	if i >= c.src.N || c.err != nil {
		return false
	}
	if smallest, _ := c.src.Bounds(i); c.src.Upper != nil && bytes.Compare(smallest, c.src.Upper) >= 0 {
		c.idx = c.src.N
		return false
	}
	it, err := c.src.Open(i)
	if err != nil {
		c.err = err
		return false
	}
	c.cur = it
	return true
}

// skipEmpty moves on to following parts while the current one is exhausted.
func (c *concatIter) skipEmpty(valid bool) bool {
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

func (c *concatIter) First() bool {
	if c.src.Lower != nil {
		return c.SeekGE(c.src.Lower)
	}
	c.err = nil
	if !c.open(0) {
		return false
	}
	return c.skipEmpty(c.cur.First())
}

func (c *concatIter) SeekGE(key []byte) bool {
	c.err = nil
	if c.src.Lower != nil && bytes.Compare(key, c.src.Lower) < 0 {
		key = c.src.Lower
	}
	// The first part whose largest key is >= key.
	lo, hi := 0, c.src.N
	for lo < hi {
		mid := (lo + hi) / 2
		if _, largest := c.src.Bounds(mid); bytes.Compare(largest, key) < 0 {
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

func (c *concatIter) Next() bool {
	if c.cur == nil {
		return false
	}
	return c.skipEmpty(c.cur.Next())
}

func (c *concatIter) Valid() bool  { return c.cur != nil && c.cur.Valid() }
func (c *concatIter) Row() *Row    { return c.cur.Row() }
func (c *concatIter) Error() error { return c.err }

func (c *concatIter) Close() error {
	c.open(c.src.N)
	return c.err
}
