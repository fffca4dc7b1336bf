package sst

import "bytes"

// MergingIter merges child iterators into one stream ordered by key
// ascending then seq descending. It yields every version: the engine's
// iterator picks the visible one per key, compaction the newest.
//
// Its heap holds each child's current key and seq, read once per move of
// the child: comparing through the children's Row (an interface call and
// a row copy per side, two per comparison) and container/heap's interface
// calls were most of a merged step, paid once per version of every key.
//
// A scan of one collection usually finds long stretches of keys in one
// child (a list's newest elements in the memtable, older ones in an SST).
// While the top child stays below both of its heap children, which do not
// move, the heap needs one comparison per step: kid caches which of the
// two is the smaller, and alone records that the top's key is strictly
// below it, so SkipKey need not look for the key in other children.
type MergingIter struct {
	children []Iterator
	h        []heapItem
	at       []int // SkipKey's scratch: heap indexes of the children at its key
	err      error
	// kid is the heap index (1 or 2) of the smaller of the top's
	// children, 0 when unknown: any change below the top resets it.
	kid int
	// alone: the top's key is below every other child's key.
	alone bool
	// group: at holds the heap indexes of every child at the top's key,
	// as the last SkipKey left them (see inStep); false when unknown.
	group bool

	// Room for the heap and at of a merge of a few children, so that
	// making one (once per scan) is one allocation.
	hbuf  [MergeInline]heapItem
	atbuf [MergeInline]int
}

// MergeInline is how many children a MergingIter holds without allocating
// more: a memtable and a few SSTs or sorted runs.
const MergeInline = 8

var _ Iterator = (*MergingIter)(nil)

type heapItem struct {
	it  Iterator
	key []byte // it.Row().Key, valid until it moves
	seq uint64
	// skip is its SkipKey, nil when it has none (it steps with Next).
	skip KeySkipper
}

func (x *heapItem) load() {
	r := x.it.Row()
	x.key, x.seq = r.Key, r.Seq
}

func itemLess(a, b *heapItem) bool { return Compare(a.key, a.seq, b.key, b.seq) < 0 }

