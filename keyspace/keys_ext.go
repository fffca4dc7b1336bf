package keyspace

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/stratakv/strata/lsm"
)

// ErrSameObject is COPY's and MOVE's reply when source and destination are
// one key.
var ErrSameObject = errors.New("ERR source and destination objects are the same")

// lockKeys is lock for keys that may lie in different databases: it takes
// the stripes of every (db, key) in ascending order, so it cannot deadlock
// with lock or another lockKeys, and returns the unlock function.
func (s *Store) lockKeys(keys ...DBKey) func() {
	if s.tx != nil {
		for _, k := range keys {
			s.tx.lock(k.DB, k.Key)
		}
		return func() {}
	}
	idx := make([]int, len(keys))
	for i, k := range keys {
		idx[i] = s.stripe(k.DB, k.Key)
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	for _, i := range idx {
		s.locks[i].Lock()
	}
	return func() {
		for j := len(idx) - 1; j >= 0; j-- {
			s.locks[idx[j]].Unlock()
		}
	}
}

// Copy copies src in database srcDB to dst in database dstDB, as COPY
// does: any type, with its expiry. If dst exists it reports false, unless
// replace, which overwrites it. A collection's elements are copied under
// dst with a new version: O(size), in one batch.
func (s *Store) Copy(ctx context.Context, srcDB int, src []byte, dstDB int, dst []byte, replace bool) (bool, error) {
	if err := checkDB(srcDB); err != nil {
		return false, err
	}
	if err := checkDB(dstDB); err != nil {
		return false, err
	}
	if srcDB == dstDB && bytes.Equal(src, dst) {
		return false, ErrSameObject
	}
	defer s.lockKeys(DBKey{srcDB, src}, DBKey{dstDB, dst})()
	srcGen, dstGen := s.gen(srcDB), s.gen(dstDB)
	m, ok, err := s.getMeta(ctx, srcGen, src)
	if err != nil || !ok {
		return false, err
	}
	old, dstExists, err := s.getMeta(ctx, dstGen, dst)
	if err != nil {
		return false, err
	}
	if dstExists && !replace {
		return false, nil
	}
	b := lsm.NewBatch()
	defer b.Release()
	if err := s.putCopy(ctx, b, srcGen, src, m, dstGen, dst, old, dstExists); err != nil {
		return false, err
	}
	return true, s.commit(ctx, b)
}

// Move moves key from database srcDB to dstDB with its expiry, as MOVE
// does. It reports false if key is missing or dstDB already has it.
func (s *Store) Move(ctx context.Context, srcDB int, key []byte, dstDB int) (bool, error) {
	if err := checkDB(srcDB); err != nil {
		return false, err
	}
	if err := checkDB(dstDB); err != nil {
		return false, err
	}
	if srcDB == dstDB {
		return false, ErrSameObject
	}
	defer s.lockKeys(DBKey{srcDB, key}, DBKey{dstDB, key})()
	srcGen, dstGen := s.gen(srcDB), s.gen(dstDB)
	m, ok, err := s.getMeta(ctx, srcGen, key)
	if err != nil || !ok {
		return false, err
	}
	_, dstExists, err := s.getMeta(ctx, dstGen, key)
	if err != nil || dstExists {
		return false, err
	}
	b := lsm.NewBatch()
	defer b.Release()
	if err := s.putCopy(ctx, b, srcGen, key, m, dstGen, key, Meta{}, false); err != nil {
		return false, err
	}
	deleteMeta(b, srcGen, key, m)
	return true, s.commit(ctx, b)
}

// putCopy adds to b dst (in dstGen) as a copy of src (in srcGen, metadata
// m), replacing old if hadOld. A collection gets a new version, never the
// source's: element rows are keyed by generation and key, so reusing it
// could revive stale rows left in dstGen by an earlier key of that name
// and version (a MOVE there and back). putMeta writes dst's expiry-index
// row under the new version.
// REQUIRES: src's and dst's stripes locked.
func (s *Store) putCopy(ctx context.Context, b *lsm.Batch, srcGen uint32, src []byte, m Meta, dstGen uint32, dst []byte, old Meta, hadOld bool) error {
	next := m
	if kind, ok := elementKind(m.Type); ok {
		next.Version = s.newVersion()
		if err := s.copyElements(ctx, b, kind, srcGen, src, m.Version, dstGen, dst, next.Version); err != nil {
			return err
		}
	}
	putMeta(b, dstGen, dst, next, old, hadOld)
	return nil
}

// ExpireTime returns key's absolute expiry in ms since the epoch, as
// PEXPIRETIME does: -2 if the key does not exist, -1 if it has no expiry.
func (s *Store) ExpireTime(ctx context.Context, db int, key []byte) (int64, error) {
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
	return m.ExpireAt, nil
}

// Touch counts the keys that exist, as TOUCH does (a key named twice
// counts twice). There is no access time to update.
func (s *Store) Touch(ctx context.Context, db int, keys ...[]byte) (int64, error) {
	return s.Exists(ctx, db, keys...)
}

// Keys returns every key of database db matching the glob pattern, in key
// order, as KEYS does ("*" matches every key, the empty one too). It walks
// only the keys that start with the pattern's literal prefix.
func (s *Store) Keys(ctx context.Context, db int, pattern string) ([][]byte, error) {
	if err := checkDB(db); err != nil {
		return nil, err
	}
	prefix := metaPrefix(s.gen(db))
	it := s.newIter(ctx, lsm.IterOptions{Prefix: append(slices.Clip(prefix), globLiteralPrefix(pattern)...)})
	keys := [][]byte{}
	var cp copier
	for ok := it.First(); ok; ok = it.Next() {
		key := it.Key()[len(prefix):]
		if pattern == "*" || globMatch(pattern, key) {
			keys = append(keys, cp.copy(key))
		}
	}
	return keys, it.Close()
}

// globLiteralPrefix returns the bytes every key matching pattern starts
// with: those before its first special character.
func globLiteralPrefix(pattern string) string {
	if i := strings.IndexAny(pattern, `*?[\`); i >= 0 {
		return pattern[:i]
	}
	return pattern
}
