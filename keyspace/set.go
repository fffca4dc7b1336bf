package keyspace

import (
	"context"

	"github.com/stratakv/strata/lsm"
)

// SAdd adds members to the set at key and returns how many were new.
func (s *Store) SAdd(ctx context.Context, db int, key []byte, members ...[]byte) (int64, error) {
	defer s.lock(db, key)()
	var c collection
	_, err := s.openCollectionInto(&c, ctx, db, key, TypeSet, true)
	if err != nil {
		return 0, err
	}
	b := lsm.NewBatch()
	defer b.Release()
	var added int64
	for _, m := range distinct(members) {
		if ok, err := c.has(ctx, m); err != nil {
			return 0, err
		} else if !ok {
			c.putElem(b, m, nil)
			added++
		}
	}
	c.meta.Count += added
	return added, c.finish(ctx, b)
}

// SRem removes members from the set at key and returns how many existed.
func (s *Store) SRem(ctx context.Context, db int, key []byte, members ...[]byte) (int64, error) {
	defer s.lock(db, key)()
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeSet, false)
	if err != nil || !ok {
		return 0, err
	}
	b := lsm.NewBatch()
	defer b.Release()
	var n int64
	for _, m := range distinct(members) {
		if ok, err := c.has(ctx, m); err != nil {
			return 0, err
		} else if ok {
			c.deleteElem(b, m)
			n++
		}
	}
	c.meta.Count -= n
	return n, c.finish(ctx, b)
}

// SCard returns the number of members of the set at key: O(1).
func (s *Store) SCard(ctx context.Context, db int, key []byte) (int64, error) {
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeSet, false)
	if err != nil || !ok {
		return 0, err
	}
	return c.meta.Count, nil
}

// SIsMember reports whether m is in the set at key.
func (s *Store) SIsMember(ctx context.Context, db int, key, m []byte) (bool, error) {
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeSet, false)
	if err != nil || !ok {
		return false, err
	}
	_, ok, err = c.get(ctx, m)
	return ok, err
}

// SMembers returns the members of the set at key in byte order.
func (s *Store) SMembers(ctx context.Context, db int, key []byte) ([][]byte, error) {
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeSet, false)
	if err != nil || !ok {
		return nil, err
	}
	out := make([][]byte, 0, c.meta.Count)
	var cp copier
	err = c.scan(ctx, func(member, _ []byte) error {
		out = append(out, cp.copy(member))
		return nil
	})
	return out, err
}
