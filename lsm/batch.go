package lsm

import (
	"bytes"

	"github.com/stratakv/strata/lsm/sst"
)

// Batch is a set of changes applied atomically by DB.Write: after a crash
// either all of them are present or none. A later change to a key in the
// same batch replaces an earlier one.
type Batch struct {
	rows []sst.Row
	idx  map[string]int // key → row, once the batch is large enough to need it
	size int
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
}

// copyIn copies key and value into one allocation sized for them: a row
// costs one allocation instead of two, and nothing is allocated that the
// row does not use (a memtable holds rows for minutes; slack would be
// memory held for nothing). The key's capacity ends at its length, so
// appending to it never writes over the value.
func copyIn(key, value []byte) ([]byte, []byte) {
	buf := make([]byte, len(key)+len(value))
	n := copy(buf, key)
	copy(buf[n:], value)
	return buf[:n:n], buf[n:]
}

func (b *Batch) add(key, value []byte, kind sst.Kind, expireAt int64) {
	if kind != sst.KindPut {
		value = nil
	}
	r := sst.Row{Kind: kind, ExpireAt: expireAt}
	r.Key, r.Value = copyIn(key, value)
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

// ForEachKey calls fn with every key the batch changes, in the order they
// were first added.
func (b *Batch) ForEachKey(fn func(key []byte)) {
	for i := range b.rows {
		fn(b.rows[i].Key)
	}
}

// Clone returns a copy of b that shares no memory with it.
func (b *Batch) Clone() *Batch {
	c := &Batch{rows: make([]sst.Row, len(b.rows)), size: b.size}
	copy(c.rows, b.rows) // rows' slices are never modified once added
	return c
}
