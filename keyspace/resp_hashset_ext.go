package keyspace

import (
	"context"
	"math/big"

	"github.com/stratakv/strata/lsm"
)

// HIncrByFloatText adds incr, given as the client sent it, to the float in
// field of the hash at key as Redis's HINCRBYFLOAT does, and returns the
// text it stored, which is also Redis's reply.
//
// HIncrByFloat takes the increment as a float64 and returns a float64, so
// an increment with more digits than a float64 holds, or a result whose
// long-double text has more ("3.00000000000000084"), cannot be replied
// exactly from it. This parses the increment as a long double and returns
// the stored text, checking in Redis's order: the increment (ErrNotFloat),
// an infinite increment (ErrValueNaNOrInf), the key's type, the field's
// value (ErrHashNotFloat), then the sum (ErrNaNOrInfinity).
func (s *Store) HIncrByFloatText(ctx context.Context, db int, key, field, incr []byte) ([]byte, error) {
	d, ok := parseLongDouble(incr)
	if !ok {
		return nil, ErrNotFloat
	}
	if d.IsInf() {
		return nil, ErrValueNaNOrInf
	}
	defer s.lock(db, key)()
	var c collection
	_, err := s.openCollectionInto(&c, ctx, db, key, TypeHash, true)
	if err != nil {
		return nil, err
	}
	v, had, err := c.get(ctx, field)
	if err != nil {
		return nil, err
	}
	cur := newLongDouble()
	if had {
		if cur, ok = parseLongDouble(v); !ok {
			return nil, ErrHashNotFloat
		}
	}
	// big.Float panics on inf + -inf: an infinite stored value ("inf" is
	// a float to strtold) makes the sum infinite, which Redis refuses.
	if cur.IsInf() {
		return nil, ErrNaNOrInfinity
	}
	sum := newLongDouble().Add(cur, d)
	if new(big.Float).Abs(sum).Cmp(ldblMax) > 0 {
		return nil, ErrNaNOrInfinity
	}
	text := []byte(formatLongDouble(sum))
	b := lsm.NewBatch()
	defer b.Release()
	c.putElem(b, field, text)
	if !had {
		c.meta.Count++
	}
	return text, c.finish(ctx, b)
}
