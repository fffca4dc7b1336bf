package lsm

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
	"sync/atomic"

	"github.com/stratakv/strata/lsm/sst"
)

const maxHeight = 20

// memtable is a skiplist of keys in ascending order, each with its versions
// by seq descending, so it yields rows as (key ascending, seq descending).
// Everything it holds lives in its arena (see arena), linked by offsets.
//
// One writer at a time adds (REQUIRES: DB.commitMu held, or the one
// goroutine of an IndexedBatch); any number of readers traverse it without
// locks. A record is filled before the atomic store that publishes it: a new
// key's node is linked bottom-up after its fields are set, and a new version
// of a key already present is one atomic store on its node, found through a
// hash index, so an overwrite costs no skiplist seek (the seek's
// comparisons, each a cache miss or two, were a third of a SET's CPU).
//
// A search down the skiplist is bound by cache misses: each node it looks
// at is one, as the list outgrows the CPU's caches. So a link carries, with
// the node it points to, that node's order against the linking node: their
// longest common prefix and the next node's byte there (see link). A search
// that knows how its key relates to the node it stands on can then tell,
// from the link alone, that the next node is past its key, and drops a
// level without loading it. Only the steps forward load nodes then, and
// there are fewer of them with half the nodes promoted at each level (not
// a quarter). A random insert into a million keys loads 22 nodes, where it
// loaded 33 before links carried this; 18 against 28 at 64k keys. A
// comparison that does load the node skips the prefix known to match.
//
// The records, in arena words:
//
//	node:    versions u64 (atomic: newest version) | keyLen u32 | height u32 |
//	         next[height] u64 (atomic link) | key
//	version: older u64 | seq u64 | expireAt u64 | valueLen u32 | kind u32 |
//	         value
//
// The fields every read loads come first, apart from those each add writes
// (see arena on why).
type memtable struct {
	a      *arena
	head   uint64 // node of height maxHeight, no key
	height atomic.Int32
	seed   maphash.Seed
	index  atomic.Pointer[memIndex]
	_      [cacheLine]byte

	rnd       *rand.Rand   // used only by the writer
	entries   atomic.Int64 // versions
	maxSeq    atomic.Uint64
	clockTick atomic.Int64 // newest batch tick in the memtable (DB.Write)
	indexed   int          // keys in the index; the writer's
	last      splice       // the writer's
}

// splice is where the last insert linked its node: at each level of the
// list, the node before it (or before its place, above its height) and
// the node after. A key that lands next to that node, as runs of inserts
// in order do (LPUSH adds each list row in front of the last, RPUSH
// after it), is linked from the splice without a search.
type splice struct {
	node       uint64 // 0: none yet
	height     int    // node's
	prev, next [maxHeight]uint64
}

const (
	nodeVersions = 0
	nodeKeyLen   = 8
	nodeHeight   = 12
	nodeNext     = 16

	verOlder    = 0
	verSeq      = 8
	verExpireAt = 16
	verValueLen = 24
	verKind     = 28
	verValue    = 32
)

func newMemtable() *memtable {
	m := &memtable{a: newArena(), rnd: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())), seed: maphash.MakeSeed()}
	m.head = m.newNode(nil, maxHeight)
	m.a.used.Store(0) // the head is overhead, not content
	m.height.Store(1)
	m.index.Store(newMemIndex(16))
	return m
}

// size is the memtable's bytes: everything its arena handed out.
func (m *memtable) size() int64 { return m.a.used.Load() }

// randomHeight gives a new node height h with probability 2^-h: see
// memtable on why half, not the usual quarter.
func (m *memtable) randomHeight() int {
	h := 1
	for h < maxHeight && m.rnd.Uint32()&1 == 0 {
		h++
	}
	return h
}

func (m *memtable) newNode(key []byte, height int) uint64 {
	n := m.a.alloc(nodeNext + 8*height + len(key))
	m.a.put32(n+nodeKeyLen, uint32(len(key)))
	m.a.put32(n+nodeHeight, uint32(height))
	copy(m.a.bytes(n+nodeNext+8*uint64(height), len(key)), key)
	return n
}

