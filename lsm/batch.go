package lsm

import (
	"bytes"
	"sync"
	"unsafe"

	"github.com/stratakv/strata/lsm/sst"
)

// Batch is a set of changes applied atomically by DB.Write: after a crash
// either all of them are present or none. A later change to a key in the
// same batch replaces an earlier one.
//
// A batch copies the keys and values it is given into storage of its own,
// which Reset reuses: the engine keeps copies of its own (the memtable's,
// which the WAL also reads), so nothing refers to a batch's bytes once
// Write returns, and a batch that is reset and reused allocates nothing
// once its storage has grown to its rows.
type Batch struct {
	rows []sst.Row
	idx  map[string]int // key → row, once the batch is large enough to need it
	size int
	buf  []byte // holds the rows' keys and values
}

// linearScanMax is the batch size below which duplicate keys are found by
// scanning, which is cheaper than a map for the common small batch.
const linearScanMax = 8

// Put sets key to value with no expiry. The batch copies both.
func (b *Batch) Put(key, value []byte) { b.add(key, value, sst.KindPut, 0) }

// PutWithExpiry sets key to value until expireAt (ms since the epoch; 0 =
// never). From then on reads treat the key as absent.
func (b *Batch) PutWithExpiry(key, value []byte, expireAt int64) {
	b.add(key, value, sst.KindPut, expireAt)
}

// Delete removes key.
func (b *Batch) Delete(key []byte) { b.add(key, nil, sst.KindDelete, 0) }

// batchPool holds released batches with their storage.
var batchPool = sync.Pool{New: func() any { return new(Batch) }}

// maxPooledBytes bounds the storage a released batch keeps: a batch that
// grew larger (a big value, a bulk delete) is left to the collector.
const maxPooledBytes = 64 << 10

// NewBatch returns an empty batch, reusing the storage of a released one:
// a write's batch from NewBatch, released once Write returns, allocates
// nothing in the steady state.
func NewBatch() *Batch { return batchPool.Get().(*Batch) }

// Release empties b and gives it back to NewBatch. b must not be used
// afterwards.
func (b *Batch) Release() {
	if cap(b.buf) > maxPooledBytes || cap(b.rows)*int(unsafe.Sizeof(sst.Row{})) > maxPooledBytes {
		return
	}
	b.Reset()
	batchPool.Put(b)
}

// Len returns the number of distinct keys in the batch.
func (b *Batch) Len() int { return len(b.rows) }

// Size returns the approximate bytes of the batch.
func (b *Batch) Size() int { return b.size }

// Reset empties the batch for reuse.
func (b *Batch) Reset() {
	clear(b.rows)
	b.rows = b.rows[:0]
	b.idx = nil
	b.size = 0
	b.buf = b.buf[:0]
}

// copyIn copies key and value into the batch's storage. When the storage
// is full the next one is new, not a copy: rows already added keep
// pointing into the old one. Each slice's capacity ends at its length, so
// appending to one never writes over another.
func (b *Batch) copyIn(key, value []byte) ([]byte, []byte) {
	n := len(key) + len(value)
	if cap(b.buf)-len(b.buf) < n {
		b.buf = make([]byte, 0, max(n, 2*cap(b.buf), 256))
	}
	start := len(b.buf)
	b.buf = append(b.buf, key...)
	mid := len(b.buf)
	b.buf = append(b.buf, value...)
	return b.buf[start:mid:mid], b.buf[mid:len(b.buf):len(b.buf)]
}

func (b *Batch) add(key, value []byte, kind sst.Kind, expireAt int64) {
	if kind != sst.KindPut {
		value = nil
	}
	r := sst.Row{Kind: kind, ExpireAt: expireAt}
	r.Key, r.Value = b.copyIn(key, value)
	if kind != sst.KindPut {
		r.Value = nil
	}
	b.size += len(key) + len(value) + 16
	if i, ok := b.find(key); ok {
		b.size -= len(b.rows[i].Key) + len(b.rows[i].Value) + 16
		b.rows[i] = r
		return
	}
	b.rows = append(b.rows, r)
	if b.idx != nil {
		b.idx[string(r.Key)] = len(b.rows) - 1
	} else if len(b.rows) > linearScanMax {
		b.idx = make(map[string]int, 2*len(b.rows))
		for i, r := range b.rows {
			b.idx[string(r.Key)] = i
		}
	}
}

func (b *Batch) find(key []byte) (int, bool) {
	if b.idx != nil {
		i, ok := b.idx[string(key)]
		return i, ok
	}
	for i := range b.rows {
		if bytes.Equal(b.rows[i].Key, key) {
			return i, true
		}
	}
	return 0, false
}

// Key returns the key of the batch's i-th change (0 <= i < Len), in the
// order they were first added. It is valid until the batch is reset.
func (b *Batch) Key(i int) []byte { return b.rows[i].Key }

// Clone returns a copy of b that shares no memory with it.
func (b *Batch) Clone() *Batch {
	n := 0
	for _, r := range b.rows {
		n += len(r.Key) + len(r.Value)
	}
	c := &Batch{rows: make([]sst.Row, 0, len(b.rows)), size: b.size, buf: make([]byte, 0, n)}
	for _, r := range b.rows {
		r.Key, r.Value = c.copyIn(r.Key, r.Value)
		if r.Kind != sst.KindPut {
			r.Value = nil
		}
		c.rows = append(c.rows, r)
	}
	return c
}
