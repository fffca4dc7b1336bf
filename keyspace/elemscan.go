package keyspace

import (
	"bytes"
	"context"

	"github.com/stratakv/strata/lsm"
)

// elementScan walks up to count element rows of c whose suffix starts
// with tag (nil: any), from cursor (nil: the start) in order, calling fn for
// each whose name (the suffix after tag) matches the glob. It returns the
// cursor to continue from: the smallest name after the last one examined,
// nil when done. Like SCAN, it never returns an element twice or misses one
// present throughout.
func (c *collection) elementScan(ctx context.Context, tag, cursor []byte, match string, count int, fn func(name, value []byte)) ([]byte, error) {
	if count <= 0 {
		count = 10
	}
	prefix := c.elem(tag)
	it := c.s.newIter(ctx, lsm.IterOptions{Prefix: prefix})
	defer it.Close()
	ok := it.First()
	if cursor != nil {
		ok = it.SeekGE(append(bytes.Clone(prefix), cursor...))
	}
	var next []byte
	for examined := 0; ok && examined < count; ok = it.Next() {
		examined++
		name := it.Key()[len(prefix):]
		next = append(append(next[:0], name...), 0)
		if match == "" || match == "*" || globMatch(match, name) {
			fn(name, it.Value())
		}
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	if !ok {
		return nil, nil
	}
	return next, nil
}

// HScan is HSCAN: fields and values of the hash at key, a page at a time.
func (s *Store) HScan(ctx context.Context, db int, key, cursor []byte, match string, count int) ([]byte, [][2][]byte, error) {
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeHash, false)
	if err != nil || !ok {
		return nil, nil, err
	}
	var out [][2][]byte
	var cp copier
	next, err := c.elementScan(ctx, nil, cursor, match, count, func(f, v []byte) {
		out = append(out, [2][]byte{cp.copy(f), cp.copy(v)})
	})
	return next, out, err
}

// SScan is SSCAN: members of the set at key, a page at a time.
func (s *Store) SScan(ctx context.Context, db int, key, cursor []byte, match string, count int) ([]byte, [][]byte, error) {
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeSet, false)
	if err != nil || !ok {
		return nil, nil, err
	}
	var out [][]byte
	var cp copier
	next, err := c.elementScan(ctx, nil, cursor, match, count, func(m, _ []byte) {
		out = append(out, cp.copy(m))
	})
	return next, out, err
}

// ZScan is ZSCAN: members and scores of the sorted set at key, in member
// order, a page at a time.
func (s *Store) ZScan(ctx context.Context, db int, key, cursor []byte, match string, count int) ([]byte, []ZMember, error) {
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeZSet, false)
	if err != nil || !ok {
		return nil, nil, err
	}
	var out []ZMember
	var decodeErr error
	var cp copier
	next, err := c.elementScan(ctx, []byte{zsetMemberTag}, cursor, match, count, func(m, v []byte) {
		score, err := decodeScoreValue(v)
		if err != nil && decodeErr == nil {
			decodeErr = err
		}
		out = append(out, ZMember{Score: score, Member: cp.copy(m)})
	})
	if err == nil {
		err = decodeErr
	}
	return next, out, err
}
