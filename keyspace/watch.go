package keyspace

import (
	"bytes"

	"github.com/stratakv/strata/lsm"
)

// Stamp is what WATCH remembers of a key: a count of the writes to its lock
// stripe and of the flushes. Every command that writes a key bumps its
// stripe's count after its batch is applied and before it releases the
// stripe, so a transaction that holds the stripe and finds the stamp
// unchanged knows no write to the key became visible since the stamp was
// taken. Keys sharing a stripe, and a flush of any database, also change
// the stamp: a watch may fail where Redis's would not, never the other way
// round.
type Stamp struct {
	writes  uint64
	flushes uint64
}

// Stamp returns key's stamp now.
func (s *Store) Stamp(db int, key []byte) Stamp {
	return Stamp{writes: s.mods[s.stripe(db, key)].Load(), flushes: s.flushes.Load()}
}

// Unchanged reports whether key's stamp is still st. Inside a transaction
// begun with key the answer holds until it commits.
func (s *Store) Unchanged(db int, key []byte, st Stamp) bool {
	return s.Stamp(db, key) == st
}

// SharesStamp reports whether a write to key b of database bdb changes the
// stamp of key a of database adb: they share a lock stripe (or are the same
// key). The stripes hash with a seed made per process, so which keys share
// one differs from run to run; a test that needs a write not to abort a
// WATCH picks its keys with this.
func (s *Store) SharesStamp(adb int, a []byte, bdb int, b []byte) bool {
	return s.stripe(adb, a) == s.stripe(bdb, b)
}

// bumpWrites counts a write to the stripe of every key b changes.
// REQUIRES: b is applied and the stripes of its keys are still held.
func (s *Store) bumpWrites(b *lsm.Batch) {
	var lastKey []byte
	lastGen := uint32(0)
	for i := range b.Len() {
		gen, key, ok := rowOwner(b.Key(i))
		if !ok || (gen == lastGen && lastKey != nil && bytes.Equal(key, lastKey)) {
			continue
		}
		lastGen, lastKey = gen, key
		for db := range NumDBs {
			if s.gen(db) == gen {
				s.mods[s.stripe(db, key)].Add(1)
				break
			}
		}
	}
}

// rowOwner returns the generation and user key an engine row belongs to;
// false for system rows.
func rowOwner(row []byte) (gen uint32, key []byte, ok bool) {
	if len(row) == 0 {
		return 0, nil, false
	}
	var err error
	switch row[0] {
	case kindMeta:
		gen, key, err = decodeMetaKey(row)
	case kindExpiry:
		gen, _, key, err = decodeExpiryKey(row)
	case kindHash, kindList, kindSet, kindZSet:
		_, gen, key, _, _, err = decodeElementKey(row)
	default:
		return 0, nil, false
	}
	return gen, key, err == nil
}