// down restores the heap order below i.
func (m *MergingIter) down(i int) {
	h := m.h
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && itemLess(&h[r], &h[l]) {
			j = r
		}
		if !itemLess(&h[j], &h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// NewMergingIter merges children, which it owns: Close closes them. A lone
// child is returned as it is: it is already the merged stream.
func NewMergingIter(children []Iterator) Iterator {
	if len(children) == 1 {
		return children[0]
	}
	return newMergingIter(children)
}

func newMergingIter(children []Iterator) *MergingIter {
	m := new(MergingIter)
	m.Init(children)
	return m
}

// Init makes m an unpositioned merge of children, as NewMergingIter makes
// one of several, for a holder that keeps one to reuse. REQUIRES: m was
// closed (or is new).
func (m *MergingIter) Init(children []Iterator) {
	*m = MergingIter{children: children}
	if len(children) <= MergeInline {
		m.h, m.at = m.hbuf[:0], m.atbuf[:0]
	} else {
		m.h, m.at = make([]heapItem, 0, len(children)), make([]int, 0, len(children))
	}
}

// rebuild fills the heap with every valid child, after each child was
// positioned; ok reports whether every child positioned without error.
func (m *MergingIter) rebuild() bool {
	m.h = m.h[:0]
	m.kid, m.alone, m.group = 0, false, false
	for _, c := range m.children {
		if c.Valid() {
			skip, _ := c.(KeySkipper)
			m.h = append(m.h, heapItem{it: c, skip: skip})
			m.h[len(m.h)-1].load()
		} else if err := c.Error(); err != nil {
			m.err = err
		}
	}
	if m.err != nil {
		m.h = m.h[:0]
		return false
	}
	for i := len(m.h)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return len(m.h) > 0
}

func (m *MergingIter) First() bool {
	m.err = nil
	for _, c := range m.children {
		c.First()
	}
	return m.rebuild()
}

func (m *MergingIter) SeekGE(key []byte) bool {
	m.err = nil
	for _, c := range m.children {
		c.SeekGE(key)
	}
	return m.rebuild()
}

func (m *MergingIter) Next() bool {
	if len(m.h) == 0 {
		return false
	}
	ok := m.h[0].it.Next()
	if ok && len(m.h) == 1 {
		return true // nothing to compare with: a lone child's key is not needed
	}
	return m.moved(ok)
}

// moved restores the heap after its top child moved: ok reports whether
// the child is still positioned. It loads the child's key even when the
// child is alone (Next does not).
func (m *MergingIter) moved(ok bool) bool {
	m.group = false
	top := &m.h[0]
	if ok {
		top.load()
		if m.stays() {
			return true
		}
	} else {
		if err := top.it.Error(); err != nil {
			m.err = err
			m.h = m.h[:0]
			return false
		}
		last := len(m.h) - 1
		m.h[0] = m.h[last]
		m.h[last] = heapItem{}
		m.h = m.h[:last]
	}
	m.kid, m.alone = 0, false
	m.down(0)
	return len(m.h) > 0
}

// stays reports whether the top, just moved, is still below both of its
// children, so the heap is in order as it is; it sets alone. Only the top
// moved since kid was set, so one comparison decides.
func (m *MergingIter) stays() bool {
	n := len(m.h)
	if n == 1 {
		m.alone = true
		return true
	}
	if m.kid == 0 {
		m.kid = 1
		if n > 2 && itemLess(&m.h[2], &m.h[1]) {
			m.kid = 2
		}
	}
	top, kid := &m.h[0], &m.h[m.kid]
	switch c := bytes.Compare(top.key, kid.key); {
	case c < 0:
		m.alone = true
		return true
	case c == 0 && top.seq > kid.seq:
		m.alone = false
		return true
	}
	return false
}

// SkipKey moves each child at key past its versions of it, once each,
// instead of stepping the heap once per version.
func (m *MergingIter) SkipKey(key []byte) bool {
	if len(m.h) == 0 {
		return false
	}
	if m.alone { // no other child is at key (see stays)
		return m.moved(skipChild(&m.h[0], key))
	}
	at := m.at
	if !m.group {
		// The children at key are the top and a subtree under it (no
		// child's key is below its parent's); a walk level by level
		// finds them in index order. The current row is the top's, at
		// key; a lone top's loaded key may be stale (Next does not load
		// it), so it is not compared.
		at = append(m.at[:0], 0)
		for j := 0; j < len(at); j++ {
			for c := 2*at[j] + 1; c <= 2*at[j]+2 && c < len(m.h); c++ {
				if bytes.Equal(m.h[c].key, key) {
					at = append(at, c)
				}
			}
		}
		m.at = at
		if len(at) == 1 {
			return m.moved(skipChild(&m.h[0], key))
		}
	}
	// Several versions of key, in as many children (a key rewritten since
	// its older versions were flushed): move them all, then sift them
	// down, the deepest first. Their keys only grew, so each sift finds
	// heaps below it, and the heap is whole again after one pass, where
	// a sift from the top per version compared keys twice per level.
	m.kid, m.alone, m.group = 0, false, false
	exhausted := false
	for _, i := range at {
		x := &m.h[i]
		if skipChild(x, key) {
			x.load()
			continue
		}
		if err := x.it.Error(); err != nil {
			m.err = err
			clear(m.h)
			m.h = m.h[:0]
			return false
		}
		x.it = nil
		exhausted = true
	}
	if exhausted {
		live := m.h[:0]
		for _, x := range m.h {
			if x.it != nil {
				live = append(live, x)
			}
		}
		clear(m.h[len(live):])
		m.h = live
		for i := len(m.h)/2 - 1; i >= 0; i-- {
			m.down(i)
		}
		return len(m.h) > 0
	}
	if m.inStep(at) {
		m.group = true
		return true
	}
	for j := len(at) - 1; j >= 0; j-- {
		m.down(at[j])
	}
	return true
}

// inStep reports whether the children at, just moved past the key they
// shared, all came to one key, in the order of their seqs as they stand,
// and below every other child: then the heap is in order as it is and at
// is still the set of children at the top's key. A list's elements
// rewritten in the memtable over older versions in a few SSTs move so,
// key after key; seeing it costs a key comparison per child, where the
// sifts compared twice per level and the next SkipKey looked for the set
// again.
func (m *MergingIter) inStep(at []int) bool {
	h := m.h
	if len(h) > 64 {
		return false
	}
	top := &h[0]
	in := uint64(1)
	for _, i := range at[1:] {
		x, parent := &h[i], &h[(i-1)/2]
		if x.seq > parent.seq || !bytes.Equal(x.key, top.key) {
			return false
		}
		in |= 1 << i
	}
	if len(at) == len(h) {
		return true
	}
	// The other children hanging from the set: each heads a heap of
	// keys at or above its own.
	for _, i := range at {
		for c := 2*i + 1; c <= 2*i+2 && c < len(h); c++ {
			if in&(1<<c) == 0 && bytes.Compare(top.key, h[c].key) >= 0 {
				return false
			}
		}
	}
	return true
}

// skipChild moves x's child past key, with its own SkipKey if it has one.
func skipChild(x *heapItem, key []byte) bool {
	if x.skip != nil {
		return x.skip.SkipKey(key)
	}
	return stepPast(x.it, key)
}

func (m *MergingIter) Valid() bool  { return len(m.h) > 0 }
func (m *MergingIter) Row() *Row    { return m.h[0].it.Row() }
func (m *MergingIter) Error() error { return m.err }

func (m *MergingIter) Close() error {
	for _, c := range m.children {
		if err := c.Close(); err != nil && m.err == nil {
			m.err = err
		}
	}
	clear(m.h)
	m.h = m.h[:0]
	m.kid, m.alone, m.group = 0, false, false
	return m.err
}