func (m *memtable) key(n uint64) []byte {
	rec := m.a.record(n)
	start := nodeNext + 8*int(recU32(rec, nodeHeight))
	end := start + int(recU32(rec, nodeKeyLen))
	return rec[start:end:end]
}

// nextAt is the node after n at level, 0 at the end.
func (m *memtable) nextAt(n uint64, level int) uint64 {
	return slotNode(m.linkAt(n, level))
}

func (m *memtable) linkAt(n uint64, level int) uint64 {
	return m.a.load(n + nodeNext + 8*uint64(level))
}

// A link packs the node it points to, y (36 bits, as in a memIndex slot),
// with what orders y after the node x holding the link: d, the length of
// x's and y's longest common prefix (10 bits), y's byte at d (8 bits), and
// what follows that byte in y (tail, 2 bits): y's next byte (8 bits), or
// that y ends there, or nothing known:
//
//	next<<56 | byte<<48 | tail<<46 | d<<36 | node
//
// d = linkNoPrefix says nothing is known (a prefix of 1023 bytes or more,
// or an empty key under the head), and the search compares the keys in
// full. One atomic word, so a reader loads the node and its annotation
// together. The second byte settles most of the orders the first leaves
// open: neighbours deep in the list agree on the byte where they part from
// the node before them far more often than at random. Adding 100k random
// keys to a memtable of 1M, a search loaded 8.7 keys from their nodes per
// insert with one byte carried, 3.4 with two; cachegrind counted 14% fewer
// last-level cache misses per insert (a 4 MB cache, 400k inserts).
const (
	linkPrefixShift = slotNodeBits
	linkPrefixBits  = 10
	linkNoPrefix    = 1<<linkPrefixBits - 1
	linkTailShift   = linkPrefixShift + linkPrefixBits
	linkByteShift   = linkTailShift + 2
	linkNextShift   = linkByteShift + 8
	linkNodeMask    = 1<<slotNodeBits - 1
	linkUnknown     = linkNoPrefix << linkPrefixShift
)

// What a link's tail says of y after its byte at d.
const (
	tailUnknown = 0 // nothing
	tailNext    = 1 // y's byte at d+1 is the link's next byte
	tailEnds    = 2 // y ends after its byte at d
)

// The annotation fills the word: a wider node or prefix fails to compile.
var _ [64 - linkNextShift - 8]struct{}

// linkMeta is the annotation of a link to a node whose key is y from a node
// whose key's longest common prefix with y is d, where d < len(y).
func linkMeta(d int, y []byte) uint64 {
	if d >= linkNoPrefix {
		return linkUnknown
	}
	m := uint64(y[d])<<linkByteShift | uint64(d)<<linkPrefixShift
	if d+1 < len(y) {
		return m | tailNext<<linkTailShift | uint64(y[d+1])<<linkNextShift
	}
	return m | tailEnds<<linkTailShift
}

// linkByteMeta is linkMeta knowing only y's byte b at d.
func linkByteMeta(d int, b byte) uint64 {
	if d >= linkNoPrefix {
		return linkUnknown
	}
	return uint64(b)<<linkByteShift | uint64(d)<<linkPrefixShift
}

// linkTo is a link to node n, annotated with meta.
func linkTo(n, meta uint64) uint64 {
	if n == 0 {
		return 0
	}
	return meta | slotOf(0, n)
}

