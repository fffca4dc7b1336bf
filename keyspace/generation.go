package keyspace

import (
	"context"
	"errors"

	"github.com/stratakv/strata/lsm"
)

// Databases are flushed in O(1): every engine key carries its database's
// generation, and FLUSHDB moves the database to a new generation in one
// batch. Rows of the old generation are unreachable at once; the compaction
// filter drops them. A database that was never flushed has generation =
// its index, so no system row is needed until the first flush.

func (s *Store) loadGen(ctx context.Context, db int) (uint32, error) {
	v, err := s.get(ctx, systemGenKey(db))
	if errors.Is(err, lsm.ErrNotFound) {
		return uint32(db), nil
	}
	if err != nil {
		return 0, err
	}
	return decodeGenValue(v)
}

func (s *Store) maxGen(ctx context.Context) (uint32, error) {
	v, err := s.get(ctx, systemMaxGenKey())
	if errors.Is(err, lsm.ErrNotFound) {
		return initialMaxGen, nil
	}
	if err != nil {
		return 0, err
	}
	return decodeGenValue(v)
}

// FlushDB empties database db in O(1).
func (s *Store) FlushDB(ctx context.Context, db int) error {
	if err := checkDB(db); err != nil {
		return err
	}
	return s.flush(ctx, db)
}

// FlushAll empties every database in O(1) each.
func (s *Store) FlushAll(ctx context.Context) error {
	return s.flush(ctx, -1)
}

// flush moves database db (-1: all) to fresh generations in one batch.
// Commands running meanwhile on the old generation finish there and are
// lost with it, as if they ran before the flush.
func (s *Store) flush(ctx context.Context, db int) error {
	if s.tx != nil {
		s.tx.lockGens()
	} else {
		s.genMu.Lock()
		defer s.genMu.Unlock()
	}
	top, err := s.maxGen(ctx)
	if err != nil {
		return err
	}
	b := lsm.NewBatch()
	defer b.Release()
	next := make(map[int]uint32)
	for i := range NumDBs {
		if db >= 0 && i != db {
			continue
		}
		top++
		next[i] = top
		b.Put(systemGenKey(i), appendGenValue(nil, top))
	}
	b.Put(systemMaxGenKey(), appendGenValue(nil, top))
	if err := s.commit(ctx, b); err != nil {
		return err
	}
	for i, g := range next {
		if s.tx != nil {
			s.tx.gens[i] = g // published by Txn.Commit
		} else {
			s.gens[i].Store(g)
		}
	}
	if s.tx == nil {
		s.flushes.Add(1)
	}
	return nil
}
