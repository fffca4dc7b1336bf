package lsm

import (
	"bytes"
	"context"
	"errors"
	"math"

	"github.com/stratakv/strata/lsm/sst"
)

// batchSeqBase is the first sequence number of rows inside an IndexedBatch:
// above every sequence number the DB hands out (those count writes from 1
// and never reach 2^62), so a batch's own rows shadow the DB's in reads
// through the batch, and later changes in the batch shadow earlier ones.
const batchSeqBase = 1 << 62

// IndexedBatch is a Batch that can be read before it is written: Get and
// NewIter through it see its changes over the DB. A transaction builds one
// (MULTI/EXEC: each command reads what the previous ones wrote) and commits
// it as one atomic batch.
//
// An IndexedBatch is used by one goroutine at a time.
type IndexedBatch struct {
	db  *DB
	b   Batch
	mem *memtable // the batch's rows, for reads
	n   uint64
}

// NewIndexedBatch returns an empty IndexedBatch over db.
func (db *DB) NewIndexedBatch() *IndexedBatch {
	return &IndexedBatch{db: db, mem: newMemtable()}
}

// Put sets key to value with no expiry.
func (ib *IndexedBatch) Put(key, value []byte) { ib.add(key, value, sst.KindPut, 0) }

// PutWithExpiry sets key to value until expireAt (ms since the epoch).
func (ib *IndexedBatch) PutWithExpiry(key, value []byte, expireAt int64) {
	ib.add(key, value, sst.KindPut, expireAt)
}

// Delete removes key.
func (ib *IndexedBatch) Delete(key []byte) { ib.add(key, nil, sst.KindDelete, 0) }

// Apply adds every change of b, in order.
func (ib *IndexedBatch) Apply(b *Batch) {
	for _, r := range b.rows {
		ib.add(r.Key, r.Value, r.Kind, r.ExpireAt)
	}
}

// Len returns the number of distinct keys changed.
func (ib *IndexedBatch) Len() int { return ib.b.Len() }

func (ib *IndexedBatch) add(key, value []byte, kind sst.Kind, expireAt int64) {
	ib.b.add(key, value, kind, expireAt)
	i, _ := ib.b.find(key)
	r := ib.b.rows[i]
	ib.n++
	r.Seq = batchSeqBase + ib.n
	ib.mem.add(r)
}

// Get returns the value of key as the batch would leave it, or ErrNotFound.
func (ib *IndexedBatch) Get(ctx context.Context, key []byte) ([]byte, error) {
	if r, ok := ib.mem.get(key, math.MaxUint64); ok {
		if !live(&r, ib.db.clock.Now()) {
			return nil, ErrNotFound
		}
		return bytes.Clone(r.Value), nil
	}
	return ib.db.Get(ctx, key)
}

// NewIter returns an iterator over the DB as the batch would leave it.
func (ib *IndexedBatch) NewIter(ctx context.Context, o IterOptions) *Iterator {
	return ib.db.newIter(ctx, o, ib.mem)
}

// Size returns the approximate bytes of the batch.
func (ib *IndexedBatch) Size() int { return ib.b.Size() }

// ErrBatchCommitted is returned when an IndexedBatch is committed twice.
var ErrBatchCommitted = errors.New("lsm: batch already committed")

// Commit writes the batch atomically, as DB.Write does. The batch cannot be
// used afterwards.
func (ib *IndexedBatch) Commit(ctx context.Context) (WriteHandle, error) {
	if ib.mem == nil {
		return WriteHandle{}, ErrBatchCommitted
	}
	ib.mem = nil
	return ib.db.Write(ctx, &ib.b)
}