// order places y, the node link l points to, against key, for a search
// standing on x, the node holding l, where x < key and c is the length of
// their longest common prefix (the head's key, empty, is below every key).
// It reports whether y < key, and the length of key's and y's longest
// common prefix; when y >= key, meta is the annotation of a link from a
// node with key to y (unknown when y == key). It loads y only when the
// link's annotation cannot settle the order:
//
//   - d < c: y and x differ first at d, where key agrees with x, so y > key;
//   - d > c: y agrees with x at c, where x < key, so y < key;
//   - d == c: y's byte at c, carried by the link, against key's decides,
//     unless they are equal; then what the link says of y's next byte
//     against key's, unless they are equal too, or the link does not say.
func (m *memtable) order(key []byte, c int, l uint64) (less bool, lcp int, meta uint64) {
	d := int(l>>linkPrefixShift) & linkNoPrefix
	from := 0
	if d != linkNoPrefix {
		b := byte(l >> linkByteShift)
		switch {
		case d < c:
			return false, d, l &^ linkNodeMask
		case d > c:
			return true, c, 0
		case c == len(key): // key is a prefix of y
			return false, c, l &^ linkNodeMask
		case b > key[c]:
			return false, c, l &^ linkNodeMask
		case b < key[c]:
			return true, c, 0
		}
		// y and key agree up to c+1.
		switch (l >> linkTailShift) & 3 {
		case tailEnds: // y is key[:c+1]
			if c+1 == len(key) {
				return false, c + 1, linkUnknown
			}
			return true, c + 1, 0
		case tailNext:
			next := byte(l >> linkNextShift)
			switch {
			case c+1 == len(key) || next > key[c+1]: // key is a prefix of y, or below it
				return false, c + 1, linkByteMeta(c+1, next)
			case next < key[c+1]:
				return true, c + 1, 0
			}
			from = c + 2
		default:
			from = c + 1
		}
	}
	yk := m.key(slotNode(l))
	cmp, lcp := compareFrom(yk, key, from)
	switch {
	case cmp < 0:
		return true, lcp, 0
	case cmp > 0:
		return false, lcp, linkMeta(lcp, yk)
	}
	return false, lcp, linkUnknown
}

// compareFrom compares a and b, which agree on their first from bytes, and
// returns their order (as bytes.Compare) and the length of their longest
// common prefix.
func compareFrom(a, b []byte, from int) (int, int) {
	n := min(len(a), len(b))
	i := from
	for ; i+8 <= n; i += 8 {
		x, y := binary.BigEndian.Uint64(a[i:]), binary.BigEndian.Uint64(b[i:])
		if x != y {
			i += bits.LeadingZeros64(x^y) / 8
			if a[i] < b[i] {
				return -1, i
			}
			return 1, i
		}
	}
	for ; i < n; i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1, i
			}
			return 1, i
		}
	}
	switch {
	case len(a) < len(b):
		return -1, n
	case len(a) > len(b):
		return 1, n
	}
	return 0, n
}

// newVersion copies r into a version record whose older version is older.
func (m *memtable) newVersion(r sst.Row, older uint64) uint64 {
	v := m.a.alloc(verValue + len(r.Value))
	*m.a.word(v + verOlder) = older
	*m.a.word(v + verSeq) = r.Seq
	*m.a.word(v + verExpireAt) = uint64(r.ExpireAt)
	m.a.put32(v+verValueLen, uint32(len(r.Value)))
	m.a.put32(v+verKind, uint32(r.Kind))
	copy(m.a.bytes(v+verValue, len(r.Value)), r.Value)
	return v
}

func (m *memtable) older(v uint64) uint64 { return *m.a.word(v + verOlder) }
func (m *memtable) seq(v uint64) uint64   { return *m.a.word(v + verSeq) }

// row decodes version v of the key. Its slices point into the arena: they
// stay valid for as long as the caller holds them, and must not be
// modified.
func (m *memtable) row(key []byte, v uint64) sst.Row {
	var r sst.Row
	m.rowInto(&r, key, v)
	return r
}

// rowInto is row writing into *r, which an iterator keeps: a step of a
// scan then copies no row.
func (m *memtable) rowInto(r *sst.Row, key []byte, v uint64) {
	rec := m.a.record(v)
	r.Key = key
	r.Seq = recU64(rec, verSeq)
	r.ExpireAt = int64(recU64(rec, verExpireAt))
	r.Kind = sst.Kind(recU32(rec, verKind))
	r.Value = nil
	if n := int(recU32(rec, verValueLen)); n > 0 || r.Kind == sst.KindPut {
		r.Value = rec[verValue : verValue+n : verValue+n]
	}
}

