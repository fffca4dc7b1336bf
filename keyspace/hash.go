package keyspace

import (
	"context"
	"errors"
	"math"
	"strconv"

	"github.com/stratakv/strata/lsm"
)

// HSet sets fields of the hash at key and returns how many were new.
func (s *Store) HSet(ctx context.Context, db int, key []byte, pairs ...[2][]byte) (int64, error) {
	defer s.lock(db, key)()
	var c collection
	_, err := s.openCollectionInto(&c, ctx, db, key, TypeHash, true)
	if err != nil {
		return 0, err
	}
	b := lsm.NewBatch()
	defer b.Release()
	var added int64
	var seen map[string]bool // fields counted, when there are several
	if len(pairs) > 1 {
		seen = make(map[string]bool, len(pairs))
	}
	for _, p := range pairs {
		if seen == nil || !seen[string(p[0])] {
			if seen != nil {
				seen[string(p[0])] = true
			}
			ok, err := c.has(ctx, p[0])
			if err != nil {
				return 0, err
			}
			if !ok {
				added++
			}
		}
		c.putElem(b, p[0], p[1])
	}
	c.meta.Count += added
	return added, c.finish(ctx, b)
}

// HGet returns the value of field in the hash at key.
func (s *Store) HGet(ctx context.Context, db int, key, field []byte) ([]byte, bool, error) {
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeHash, false)
	if err != nil || !ok {
		return nil, false, err
	}
	return c.get(ctx, field)
}

// HExists reports whether field is in the hash at key.
func (s *Store) HExists(ctx context.Context, db int, key, field []byte) (bool, error) {
	_, ok, err := s.HGet(ctx, db, key, field)
	return ok, err
}

// HDel removes fields from the hash at key and returns how many existed.
func (s *Store) HDel(ctx context.Context, db int, key []byte, fields ...[]byte) (int64, error) {
	defer s.lock(db, key)()
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeHash, false)
	if err != nil || !ok {
		return 0, err
	}
	b := lsm.NewBatch()
	defer b.Release()
	var n int64
	for _, f := range distinct(fields) {
		if _, ok, err := c.get(ctx, f); err != nil {
			return 0, err
		} else if ok {
			c.deleteElem(b, f)
			n++
		}
	}
	c.meta.Count -= n
	return n, c.finish(ctx, b)
}

// HLen returns the number of fields of the hash at key: O(1).
func (s *Store) HLen(ctx context.Context, db int, key []byte) (int64, error) {
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeHash, false)
	if err != nil || !ok {
		return 0, err
	}
	return c.meta.Count, nil
}

// HGetAll returns the fields and values of the hash at key, by field.
func (s *Store) HGetAll(ctx context.Context, db int, key []byte) ([][2][]byte, error) {
	var c collection
	ok, err := s.openCollectionInto(&c, ctx, db, key, TypeHash, false)
	if err != nil || !ok {
		return nil, err
	}
	out := make([][2][]byte, 0, c.meta.Count)
	var cp copier
	err = c.scan(ctx, func(field, value []byte) error {
		out = append(out, [2][]byte{cp.copy(field), cp.copy(value)})
		return nil
	})
	return out, err
}

// HIncrBy adds delta to the integer in field of the hash at key.
func (s *Store) HIncrBy(ctx context.Context, db int, key, field []byte, delta int64) (int64, error) {
	defer s.lock(db, key)()
	var c collection
	_, err := s.openCollectionInto(&c, ctx, db, key, TypeHash, true)
	if err != nil {
		return 0, err
	}
	v, ok, err := c.get(ctx, field)
	if err != nil {
		return 0, err
	}
	var cur int64
	if ok {
		if cur, err = parseInt(v); err != nil {
			return 0, ErrHashNotInteger
		}
	}
	if (delta > 0 && cur > math.MaxInt64-delta) || (delta < 0 && cur < math.MinInt64-delta) {
		return 0, ErrOverflow
	}
	cur += delta
	b := lsm.NewBatch()
	defer b.Release()
	c.putElem(b, field, strconv.AppendInt(nil, cur, 10))
	if !ok {
		c.meta.Count++
	}
	return cur, c.finish(ctx, b)
}

// HIncrByFloat adds delta to the float in field of the hash at key, in
// long double as Redis does, and stores the result's text.
func (s *Store) HIncrByFloat(ctx context.Context, db int, key, field []byte, delta float64) (float64, error) {
	if math.IsNaN(delta) || math.IsInf(delta, 0) {
		return 0, ErrValueNaNOrInf
	}
	defer s.lock(db, key)()
	var c collection
	_, err := s.openCollectionInto(&c, ctx, db, key, TypeHash, true)
	if err != nil {
		return 0, err
	}
	v, ok, err := c.get(ctx, field)
	if err != nil {
		return 0, err
	}
	var cur []byte
	if ok {
		cur = v
	}
	text, err := IncrFloat(cur, delta)
	if errors.Is(err, ErrNotFloat) {
		return 0, ErrHashNotFloat
	}
	if err != nil {
		return 0, err
	}
	b := lsm.NewBatch()
	defer b.Release()
	c.putElem(b, field, []byte(text))
	if !ok {
		c.meta.Count++
	}
	f, _ := strconv.ParseFloat(text, 64)
	return f, c.finish(ctx, b)
}
