package keyspace

import (
	"context"
	"slices"

	"github.com/stratakv/strata/lsm"
)

// DBKey names a key in one database.
type DBKey struct {
	DB  int
	Key []byte
}

// Txn runs several commands as one: they see each other's changes, no
// other command sees any of them before Commit, and Commit writes them all
// as one engine batch, so a crash keeps all or none (MULTI/EXEC).
//
// A Txn holds the lock stripes of the keys it was begun with until Commit
// or Abort; a command inside it that touches another key takes that key's
// stripe too. It is used by one goroutine.
type Txn struct {
	s      *Store // the transaction's view
	ib     *lsm.IndexedBatch
	held   []int // stripe indexes, ascending
	gens   map[int]uint32
	genMu  bool // holds shared.genMu: a FLUSHDB/FLUSHALL is inside
	done   bool
	writes []*lsm.Batch // the commands' batches, for the watch stamps
}

// Begin starts a transaction over keys (those of every command it will
// run; more may be added as commands touch them, see Txn).
func (s *Store) Begin(keys []DBKey) *Txn {
	t := &Txn{ib: s.db.NewIndexedBatch(), gens: map[int]uint32{}}
	t.s = &Store{shared: s.shared, tx: t}
	for _, k := range keys {
		t.held = append(t.held, s.stripe(k.DB, k.Key))
	}
	slices.Sort(t.held)
	t.held = slices.Compact(t.held)
	for _, i := range t.held {
		s.locks[i].Lock()
	}
	return t
}

// Store returns the view that runs commands inside the transaction.
func (t *Txn) Store() *Store { return t.s }

// lock takes the stripes of keys the transaction does not hold yet. Beyond
// the held ones it can only wait safely on stripes above all it holds;
// below, it waits too, which is why Begin should be given every key.
func (t *Txn) lock(db int, keys ...[]byte) {
	for _, k := range keys {
		i := t.s.stripe(db, k)
		at, found := slices.BinarySearch(t.held, i)
		if found {
			continue
		}
		t.s.locks[i].Lock()
		t.held = slices.Insert(t.held, at, i)
	}
}

// lockGens takes the generation lock for a flush inside the transaction,
// held until it ends, so no other flush picks the same new generations.
func (t *Txn) lockGens() {
	if !t.genMu {
		t.s.genMu.Lock()
		t.genMu = true
	}
}

// Commit writes the transaction's changes as one batch and, unless the
// Store is Async, waits until they are durable. It releases the locks
// either way.
func (t *Txn) Commit(ctx context.Context) error {
	if t.done {
		return lsm.ErrBatchCommitted
	}
	defer t.release()
	if t.ib.Len() == 0 {
		return nil
	}
	h, err := t.ib.Commit(ctx)
	if err != nil {
		return err
	}
	// The batch is applied: count the writes for WATCH while the stripes
	// are held (with the generations the commands wrote in), then publish
	// new generations, before another command can run on the old ones.
	for _, b := range t.writes {
		t.s.bumpWrites(b)
	}
	for i, g := range t.gens {
		t.s.gens[i].Store(g)
	}
	if len(t.gens) > 0 {
		t.s.flushes.Add(1)
	}
	if t.s.opts.Async {
		return nil
	}
	return h.Durable(ctx)
}

// Abort drops the transaction's changes and releases its locks.
func (t *Txn) Abort() {
	if !t.done {
		t.release()
	}
}

func (t *Txn) release() {
	t.done = true
	if t.genMu {
		t.s.genMu.Unlock()
	}
	for j := len(t.held) - 1; j >= 0; j-- {
		t.s.locks[t.held[j]].Unlock()
	}
}
