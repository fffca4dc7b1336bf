package keyspace

import (
	"bytes"
	"context"
	"math/rand/v2"

	"github.com/stratakv/strata/lsm"
)

// ExpireCond are EXPIRE's NX/XX/GT/LT flags.
type ExpireCond struct{ NX, XX, GT, LT bool }

// Exists counts the keys that exist; a key named twice counts twice.
func (s *Store) Exists(ctx context.Context, db int, keys ...[]byte) (int64, error) {
	if err := checkDB(db); err != nil {
		return 0, err
	}
	gen := s.gen(db)
	var n int64
	for _, k := range keys {
		_, ok, err := s.getMeta(ctx, gen, k)
		if err != nil {
			return 0, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// TypeOf returns the type of key, TypeNone if absent.
func (s *Store) TypeOf(ctx context.Context, db int, key []byte) (Type, error) {
	if err := checkDB(db); err != nil {
		return TypeNone, err
	}
	m, ok, err := s.getMeta(ctx, s.gen(db), key)
	if err != nil || !ok {
		return TypeNone, err
	}
	return m.Type, nil
}

// Del deletes keys and returns how many existed. It writes only metadata
// rows: O(1) per key whatever the size of its collection.
func (s *Store) Del(ctx context.Context, db int, keys ...[]byte) (int64, error) {
	if err := checkDB(db); err != nil {
		return 0, err
	}
	defer s.lock(db, keys...)()
	gen := s.gen(db)
	b := lsm.NewBatch()
	defer b.Release()
	var n int64
	for _, k := range distinct(keys) {
		m, ok, err := s.getMeta(ctx, gen, k)
		if err != nil {
			return 0, err
		}
		if ok {
			deleteMeta(b, gen, k, m)
			n++
		}
	}
	return n, s.commit(ctx, b)
}

// Rename moves src to dst, replacing dst (unless nx, then it reports
// false if dst exists). The TTL moves with the value. A collection's
// elements are keyed by its name, so they are copied under dst with a new
// version: O(size), in one batch.
func (s *Store) Rename(ctx context.Context, db int, src, dst []byte, nx bool) (bool, error) {
	if err := checkDB(db); err != nil {
		return false, err
	}
	defer s.lock(db, src, dst)()
	gen := s.gen(db)
	m, ok, err := s.getMeta(ctx, gen, src)
	if err != nil {
		return false, err
	}
	if !ok {
		return false, ErrNoSuchKey
	}
	if bytes.Equal(src, dst) {
		return !nx, nil
	}
	old, dstExists, err := s.getMeta(ctx, gen, dst)
	if err != nil {
		return false, err
	}
	if nx && dstExists {
		return false, nil
	}
	b := lsm.NewBatch()
	defer b.Release()
	next := m
	if kind, ok := elementKind(m.Type); ok {
		next.Version = s.newVersion()
		if err := s.copyElements(ctx, b, kind, gen, src, m.Version, gen, dst, next.Version); err != nil {
			return false, err
		}
	}
	deleteMeta(b, gen, src, m)
	putMeta(b, gen, dst, next, old, dstExists)
	return true, s.commit(ctx, b)
}

// copyElements adds to b a copy of every element row of (srcGen, src,
// version) under (dstGen, dst, newVersion).
func (s *Store) copyElements(ctx context.Context, b *lsm.Batch, kind byte, srcGen uint32, src []byte, version uint64,
	dstGen uint32, dst []byte, newVersion uint64) error {
	from := elementPrefix(kind, srcGen, src, version)
	to := elementPrefix(kind, dstGen, dst, newVersion)
	it := s.newIter(ctx, lsm.IterOptions{Prefix: from})
	for ok := it.First(); ok; ok = it.Next() {
		k := append(append([]byte{}, to...), it.Key()[len(from):]...)
		b.Put(k, it.Value())
	}
	return it.Close()
}

// Expire sets key's expiry to atMs (ms since the epoch) under cond, as
// EXPIRE/PEXPIREAT do; a time not in the future deletes the key. It reports
// whether the expiry was set (or the key deleted).
func (s *Store) Expire(ctx context.Context, db int, key []byte, atMs int64, cond ExpireCond) (bool, error) {
	if err := checkDB(db); err != nil {
		return false, err
	}
	defer s.lock(db, key)()
	gen := s.gen(db)
	m, ok, err := s.getMeta(ctx, gen, key)
	if err != nil || !ok {
		return false, err
	}
	// No TTL counts as an infinite one for GT and LT.
	switch {
	case cond.NX && m.ExpireAt != 0,
		cond.XX && m.ExpireAt == 0,
		cond.GT && (m.ExpireAt == 0 || atMs <= m.ExpireAt),
		cond.LT && m.ExpireAt != 0 && atMs >= m.ExpireAt:
		return false, nil
	}
	b := lsm.NewBatch()
	defer b.Release()
	if atMs <= s.db.Now() {
		deleteMeta(b, gen, key, m)
	} else {
		next := m
		next.ExpireAt = atMs
		putMeta(b, gen, key, next, m, true)
	}
	return true, s.commit(ctx, b)
}

// Persist removes key's expiry; it reports whether there was one.
func (s *Store) Persist(ctx context.Context, db int, key []byte) (bool, error) {
	if err := checkDB(db); err != nil {
		return false, err
	}
	defer s.lock(db, key)()
	gen := s.gen(db)
	m, ok, err := s.getMeta(ctx, gen, key)
	if err != nil || !ok || m.ExpireAt == 0 {
		return false, err
	}
	next := m
	next.ExpireAt = 0
	b := lsm.NewBatch()
	defer b.Release()
	putMeta(b, gen, key, next, m, true)
	return true, s.commit(ctx, b)
}

// PTTL returns the ms left before key expires: -2 if it does not exist,
// -1 if it has no expiry.
func (s *Store) PTTL(ctx context.Context, db int, key []byte) (int64, error) {
	if err := checkDB(db); err != nil {
		return 0, err
	}
	m, ok, err := s.getMeta(ctx, s.gen(db), key)
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return -2, nil
	case m.ExpireAt == 0:
		return -1, nil
	}
	return max(m.ExpireAt-s.db.Now(), 0), nil
}

// Scan returns up to count keys (more or fewer is allowed by Redis's
// contract; this returns at most count) after cursor in key order,
// matching the glob match and type typ (TypeNone: any), and the cursor to
// continue from, nil when the scan is complete. The cursor is the smallest
// key after the last one examined: keys added during a scan are returned if
// they sort after it, and no key present throughout is returned twice or
// missed.
func (s *Store) Scan(ctx context.Context, db int, cursor []byte, match string, count int, typ Type) ([]byte, [][]byte, error) {
	if err := checkDB(db); err != nil {
		return nil, nil, err
	}
	if count <= 0 {
		count = 10
	}
	gen := s.gen(db)
	prefix := metaPrefix(gen)
	it := s.newIter(ctx, lsm.IterOptions{Prefix: prefix})
	defer it.Close()
	ok := it.First()
	if cursor != nil {
		ok = it.SeekGE(appendMetaKey(nil, gen, cursor))
	}
	var keys [][]byte
	var next []byte
	examined := 0
	for ; ok && examined < count; ok = it.Next() {
		examined++
		key := it.Key()[len(prefix):]
		// The cursor is the smallest key after this one (key + 0x00): never
		// empty, even after the empty key.
		next = append(append(next[:0], key...), 0)
		if match != "" && match != "*" && !globMatch(match, key) {
			continue
		}
		if typ != TypeNone {
			m, err := decodeMeta(it.Value())
			if err != nil {
				return nil, nil, err
			}
			if m.Type != typ {
				continue
			}
		}
		keys = append(keys, append([]byte{}, key...))
	}
	if err := it.Error(); err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, keys, nil
	}
	return next, keys, nil
}

// countCheck is how many rows a count goes between looks at its context:
// counting a large database takes seconds, and a killed client or a closing
// server should not wait for it.
const countCheck = 4096

// countRows counts the rows it shows and closes it, giving up when ctx
// ends.
func countRows(ctx context.Context, it *lsm.Iterator) (int64, error) {
	var n int64
	for ok := it.First(); ok; ok = it.Next() {
		if n++; n%countCheck == 0 && ctx.Err() != nil {
			it.Close()
			return 0, ctx.Err()
		}
	}
	return n, it.Close()
}

// DBSize returns the number of keys in database db. It counts the live
// metadata rows (expired ones are hidden by the engine): O(keys).
func (s *Store) DBSize(ctx context.Context, db int) (int64, error) {
	if err := checkDB(db); err != nil {
		return 0, err
	}
	return countRows(ctx, s.newIter(ctx, lsm.IterOptions{Prefix: metaPrefix(s.gen(db))}))
}

// RandomKey returns a random key of database db: the first key at or after
// a random point of the key space, wrapping around.
func (s *Store) RandomKey(ctx context.Context, db int) ([]byte, bool, error) {
	if err := checkDB(db); err != nil {
		return nil, false, err
	}
	gen := s.gen(db)
	prefix := metaPrefix(gen)
	it := s.newIter(ctx, lsm.IterOptions{Prefix: prefix})
	defer it.Close()
	var probe [8]byte
	for i := range probe {
		probe[i] = byte(rand.IntN(256))
	}
	ok := it.SeekGE(appendMetaKey(nil, gen, probe[:]))
	if !ok {
		ok = it.First()
	}
	if !ok {
		return nil, false, it.Error()
	}
	return append([]byte{}, it.Key()[len(prefix):]...), true, nil
}