// add inserts a copy of r and returns the copy: r with its key and value
// in the arena, where they stay, unchanged, for as long as anyone holds
// them. REQUIRES: no row with r's key and seq was added (a batch holds a
// key once, and each batch has its own seq).
func (m *memtable) add(r sst.Row) sst.Row {
	h := maphash.Bytes(m.seed, r.Key)
	var n, v uint64
	if n = m.lookup(r.Key, h); n != 0 {
		v = m.addVersion(n, r)
	} else {
		n = m.insert(r)
		v = *m.a.word(n + nodeVersions)
		m.indexAdd(h, n)
	}
	m.entries.Add(1)
	if r.Seq > m.maxSeq.Load() {
		m.maxSeq.Store(r.Seq)
	}
	r.Key = m.key(n)
	if len(r.Value) > 0 || r.Kind == sst.KindPut {
		r.Value = m.a.bytes(v+verValue, len(r.Value))
	}
	return r
}

// addVersion puts r among n's versions and returns r's. Rows come in seq
// order, so r is normally the newest and is pushed in front; otherwise the
// newer versions are copied in front of r, and the new chain published at
// once.
func (m *memtable) addVersion(n uint64, r sst.Row) uint64 {
	head := m.a.load(n + nodeVersions)
	// A key has one row per seq, so a row at the memtable's highest seq
	// is the key's newest: the first test spares reading the head's seq,
	// a cache miss.
	if r.Seq >= m.maxSeq.Load() || r.Seq > m.seq(head) {
		v := m.newVersion(r, head)
		m.a.store(n+nodeVersions, v)
		return v
	}
	var newer []uint64
	v := head
	for ; v != 0 && m.seq(v) > r.Seq; v = m.older(v) {
		newer = append(newer, v)
	}
	mine := m.newVersion(r, v)
	chain := mine
	key := m.key(n)
	for i := len(newer) - 1; i >= 0; i-- {
		chain = m.newVersion(m.row(key, newer[i]), chain)
	}
	m.a.store(n+nodeVersions, chain)
	return mine
}

// insert links a new node for r's key, whose first version is r.
func (m *memtable) insert(r sst.Row) uint64 {
	var prev, succ [maxHeight]uint64 // at each level: the node before, the link to the one after
	var prevLCP [maxHeight]int       // at each level: the key's common prefix with prev
	key := r.Key
	h := m.randomHeight()
	cur := int(m.height.Load())
	side := m.fromSplice(key, h, cur, &prev, &prevLCP, &succ)
	if side == 0 {
		m.search(key, cur, &prev, &prevLCP, &succ)
	}
	if h > cur {
		for level := cur; level < h; level++ {
			prev[level], prevLCP[level], succ[level] = m.head, 0, 0
		}
		m.height.Store(int32(h))
	}
	n := m.newNode(key, h)
	*m.a.word(n + nodeVersions) = m.newVersion(r, 0)
	for level := 0; level < h; level++ {
		*m.a.word(n + nodeNext + 8*uint64(level)) = succ[level]
	}
	for level := 0; level < h; level++ {
		meta := uint64(linkUnknown)
		if c := prevLCP[level]; c < len(key) {
			meta = linkMeta(c, key)
		}
		m.a.store(prev[level]+nodeNext+8*uint64(level), linkTo(n, meta))
	}
	m.last.moveTo(n, h, cur, side, &prev, &succ)
	return n
}

