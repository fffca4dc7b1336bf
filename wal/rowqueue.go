package wal

import (
	"unsafe"

	"github.com/stratakv/strata/lsm/sst"
)

// chunkRows is the number of rows in one chunk of a rowQueue (72 KiB of
// rows, and chunkKeyBytes of keys).
const chunkRows = 1024

// chunkKeyBytes is the room a chunk has for copies of its rows' keys: 32
// bytes a row, what a key of the keyspace's strings and metadata usually
// takes (a row whose key does not fit keeps pointing to its own).
const chunkKeyBytes = 32 * chunkRows

// maxFreeChunks bounds the emptied chunks a rowQueue keeps for reuse: an
// 8 MiB object of small rows (~190k of them) fits in the kept chunks.
const maxFreeChunks = 256

// rowChunk is a chunk's rows and the copies of their keys.
type rowChunk struct {
	rows [chunkRows]sst.Row
	keys []byte // cap chunkKeyBytes; never regrown, so rows may point into it
}

// rowQueue holds the rows appended to a Writer and not yet taken, in
// fixed-size chunks. Appending copies each row once; a single growing
// array was copied again at every doubling, which under a 1 s flush
// interval (pending grows to a whole object, and the array of the object in
// flight cannot be reused yet) was a tenth of a pipelined INCR's CPU.
//
// It also copies each row's key, while the key is still in the appending
// core's cache, into its chunk, next to the keys of the rows around it. An
// engine's row keeps the key where the memtable first stored it: for an
// overwrite (SET or INCR of a key the memtable holds), a node written long
// before, anywhere in the arena. Encoding reads the rows much later (under
// everysec, up to a second of writes at once), and such a key was a cache
// miss per row: 93% of the encoder's row-appending samples, 6% of a
// pipelined INCR's CPU. The copies are read in order instead.
//
// The pending rows are chunks[0][head:], chunks[1], ..., chunks[last][:tail].
// take hands rows out as slices of chunks that go with them (see take), to
// be given back by release once encoded. A row's key copy is always in
// the chunk that holds the row, so a chunk's owner owns everything its rows
// point to besides the engine's bytes.
type rowQueue struct {
	chunks []*rowChunk
	head   int // first pending row in chunks[0]
	tail   int // rows used in the last chunk
	n      int // pending rows
	free   []*rowChunk
}

// takenRows are rows taken from a rowQueue: segs in order, and the chunks
// they own, which go back to the queue's free list after encoding.
type takenRows struct {
	segs    [][]sst.Row
	owned   []*rowChunk
	batches int // runs of one seq
}

// lastSeq returns the seq of the last row. REQUIRES: t holds a row.
func (t *takenRows) lastSeq() uint64 {
	s := t.segs[len(t.segs)-1]
	return s[len(s)-1].Seq
}

func (q *rowQueue) len() int { return q.n }

func (q *rowQueue) newChunk() *rowChunk {
	if k := len(q.free); k > 0 {
		c := q.free[k-1]
		q.free = q.free[:k-1]
		return c
	}
	return &rowChunk{keys: make([]byte, 0, chunkKeyBytes)}
}

// put stores r as row i of c, its key copied into c's keys if it fits.
func (c *rowChunk) put(i int, r sst.Row) {
	if n := len(c.keys); n+len(r.Key) <= cap(c.keys) {
		c.keys = append(c.keys, r.Key...)
		r.Key = c.keys[n:len(c.keys):len(c.keys)]
	}
	c.rows[i] = r
}

// holds reports whether key is one of c's key copies.
func (c *rowChunk) holds(key []byte) bool {
	if len(key) == 0 {
		return false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(c.keys)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(key)))
	return p >= base && p < base+uintptr(cap(c.keys))
}

// push appends copies of rows and of their keys (not of their values).
func (q *rowQueue) push(rows []sst.Row) {
	for _, r := range rows {
		if len(q.chunks) == 0 || q.tail == chunkRows {
			q.chunks = append(q.chunks, q.newChunk())
			q.tail = 0
		}
		q.chunks[len(q.chunks)-1].put(q.tail, r)
		q.tail++
	}
	q.n += len(rows)
}

// take removes the first n rows, which hold batches batches. REQUIRES:
// 0 < n <= q.len().
//
// A chunk whose pending rows are all taken goes with them. When the rows
// end inside a chunk the queue keeps, they are copied out, with the key
// copies the chunk made for them, to a chunk of their own instead: a chunk
// is only ever read or written by one party, the queue or one taken
// object, so releasing it can never clear rows (or reuse key copies) that
// another object is still encoding.
func (q *rowQueue) take(n, batches int) takenRows {
	t := takenRows{batches: batches}
	q.n -= n
	for n > 0 {
		c := q.chunks[0]
		end := chunkRows
		if len(q.chunks) == 1 {
			end = q.tail
		}
		k := min(n, end-q.head)
		if q.head+k == end {
			t.segs = append(t.segs, c.rows[q.head:end:end])
			t.owned = append(t.owned, c)
			q.chunks[0] = nil
			q.chunks = q.chunks[1:]
			q.head = 0
			if len(q.chunks) == 0 {
				q.chunks, q.tail = nil, 0
			}
		} else {
			d := q.newChunk()
			for i, r := range c.rows[q.head : q.head+k] {
				if c.holds(r.Key) {
					// They fit: they took no more of c's keys. (A key
					// that did not fit in c is not copied here either: it
					// could take room one of c's copies needs.)
					n := len(d.keys)
					d.keys = append(d.keys, r.Key...)
					r.Key = d.keys[n:len(d.keys):len(d.keys)]
				}
				d.rows[i] = r
			}
			clear(c.rows[q.head : q.head+k])
			t.segs = append(t.segs, d.rows[:k:k])
			t.owned = append(t.owned, d)
			q.head += k
		}
		n -= k
	}
	return t
}

// scan calls fn for the pending rows in order until it returns false.
func (q *rowQueue) scan(fn func(r *sst.Row) bool) {
	for i, c := range q.chunks {
		start, end := 0, chunkRows
		if i == 0 {
			start = q.head
		}
		if i == len(q.chunks)-1 {
			end = q.tail
		}
		for j := start; j < end; j++ {
			if !fn(&c.rows[j]) {
				return
			}
		}
	}
}

// release gives t's chunks back to the queue for reuse, emptied so that
// the batches' bytes they pointed to can be collected. Only the taken rows
// need clearing: the rest of each chunk was never written or was cleared
// when take copied it out.
func (q *rowQueue) release(t takenRows) {
	for _, s := range t.segs {
		clear(s)
	}
	for _, c := range t.owned {
		if len(q.free) >= maxFreeChunks {
			return
		}
		c.keys = c.keys[:0]
		q.free = append(q.free, c)
	}
}
