package wal

import "github.com/stratakv/strata/lsm/sst"

// chunkRows is the number of rows in one chunk of a rowQueue (72 KiB).
const chunkRows = 1024

// maxFreeChunks bounds the emptied chunks a rowQueue keeps for reuse: an
// 8 MiB object of small rows (~190k of them) fits in the kept chunks.
const maxFreeChunks = 256

type rowChunk [chunkRows]sst.Row

// rowQueue holds the rows appended to a Writer and not yet taken, in
// fixed-size chunks. Appending copies each row once; a single growing
// array was copied again at every doubling, which under a 1 s flush
// interval (pending grows to a whole object, and the array of the object in
// flight cannot be reused yet) was a tenth of a pipelined INCR's CPU.
//
// The pending rows are chunks[0][head:], chunks[1], ..., chunks[last][:tail].
// take hands rows out as slices of chunks that go with them (see take), to
// be given back by release once encoded.
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
	return new(rowChunk)
}

// push appends copies of rows (not of the bytes they point to).
func (q *rowQueue) push(rows []sst.Row) {
	for len(rows) > 0 {
		if len(q.chunks) == 0 || q.tail == chunkRows {
			q.chunks = append(q.chunks, q.newChunk())
			q.tail = 0
		}
		c := q.chunks[len(q.chunks)-1]
		k := copy(c[q.tail:], rows)
		q.tail += k
		q.n += k
		rows = rows[k:]
	}
}

// take removes the first n rows, which hold batches batches. REQUIRES:
// 0 < n <= q.len().
//
// A chunk whose pending rows are all taken goes with them. When the rows
// end inside a chunk the queue keeps, they are copied out to a chunk of
// their own instead: a chunk is only ever read or written by one party,
// the queue or one taken object, so releasing it can never clear rows that
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
			t.segs = append(t.segs, c[q.head:end:end])
			t.owned = append(t.owned, c)
			q.chunks[0] = nil
			q.chunks = q.chunks[1:]
			q.head = 0
			if len(q.chunks) == 0 {
				q.chunks, q.tail = nil, 0
			}
		} else {
			d := q.newChunk()
			copy(d[:k], c[q.head:q.head+k])
			clear(c[q.head : q.head+k])
			t.segs = append(t.segs, d[:k:k])
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
			if !fn(&c[j]) {
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
		q.free = append(q.free, c)
	}
}
