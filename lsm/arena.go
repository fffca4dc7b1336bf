package lsm

import (
	"sync/atomic"
	"unsafe"
)

// arena is the memory of one memtable: chunks of pointer-free words that
// hold its skiplist nodes, versions and the rows' bytes, addressed by
// offsets instead of pointers. The garbage collector sees a few large
// noscan objects instead of several small pointerful ones per row, which it
// would otherwise trace on every cycle for as long as the memtable lives
// (GC was a quarter of a ZADD's CPU), and a row costs no allocation.
//
// One writer allocates and fills (REQUIRES: the memtable's writer lock);
// readers resolve offsets concurrently. A reader only ever holds an offset
// it loaded from a published word, and a chunk is in the table before any
// offset into it is published, so resolving reloads the table each time.
//
// The chunk table, which every reader loads on every access, has a cache
// line of its own: the writer's fields after it change on every alloc, and
// sharing their line made each read on another core a cache miss (a sixth
// of an HSET's CPU under a pipelined load).
type arena struct {
	chunks atomic.Pointer[[][]byte]
	_      [cacheLine]byte
	cur    uint64 // offset of the next free byte in the current chunk
	free   int    // bytes left in the current chunk
	next   int    // size of the next chunk
	used   atomic.Int64
}

// cacheLine is the padding that keeps fields read on every access off the
// line of fields written on every add (64 bytes on amd64 and arm64 cores;
// 128 covers the adjacent-line prefetch of x86).
const cacheLine = 128

// An arena offset is chunk<<32 | position. Offset 0 is never allocated, so
// it serves as nil.
const (
	arenaFirstChunk = 4 << 10
	arenaMaxChunk   = 1 << 20
	arenaMaxChunks  = 1 << 16 // a node offset packs into 36 bits; see memIndex
	arenaAlign      = 8
)

func newArena() *arena {
	a := &arena{next: arenaFirstChunk}
	a.chunks.Store(&[][]byte{})
	a.addChunk(arenaFirstChunk)
	a.cur, a.free = arenaAlign, arenaFirstChunk-arenaAlign // offset 0 is nil
	return a
}

// addChunk appends a chunk of n bytes, aligned, and returns its index.
func (a *arena) addChunk(n int) uint64 {
	words := make([]uint64, (n+arenaAlign-1)/arenaAlign)
	buf := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*arenaAlign)
	old := *a.chunks.Load()
	if len(old) >= arenaMaxChunks {
		panic("lsm: memtable arena has too many chunks")
	}
	cs := make([][]byte, len(old)+1)
	copy(cs, old)
	cs[len(old)] = buf
	a.chunks.Store(&cs)
	return uint64(len(old))
}

// alloc returns the offset of n zeroed bytes, aligned to 8.
func (a *arena) alloc(n int) uint64 {
	n = (n + arenaAlign - 1) &^ (arenaAlign - 1) // keeps a.cur aligned
	a.used.Add(int64(n))
	if n > arenaMaxChunk/4 {
		// A large row gets a chunk of its own, and the current one
		// keeps its free space for the small rows around it.
		return a.addChunk(n) << 32
	}
	if n > a.free {
		size := a.next
		for size < n {
			size *= 2 // n <= arenaMaxChunk/4, so size stays <= arenaMaxChunk
		}
		a.next = min(2*size, arenaMaxChunk)
		a.cur = a.addChunk(size) << 32
		a.free = size
	}
	off := a.cur
	a.cur += uint64(n)
	a.free -= n
	return off
}

// bytes returns n bytes at off. The slice's capacity ends at its length.
func (a *arena) bytes(off uint64, n int) []byte {
	c := (*a.chunks.Load())[off>>32]
	p := uint32(off)
	return c[p : p+uint32(n) : p+uint32(n)]
}

// record returns the bytes of off's chunk from off on: a record whose
// fields are read together resolves its chunk once, not once per field
// (field and key decoding was a third of a memtable scan's CPU).
func (a *arena) record(off uint64) []byte {
	return (*a.chunks.Load())[off>>32][uint32(off):]
}

// recU32 and recU64 read a plain field at i of a record (see record),
// written before the record was published. As get32, they check only
// that the field starts within the chunk: alloc placed the whole record
// in it.
func recU32(rec []byte, i int) uint32 { return *(*uint32)(unsafe.Pointer(&rec[i])) }
func recU64(rec []byte, i int) uint64 { return *(*uint64)(unsafe.Pointer(&rec[i])) }

// word returns the 8-byte word at off (aligned), for atomic access.
func (a *arena) word(off uint64) *uint64 {
	c := (*a.chunks.Load())[off>>32]
	return (*uint64)(unsafe.Pointer(&c[uint32(off)]))
}

func (a *arena) load(off uint64) uint64     { return atomic.LoadUint64(a.word(off)) }
func (a *arena) store(off uint64, v uint64) { atomic.StoreUint64(a.word(off), v) }

// put32 and get32 access a plain (non-atomic) 4-byte field written before
// its record was published.
func (a *arena) put32(off uint64, v uint32) {
	c := (*a.chunks.Load())[off>>32]
	*(*uint32)(unsafe.Pointer(&c[uint32(off)])) = v
}

func (a *arena) get32(off uint64) uint32 {
	c := (*a.chunks.Load())[off>>32]
	return *(*uint32)(unsafe.Pointer(&c[uint32(off)]))
}