// moveTo makes the splice n's, which was linked at height h into a list
// of height cur, from the splice (side -1: just before the last node, 1:
// just after) or from a search (side 0, whose prev and succ it copies).
func (sp *splice) moveTo(n uint64, h, cur, side int, prev, succ *[maxHeight]uint64) {
	switch side {
	case -1: // the last node follows n where it stood
		for level := range sp.height {
			sp.next[level] = sp.node
		}
	case 1: // the last node precedes n where it stood
		for level := range sp.height {
			sp.prev[level] = sp.node
		}
	default:
		for level := range cur {
			sp.prev[level], sp.next[level] = prev[level], slotNode(succ[level])
		}
	}
	for level := cur; level < h; level++ { // levels n opened
		sp.prev[level], sp.next[level] = prev[level], 0
	}
	sp.node, sp.height = n, h
}

// search finds, at each of the list's levels below top, the node after
// which key goes (prev), key's common prefix with it (prevLCP), and the
// link from key to the node after (succ).
func (m *memtable) search(key []byte, top int, prev *[maxHeight]uint64, prevLCP *[maxHeight]int, succ *[maxHeight]uint64) {
	x, c := m.head, 0
	var stop uint64 // the link the level above stopped at, annotated for key
	for level := top - 1; level >= 0; level-- {
		for {
			l := m.linkAt(x, level)
			if l == 0 {
				succ[level] = 0
				break
			}
			if l&linkNodeMask == stop&linkNodeMask {
				// The node the level above stopped at: no need to
				// compare again.
				succ[level] = stop
				break
			}
			less, lcp, meta := m.order(key, c, l)
			if !less {
				stop = meta | l&linkNodeMask
				succ[level] = stop
				break
			}
			x, c = slotNode(l), lcp
		}
		prev[level], prevLCP[level] = x, c
	}
}

// fromSplice is search for a key that goes right before or right after
// N, the last node inserted, for the levels below the new node's height h
// only: it finds them from the splice, with two comparisons instead of a
// search. Before N, at each level the node before N (or before its place)
// comes before the key, and N, or the node after its place, after it.
// After N: N, or the node before its place, comes before, and the node
// after N (or after its place) after. It returns -1 or 1 for before or
// after N, and 0, having done nothing, for any other key.
func (m *memtable) fromSplice(key []byte, h, top int, prev *[maxHeight]uint64, prevLCP *[maxHeight]int, succ *[maxHeight]uint64) int {
	sp := &m.last
	if sp.node == 0 {
		return 0
	}
	nk := m.key(sp.node)
	order, lcpN := compareFrom(nk, key, 0)
	// The comparisons of the levels below are memoized by node (a node met
	// on the level below is not compared again), starting with N's.
	var lastPrev, lastSucc, succMeta uint64
	lcp, side := 0, 1
	if order > 0 {
		if p := sp.prev[0]; p != m.head {
			if order, _ := compareFrom(m.key(p), key, 0); order >= 0 {
				return 0
			}
		}
		side, lastSucc, succMeta = -1, sp.node, linkMeta(lcpN, nk)
	} else {
		if nx := sp.next[0]; nx != 0 {
			if order, _ := compareFrom(m.key(nx), key, 0); order <= 0 {
				return 0
			}
		}
		lastPrev, lcp = sp.node, lcpN
	}
	// At each level the new node is linked on, the nodes before and after
	// it, the latter as a link, as search leaves it.
	for level := range min(h, top) {
		p, nx := sp.prev[level], sp.next[level]
		if level < sp.height {
			if side < 0 {
				nx = sp.node
			} else {
				p = sp.node
			}
		}
		if p != lastPrev {
			lastPrev, lcp = p, 0
			if p != m.head {
				_, lcp = compareFrom(m.key(p), key, 0)
			}
		}
		prev[level], prevLCP[level], succ[level] = p, lcp, 0
		if nx != 0 {
			if nx != lastSucc {
				k := m.key(nx)
				_, d := compareFrom(k, key, 0)
				lastSucc, succMeta = nx, linkMeta(d, k)
			}
			succ[level] = succMeta | slotOf(0, nx)
		}
	}
	return side
}

