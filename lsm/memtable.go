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

// skipNode is one key of the memtable: a skiplist node whose versions
// hang off it newest first. Its key and next pointers of level 0 are set
// before it is published; higher levels are linked afterwards, bottom-up.
type skipNode struct {
	key      []byte
	versions atomic.Pointer[memVersion] // newest first; nil only in the head
	next     []atomic.Pointer[skipNode] // one per level of the node's height
}

// memVersion is one row of a key. Immutable once published: a new version
// is pushed in front of the chain with one atomic store.
type memVersion struct {
	row   sst.Row
	older *memVersion
}

// memtable is a skiplist of keys in ascending order, each with its versions
// by seq descending, so it yields rows as (key ascending, seq descending).
// One writer at a time adds (REQUIRES: DB.commitMu held); any number of
// readers traverse it without locks. A new key's node is linked bottom-up
// with atomic stores after its own fields are set; a new version of a key
// already present is one atomic store on its node, found through a hash
// index: an overwrite costs no skiplist seek (the seek's comparisons, each
// a cache miss or two, were a third of a SET's CPU).
type memtable struct {
	head   skipNode
	height atomic.Int32
	rnd    *rand.Rand // used only by the single writer

	size      atomic.Int64 // approximate bytes
	entries   atomic.Int64 // versions
	maxSeq    atomic.Uint64
	clockTick atomic.Int64 // newest batch time in the memtable

	// index maps each key to its node, for point reads and overwrites.
	// Sharded, so readers rarely share a lock.
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
	m.head.next = make([]atomic.Pointer[skipNode], maxHeight)
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

func (m *memtable) shard(key []byte) *memIndexShard {
	return &m.index[maphash.Bytes(m.seed, key)%memIndexShards]
}

// add inserts a row. The row's slices must not be modified afterwards.
// REQUIRES: the caller serializes add calls.
func (m *memtable) add(r sst.Row) {
	sh := m.shard(r.Key)
	n := sh.m[string(r.Key)] // the only writer may read without the lock
	if n != nil {
		m.addVersion(n, r)
	} else {
		n = m.insert(r)
		sh.mu.Lock()
		sh.m[string(r.Key)] = n
		sh.mu.Unlock()
	}
	m.size.Add(int64(len(r.Key) + len(r.Value) + 48))
	m.entries.Add(1)
	if r.Seq > m.maxSeq.Load() {
		m.maxSeq.Store(r.Seq)
	}
}

// addVersion puts r among n's versions. Rows come in seq order, so r is
// normally the newest and is pushed in front; otherwise the chain is copied
// with r in its place, and the copy published at once.
func (m *memtable) addVersion(n *skipNode, r sst.Row) {
	head := n.versions.Load()
	if r.Seq > head.row.Seq {
		n.versions.Store(&memVersion{row: r, older: head})
		return
	}
	var newer []sst.Row
	v := head
	for ; v != nil && v.row.Seq > r.Seq; v = v.older {
		newer = append(newer, v.row)
	}
	chain := &memVersion{row: r, older: v}
	for i := len(newer) - 1; i >= 0; i-- {
		chain = &memVersion{row: newer[i], older: chain}
	}
	n.versions.Store(chain)
}

// insert links a new node for r's key, whose first version is r.
func (m *memtable) insert(r sst.Row) *skipNode {
	var prev [maxHeight]*skipNode
	x := &m.head
	for level := int(m.height.Load()) - 1; level >= 0; level-- {
		for {
			nx := x.next[level].Load()
			if nx == nil || bytes.Compare(nx.key, r.Key) >= 0 {
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
	n := &skipNode{key: r.Key, next: make([]atomic.Pointer[skipNode], h)}
	n.versions.Store(&memVersion{row: r})
	for level := 0; level < h; level++ {
		n.next[level].Store(prev[level].next[level].Load())
	}
	for level := 0; level < h; level++ {
		prev[level].next[level].Store(n)
	}
	return n
}

// seekGE returns the first node whose key is >= key.
func (m *memtable) seekGE(key []byte) *skipNode {
	x := &m.head
	for level := int(m.height.Load()) - 1; level >= 0; level-- {
		for {
			nx := x.next[level].Load()
			if nx == nil || bytes.Compare(nx.key, key) >= 0 {
				break
			}
			x = nx
		}
	}
	return x.next[0].Load()
}

// get returns the newest row for key with seq <= readSeq.
func (m *memtable) get(key []byte, readSeq uint64) (sst.Row, bool) {
	sh := m.shard(key)
	sh.mu.RLock()
	n := sh.m[string(key)]
	sh.mu.RUnlock()
	if n == nil {
		return sst.Row{}, false
	}
	for v := n.versions.Load(); v != nil; v = v.older {
		if v.row.Seq <= readSeq {
			return v.row, true
		}
	}
	return sst.Row{}, false
}

func (m *memtable) empty() bool { return m.entries.Load() == 0 }

// each calls fn with every key's newest row, in key order.
func (m *memtable) each(fn func(sst.Row) error) error {
	for n := m.head.next[0].Load(); n != nil; n = n.next[0].Load() {
		if err := fn(n.versions.Load().row); err != nil {
			return err
		}
	}
	return nil
}

// memIter iterates a memtable within bounds. It yields every version; the
// merging iterator above it applies the read seq.
type memIter struct {
	m     *memtable
	lower []byte
	upper []byte
	cur   *skipNode
	ver   *memVersion
}

var _ sst.Iterator = (*memIter)(nil)

func (m *memtable) newIter(lower, upper []byte) *memIter {
	return &memIter{m: m, lower: lower, upper: upper}
}

// at positions the iterator at node n's newest version.
func (it *memIter) at(n *skipNode) bool {
	it.cur, it.ver = n, nil
	if n != nil && it.upper != nil && bytes.Compare(n.key, it.upper) >= 0 {
		it.cur = nil
	}
	if it.cur != nil {
		it.ver = it.cur.versions.Load()
	}
	return it.cur != nil
}

func (it *memIter) First() bool {
	if it.lower != nil {
		return it.SeekGE(it.lower)
	}
	return it.at(it.m.head.next[0].Load())
}

func (it *memIter) SeekGE(key []byte) bool {
	if it.lower != nil && bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	return it.at(it.m.seekGE(key))
}

func (it *memIter) Next() bool {
	if it.cur == nil {
		return false
	}
	if it.ver.older != nil {
		it.ver = it.ver.older
		return true
	}
	return it.at(it.cur.next[0].Load())
}

func (it *memIter) Valid() bool  { return it.cur != nil }
func (it *memIter) Row() sst.Row { return it.ver.row }
func (it *memIter) Error() error { return nil }
func (it *memIter) Close() error { it.cur, it.ver = nil, nil; return nil }
