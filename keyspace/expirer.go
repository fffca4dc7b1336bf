package keyspace

import (
	"context"
	"time"

	"github.com/stratakv/strata/lsm"
)

// ExpirerOptions pace the active expirer.
type ExpirerOptions struct {
	// Interval between rounds. Default 100 ms.
	Interval time.Duration
	// Batch is the most keys one round removes per database, in one engine
	// batch each. Default 500.
	Batch int
}

func (o *ExpirerOptions) ensureDefaults() {
	if o.Interval <= 0 {
		o.Interval = 100 * time.Millisecond
	}
	if o.Batch <= 0 {
		o.Batch = 500
	}
}

// Expired returns how many keys the active expirer removed (for INFO's
// expired_keys).
func (s *Store) Expired() uint64 { return s.expired.Load() }

// RunExpirer removes due keys until ctx ends. Reads already treat an
// expired key as absent; the expirer turns it into a deletion, so the
// metadata row, the key's elements (through the compaction filter) and its
// expiry-index row leave the bucket even if nobody reads the key.
func (s *Store) RunExpirer(ctx context.Context, o ExpirerOptions) error {
	o.ensureDefaults()
	for {
		n, err := s.ExpireDue(ctx, o.Batch)
		if err != nil && ctx.Err() == nil {
			s.opts.Logger.Warn("active expiry failed", "err", err)
		}
		if n == 0 || err != nil {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(o.Interval):
			}
		}
	}
}

// ExpireDue runs one round: in every database, it walks the expiry index in
// time order up to now, at most batch entries, and removes the keys that
// are due. Work is O(due entries), whatever the number of keys.
func (s *Store) ExpireDue(ctx context.Context, batch int) (int, error) {
	total := 0
	for db := range NumDBs {
		n, err := s.expireDB(ctx, db, batch)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

type dueEntry struct {
	at      int64
	key     []byte
	version uint64
}

func (s *Store) expireDB(ctx context.Context, db, batch int) (int, error) {
	gen := s.gen(db)
	now := s.db.Now()
	due, err := s.dueEntries(ctx, gen, now, batch)
	if err != nil || len(due) == 0 {
		return 0, err
	}
	keys := make([][]byte, len(due))
	for i, d := range due {
		keys[i] = d.key
	}
	defer s.lock(db, keys...)()
	b := lsm.NewBatch()
	defer b.Release()
	removed := 0
	for _, d := range due {
		m, live, err := s.getMeta(ctx, gen, d.key)
		if err != nil {
			return removed, err
		}
		if live && m.ExpireAt == d.at && m.Version == d.version {
			continue // not due after all (the engine clock is ahead of now)
		}
		b.Delete(appendExpiryKey(nil, gen, d.at, d.key))
		if !live {
			// The metadata row expired: delete it for good. (A key
			// re-created since has live metadata and only loses the
			// stale index entry.)
			b.Delete(appendMetaKey(nil, gen, d.key))
			removed++
		}
	}
	if err := s.commit(ctx, b); err != nil {
		return 0, err
	}
	s.expired.Add(uint64(removed))
	return removed, nil
}

// dueEntries returns up to batch expiry-index entries of gen due at now.
func (s *Store) dueEntries(ctx context.Context, gen uint32, now int64, batch int) ([]dueEntry, error) {
	it := s.newIter(ctx, lsm.IterOptions{
		LowerBound: expiryPrefix(gen),
		UpperBound: appendExpiryKey(nil, gen, now+1, nil),
	})
	defer it.Close()
	var due []dueEntry
	for ok := it.First(); ok && len(due) < batch; ok = it.Next() {
		_, at, key, err := decodeExpiryKey(it.Key())
		if err != nil {
			return nil, err
		}
		version, err := decodeExpiryValue(it.Value())
		if err != nil {
			return nil, err
		}
		due = append(due, dueEntry{at: at, key: append([]byte{}, key...), version: version})
	}
	return due, it.Error()
}