// seekGE returns the first node whose key is >= key, or 0.
func (m *memtable) seekGE(key []byte) uint64 {
	x, c := m.head, 0
	var l, stop uint64
	for level := int(m.height.Load()) - 1; level >= 0; level-- {
		for {
			if l = m.linkAt(x, level); l == 0 || l&linkNodeMask == stop {
				break
			}
			stop = l & linkNodeMask
			less, lcp, _ := m.order(key, c, l)
			if !less {
				break
			}
			x, c = slotNode(l), lcp
		}
	}
	return slotNode(l)
}

// get returns the newest row for key with seq <= readSeq.
func (m *memtable) get(key []byte, readSeq uint64) (sst.Row, bool) {
	n := m.lookup(key, maphash.Bytes(m.seed, key))
	if n == 0 {
		return sst.Row{}, false
	}
	for v := m.a.load(n + nodeVersions); v != 0; v = m.older(v) {
		if m.seq(v) <= readSeq {
			return m.row(m.key(n), v), true
		}
	}
	return sst.Row{}, false
}

// WarmKeys is how many keys one DB.Warm looks at: what a pipeline of point
// reads usually holds, and enough loads to keep a core's miss buffers busy.
const WarmKeys = 16

// warm loads, for each of the first WarmKeys keys, the index slot, node
// (its first word and the word ending its key, which the lookup compares)
// and newest version a get of it would load, one phase at a time. A get's
// loads each need the one before (slot, then node, then version), so it
// waits for its cache misses one after another; here the loads of a phase
// are independent of one another, so the core has a phase's misses in
// flight at once, and the gets that follow find those lines in cache. It
// changes nothing, and a key it cannot find quickly (a probe past its first
// slot, or a tag that matches another key) is simply read colder. The loads
// are atomic so that the compiler keeps them though nothing uses them.
func (m *memtable) warm(keys [][]byte) {
	var hs [WarmKeys]uint64
	n := min(len(keys), WarmKeys)
	for i := range n {
		hs[i] = maphash.Bytes(m.seed, keys[i])
	}
	m.warmHashed(hs[:n])
}

// values sets vals[i] to the value of keys[i] (at most WarmKeys keys),
// warmed first as warm does, each key hashed once, and reports whether
// every key's newest row at or below readSeq is here and live at clock time
// now; it stops at the first that is not, leaving vals meaningless.
func (m *memtable) values(keys [][]byte, readSeq uint64, now func() int64, vals [][]byte) bool {
	var hs [WarmKeys]uint64
	n := min(len(keys), WarmKeys)
	for i := range n {
		hs[i] = maphash.Bytes(m.seed, keys[i])
	}
	m.warmHashed(hs[:n])
	for i := range n {
		nd := m.lookup(keys[i], hs[i])
		if nd == 0 {
			return false
		}
		v := m.a.load(nd + nodeVersions)
		for v != 0 && m.seq(v) > readSeq {
			v = m.older(v)
		}
		if v == 0 {
			return false
		}
		rec := m.a.record(v)
		if sst.Kind(recU32(rec, verKind)) != sst.KindPut {
			return false
		}
		if at := int64(recU64(rec, verExpireAt)); at != 0 && at <= now() {
			return false
		}
		l := int(recU32(rec, verValueLen))
		vals[i] = rec[verValue : verValue+l : verValue+l]
	}
	return true
}

// warmHashed is warm of the keys whose hashes are hs.
func (m *memtable) warmHashed(hs []uint64) {
	var at [WarmKeys]uint64
	n := len(hs)
	t := m.index.Load()
	for i := range n {
		h := hs[i]
		s := atomic.LoadUint64(&t.slots[h&t.mask])
		if s>>slotNodeBits != h&slotTagMask {
			s = 0
		}
		at[i] = slotNode(s)
	}
	var ver [WarmKeys]uint64
	for i := range n {
		if at[i] != 0 {
			ver[i] = m.a.load(at[i] + nodeVersions)
		}
	}
	for i := range n {
		if at[i] != 0 {
			// The key's last word (records are padded to words) may
			// be on a line after the node's first.
			rec := m.a.record(at[i])
			end := nodeNext + 8*int(recU32(rec, nodeHeight)) + int(recU32(rec, nodeKeyLen))
			m.a.load(at[i] + uint64(end-1)&^7)
		}
		if ver[i] != 0 {
			m.a.load(ver[i] + verSeq)
		}
	}
}

