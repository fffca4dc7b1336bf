package keyspace

import (
	"context"
	"strconv"

	"github.com/stratakv/strata/lsm"
)

// KeyStats returns the number of keys of database db and how many of them
// have an expiry (INFO keyspace). Keys are counted by their live metadata
// rows, O(keys); expiring keys by the expiry index rows not yet due,
// O(expiring keys).
func (s *Store) KeyStats(ctx context.Context, db int) (keys, expires int64, err error) {
	keys, err = s.DBSize(ctx, db)
	if err != nil {
		return 0, 0, err
	}
	gen := s.gen(db)
	expires, err = countRows(ctx, s.newIter(ctx, lsm.IterOptions{
		LowerBound: appendExpiryKey(nil, gen, s.db.Now()+1, nil),
		UpperBound: prefixEnd(expiryPrefix(gen)),
	}))
	if err != nil {
		return 0, 0, err
	}
	return keys, expires, nil
}

// prefixEnd returns the smallest key above every key with prefix p.
func prefixEnd(p []byte) []byte {
	e := append([]byte{}, p...)
	for i := len(e) - 1; i >= 0; i-- {
		if e[i] != 0xff {
			e[i]++
			return e[:i+1]
		}
	}
	return nil
}

// rowOverhead approximates the bytes one engine row costs beyond its key
// and value (sequence, kind, expiry, block and index share).
const rowOverhead = 24

// Usage approximates the bytes key takes (MEMORY USAGE): its metadata row
// and every element row, O(elements).
func (s *Store) Usage(ctx context.Context, db int, key []byte) (int64, bool, error) {
	if err := checkDB(db); err != nil {
		return 0, false, err
	}
	gen := s.gen(db)
	m, ok, err := s.getMeta(ctx, gen, key)
	if err != nil || !ok {
		return 0, false, err
	}
	metaKey := appendMetaKey(nil, gen, key)
	n := int64(len(metaKey) + len(appendMetaValue(nil, m)) + rowOverhead)
	kind, isColl := elementKind(m.Type)
	if !isColl {
		return n, true, nil
	}
	if m.ExpireAt != 0 {
		n += int64(len(appendExpiryKey(nil, gen, m.ExpireAt, key)) + 8 + rowOverhead)
	}
	it := s.newIter(ctx, lsm.IterOptions{Prefix: elementPrefix(kind, gen, key, m.Version)})
	for ok := it.First(); ok; ok = it.Next() {
		n += int64(len(it.Key()) + len(it.Value()) + rowOverhead)
	}
	return n, true, it.Close()
}

// Encoding names the encoding Redis 7.0 would give key's value (OBJECT
// ENCODING), from its type and size under Redis's default thresholds, so
// clients that branch on it behave as with Redis. Collection sizes come
// from the counts; element lengths are not checked.
func (s *Store) Encoding(ctx context.Context, db int, key []byte) (string, bool, error) {
	if err := checkDB(db); err != nil {
		return "", false, err
	}
	gen := s.gen(db)
	m, ok, err := s.getMeta(ctx, gen, key)
	if err != nil || !ok {
		return "", false, err
	}
	switch m.Type {
	case TypeString:
		if len(m.Payload) <= 20 {
			if _, err := strconv.ParseInt(string(m.Payload), 10, 64); err == nil && canonicalInt(m.Payload) {
				return "int", true, nil
			}
		}
		if len(m.Payload) <= 44 {
			return "embstr", true, nil
		}
		return "raw", true, nil
	case TypeHash:
		if m.Count <= 128 {
			return "listpack", true, nil
		}
		return "hashtable", true, nil
	case TypeList:
		return "quicklist", true, nil
	case TypeSet:
		if m.Count <= 512 {
			allInts := true
			c := &collection{s: s, gen: gen, key: key, meta: m, long: elementPrefix(kindSet, gen, key, m.Version)}
			err := c.scan(ctx, func(member, _ []byte) error {
				if _, err := strconv.ParseInt(string(member), 10, 64); err != nil || !canonicalInt(member) {
					allInts = false
				}
				return nil
			})
			if err != nil {
				return "", false, err
			}
			if allInts {
				return "intset", true, nil
			}
		}
		return "hashtable", true, nil
	case TypeZSet:
		if m.Count <= 128 {
			return "listpack", true, nil
		}
		return "skiplist", true, nil
	}
	return "", false, nil
}

// canonicalInt reports whether b is an integer as Redis prints it (no
// '+', no leading zeros), the strings Redis stores as integers.
func canonicalInt(b []byte) bool {
	n, err := strconv.ParseInt(string(b), 10, 64)
	return err == nil && strconv.FormatInt(n, 10) == string(b)
}
