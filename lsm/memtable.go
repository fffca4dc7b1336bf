package lsm

import (
	"bytes"
	"hash/maphash"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/stratakv/strata/lsm/sst"
)

const maxHeight = 20

// skipNode is one row of the memtable. Its fields never change after the node
// is published, except the next pointers of higher levels being linked.
type skipNode struct {
	row  sst.Row
	next [maxHeight]atomic.Pointer[skipNode]
}

// memtable is a skiplist ordered by key ascending then seq descending. One
// writer at a time inserts (REQUIRES: DB.commitMu held); any number of readers
// traverse it without locks. A node is linked bottom-up with atomic stores
// after its own pointers are set, so a reader sees either the whole node or
// nothing of it.
type memtable struct {
	head   skipNode
	height atomic.Int32
	rnd    *rand.Rand // used only by the single inserter

	size      atomic.Int64 // approximate bytes
	entries   atomic.Int64
	maxSeq    atomic.Uint64
	clockTick atomic.Int64 // newest batch time in the memtable

	// index maps each key to its newest node, so a point read costs a
	// hash lookup instead of a skiplist seek (the seek's comparisons were a
	// third of a SET's CPU). Sharded, so readers rarely share a lock.
	seed  maphash.Seed
	index [memIndexShards]memIndexShard
}

const memIndexShards = 64

type memIndexShard struct {
	mu sync.RWMutex
	m  map[string]*skipNode
	_  [64 - 8 - 24]byte // keep shards on their own cache lines
}

func newMemtable() *memtable {
	m := &memtable{rnd: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())), seed: maphash.MakeSeed()}
	for i := range m.index {
		m.index[i].m = make(map[string]*skipNode)
	}
	m.height.Store(1)
	return m
}

func (m *memtable) randomHeight() int {
	h := 1
	for h < maxHeight && m.rnd.Uint32()&3 == 0 {
		h++
	}
	return h
}

// less reports whether node n sorts before (key, seq).
func nodeLess(n *skipNode, key []byte, seq uint64) bool {
	return sst.Compare(n.row.Key, n.row.Seq, key, seq) < 0
}

// add inserts a row. The row's slices must not be modified afterwards.
// REQUIRES: the caller serializes add calls.
func (m *memtable) add(r sst.Row) {
	var prev [maxHeight]*skipNode
	x := &m.head
	for level := int(m.height.Load()) - 1; level >= 0; level-- {
		for {
			nx := x.next[level].Load()
			if nx == nil || !nodeLess(nx, r.Key, r.Seq) {
				break
			}
			x = nx
		}
		prev[level] = x
	}
	h := m.randomHeight()
	if cur := int(m.height.Load()); h > cur {
		for level := cur; level < h; level++ {
			prev[level] = &m.head
		}
		m.height.Store(int32(h))
	}
	n := &skipNode{row: r}
	for level := 0; level < h; level++ {
		n.next[level].Store(prev[level].next[level].Load())
	}
	for level := 0; level < h; level++ {
		prev[level].next[level].Store(n)
	}
	// Index the node once it is linked: a reader that finds it walks on
	// from it to the key's older versions.
	sh := m.shard(r.Key)
	sh.mu.Lock()
	if old := sh.m[string(r.Key)]; old == nil || old.row.Seq < r.Seq {
		sh.m[string(r.Key)] = n
	}
	sh.mu.Unlock()
	m.size.Add(int64(len(r.Key) + len(r.Value) + 48))
	m.entries.Add(1)
	if r.Seq > m.maxSeq.Load() {
		m.maxSeq.Store(r.Seq)
	}
}

// seekGE returns the first node at or after (key, seq).
func (m *memtable) seekGE(key []byte, seq uint64) *skipNode {
	x := &m.head
	for level := int(m.height.Load()) - 1; level >= 0; level-- {
		for {
			nx := x.next[level].Load()
			if nx == nil || !nodeLess(nx, key, seq) {
				break
			}
			x = nx
		}
	}
	return x.next[0].Load()
}

func (m *memtable) shard(key []byte) *memIndexShard {
	return &m.index[maphash.Bytes(m.seed, key)%memIndexShards]
}

// get returns the newest row for key with seq <= readSeq: the key's newest
// node from the index, then older versions along level 0 (they follow it,
// as the list orders a key's versions newest first).
func (m *memtable) get(key []byte, readSeq uint64) (sst.Row, bool) {
	sh := m.shard(key)
	sh.mu.RLock()
	n := sh.m[string(key)]
	sh.mu.RUnlock()
	for ; n != nil && bytes.Equal(n.row.Key, key); n = n.next[0].Load() {
		if n.row.Seq <= readSeq {
			return n.row, true
		}
	}
	return sst.Row{}, false
}

func (m *memtable) empty() bool { return m.entries.Load() == 0 }

// memIter iterates a memtable within bounds. It yields every version; the
// merging iterator above it applies the read seq.
type memIter struct {
	m          *memtable
	lower      []byte
	upper      []byte
	cur        *skipNode
	positioned bool
}

var _ sst.Iterator = (*memIter)(nil)

func (m *memtable) newIter(lower, upper []byte) *memIter {
	return &memIter{m: m, lower: lower, upper: upper}
}

func (it *memIter) check() bool {
	if it.cur != nil && it.upper != nil && bytes.Compare(it.cur.row.Key, it.upper) >= 0 {
		it.cur = nil
	}
	return it.cur != nil
}

func (it *memIter) First() bool {
	if it.lower != nil {
		return it.SeekGE(it.lower)
	}
	it.cur = it.m.head.next[0].Load()
	return it.check()
}

func (it *memIter) SeekGE(key []byte) bool {
	if it.lower != nil && bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	it.cur = it.m.seekGE(key, ^uint64(0))
	return it.check()
}

func (it *memIter) Next() bool {
	if it.cur == nil {
		return false
	}
	it.cur = it.cur.next[0].Load()
	return it.check()
}

func (it *memIter) Valid() bool  { return it.cur != nil }
func (it *memIter) Row() sst.Row { return it.cur.row }
func (it *memIter) Error() error { return nil }
func (it *memIter) Close() error { it.cur = nil; return nil }