func (m *memtable) empty() bool { return m.entries.Load() == 0 }

// each calls fn with every key's newest row, in key order.
func (m *memtable) each(fn func(sst.Row) error) error {
	for n := m.nextAt(m.head, 0); n != 0; n = m.nextAt(n, 0) {
		if err := fn(m.row(m.key(n), m.a.load(n+nodeVersions))); err != nil {
			return err
		}
	}
	return nil
}

// memIndex is an open-addressing hash table from key to node, for point
// reads and overwrites. A slot holds tag<<slotNodeBits | node, packed (see
// slotOf), the tag being the hash's low 28 bits; 0 is empty. The writer
// fills a slot with one atomic store.
//
// The table grows without a pause. It doubles once half full, and the new
// table is published at once with the old one hanging from it; every add
// then moves migrateSlots of the old table's slots into the new one, and a
// lookup that misses in the new table looks in the old one until all have
// moved. Moving a slot reads no key and hashes nothing: its tag holds the
// bits that place it in any table up to 2^28 slots. Growth used to rehash
// every key at once, a cache miss each, under the commit lock: at a
// million keys a 55 ms stall for every writer; moving the slots at once
// still took 16-21 ms, most of it faulting in the new table's pages.
// Old tables are never written once replaced, so a reader holding one
// finds every key that was there when it loaded it, which is every key its
// read seq can see.
type memIndex struct {
	slots []uint64
	mask  uint64
	// old is the table this one replaced, while some of its slots have not
	// moved yet; nil after. Set before publishing, cleared by the writer.
	old atomic.Pointer[memIndex]
	// moved is how many of old's slots have moved (the writer's).
	moved int
}

// migrateSlots is how many of the old table's slots each add moves: the
// old table is fully moved long before the new one is half full.
const migrateSlots = 32

// A slot packs a node's arena offset (chunk<<32 | position) into 36 bits,
// chunk<<20 | position: a chunk index is below arenaMaxChunks (2^16), and
// a node's position below arenaMaxChunk (2^20): a record larger than a
// quarter of that starts a chunk of its own, at 0.
const (
	slotPosBits   = 20
	slotChunkBits = 16
	slotNodeBits  = slotChunkBits + slotPosBits
	slotTagMask   = 1<<(64-slotNodeBits) - 1
)

// The packing holds as long as the arena's limits fit it: these fail to
// compile if arenaMaxChunk or arenaMaxChunks outgrow their bits.
var (
	_ [1<<slotPosBits - arenaMaxChunk]struct{}
	_ [1<<slotChunkBits - arenaMaxChunks]struct{}
)

func slotOf(h, n uint64) uint64 {
	return (h&slotTagMask)<<slotNodeBits | (n>>32)<<slotPosBits | n&(1<<slotPosBits-1)
}

// slotNode is the node offset of slot s (0 for an empty slot).
func slotNode(s uint64) uint64 {
	return (s>>slotPosBits)&(1<<slotChunkBits-1)<<32 | s&(1<<slotPosBits-1)
}

func newMemIndex(n int) *memIndex {
	return &memIndex{slots: make([]uint64, n), mask: uint64(n - 1)}
}

func (m *memtable) lookup(key []byte, h uint64) uint64 {
	t := m.index.Load()
	// The old table is loaded first: once it is gone, every slot it had
	// is in t. Loaded after a miss in t, it could be gone because the
	// key's slot moved into t after the probe passed it.
	old := t.old.Load()
	if n := t.lookup(m, key, h); n != 0 || old == nil {
		return n
	}
	return old.lookup(m, key, h)
}

