package sst

import "container/heap"

// mergingIter merges child iterators into one stream ordered by key
// ascending then seq descending. It yields every version: the engine's
// iterator picks the visible one per key, compaction the newest.
type mergingIter struct {
	children []Iterator
	h        iterHeap
	err      error
}

var _ Iterator = (*mergingIter)(nil)

type iterHeap []Iterator

func (h iterHeap) Len() int { return len(h) }
func (h iterHeap) Less(i, j int) bool {
	a, b := h[i].Row(), h[j].Row()
	return Compare(a.Key, a.Seq, b.Key, b.Seq) < 0
}
func (h iterHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *iterHeap) Push(x any)   { *h = append(*h, x.(Iterator)) }
func (h *iterHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// NewMergingIter merges children, which it owns: Close closes them.
func NewMergingIter(children []Iterator) Iterator { return newMergingIter(children) }

func newMergingIter(children []Iterator) *mergingIter {
	return &mergingIter{children: children, h: make(iterHeap, 0, len(children))}
}

// rebuild fills the heap with every valid child, after each child was
// positioned; ok reports whether every child positioned without error.
func (m *mergingIter) rebuild() bool {
	m.h = m.h[:0]
	for _, c := range m.children {
		if c.Valid() {
			m.h = append(m.h, c)
		} else if err := c.Error(); err != nil {
			m.err = err
		}
	}
	if m.err != nil {
		m.h = m.h[:0]
		return false
	}
	heap.Init(&m.h)
	return len(m.h) > 0
}

func (m *mergingIter) First() bool {
	m.err = nil
	for _, c := range m.children {
		c.First()
	}
	return m.rebuild()
}

func (m *mergingIter) SeekGE(key []byte) bool {
	m.err = nil
	for _, c := range m.children {
		c.SeekGE(key)
	}
	return m.rebuild()
}

func (m *mergingIter) Next() bool {
	if len(m.h) == 0 {
		return false
	}
	top := m.h[0]
	if top.Next() {
		heap.Fix(&m.h, 0)
	} else {
		heap.Pop(&m.h)
		if err := top.Error(); err != nil {
			m.err = err
			m.h = m.h[:0]
			return false
		}
	}
	return len(m.h) > 0
}

func (m *mergingIter) Valid() bool  { return len(m.h) > 0 }
func (m *mergingIter) Row() Row     { return m.h[0].Row() }
func (m *mergingIter) Error() error { return m.err }

func (m *mergingIter) Close() error {
	for _, c := range m.children {
		if err := c.Close(); err != nil && m.err == nil {
			m.err = err
		}
	}
	m.h = m.h[:0]
	return m.err
}