func (t *memIndex) lookup(m *memtable, key []byte, h uint64) uint64 {
	tag := h & slotTagMask
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := atomic.LoadUint64(&t.slots[i])
		if s == 0 {
			return 0
		}
		if s>>slotNodeBits == tag && bytes.Equal(m.key(slotNode(s)), key) {
			return slotNode(s)
		}
	}
}

// indexAdd adds node n, whose key hashes to h and is not in the index, and
// moves some slots of the table being replaced.
func (m *memtable) indexAdd(h, n uint64) {
	t := m.index.Load()
	if 2*(m.indexed+1) > len(t.slots) {
		t.migrate(len(t.slots)) // a table is replaced only once moved in full
		grown := newMemIndex(2 * len(t.slots))
		grown.old.Store(t)
		m.index.Store(grown)
		t = grown
	}
	t.put(h, slotOf(h, n))
	m.indexed++
	t.migrate(migrateSlots)
}

// migrate moves up to k more slots of the old table into t (the writer's).
func (t *memIndex) migrate(k int) {
	old := t.old.Load()
	if old == nil {
		return
	}
	end := min(t.moved+k, len(old.slots))
	for _, s := range old.slots[t.moved:end] {
		if s != 0 {
			t.put(s>>slotNodeBits, s)
		}
	}
	if t.moved = end; end == len(old.slots) {
		t.old.Store(nil)
	}
}

// put stores slot s of a key whose hash is h (or its tag) at the first
// free slot from h's.
func (t *memIndex) put(h, s uint64) {
	i := h & t.mask
	for atomic.LoadUint64(&t.slots[i]) != 0 {
		i = (i + 1) & t.mask
	}
	atomic.StoreUint64(&t.slots[i], s)
}

// memIter iterates a memtable within bounds. It yields every version; the
// merging iterator above it applies the read seq.
type memIter struct {
	m     *memtable
	lower []byte
	upper []byte
	cur   uint64 // node, 0 when exhausted
	ver   uint64
	key   []byte
	row   sst.Row
}

var _ sst.Iterator = (*memIter)(nil)

func (m *memtable) newIter(lower, upper []byte) *memIter {
	return &memIter{m: m, lower: lower, upper: upper}
}

// at positions the iterator at node n's newest version.
func (it *memIter) at(n uint64) bool {
	if n != 0 {
		key := it.m.key(n)
		if it.upper == nil || bytes.Compare(key, it.upper) < 0 {
			it.cur, it.key = n, key
			it.ver = it.m.a.load(n + nodeVersions)
			it.m.rowInto(&it.row, key, it.ver)
			return true
		}
	}
	it.cur, it.ver, it.key, it.row = 0, 0, nil, sst.Row{}
	return false
}

func (it *memIter) First() bool {
	if it.lower != nil {
		return it.SeekGE(it.lower)
	}
	return it.at(it.m.nextAt(it.m.head, 0))
}

func (it *memIter) SeekGE(key []byte) bool {
	if it.lower != nil && bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	return it.at(it.m.seekGE(key))
}

func (it *memIter) Next() bool {
	if it.cur == 0 {
		return false
	}
	if older := it.m.older(it.ver); older != 0 {
		it.ver = older
		it.m.rowInto(&it.row, it.key, older)
		return true
	}
	return it.at(it.m.nextAt(it.cur, 0))
}

// SkipKey moves to the next key's newest version: the versions of a key
// hang off its node, so that is one link whatever their number.
func (it *memIter) SkipKey([]byte) bool {
	if it.cur == 0 {
		return false
	}
	return it.at(it.m.nextAt(it.cur, 0))
}

func (it *memIter) Valid() bool   { return it.cur != 0 }
func (it *memIter) Row() *sst.Row { return &it.row }
func (it *memIter) Error() error  { return nil }
func (it *memIter) Close() error  { it.cur, it.ver, it.key, it.row = 0, 0, nil, sst.Row{}; return nil }
