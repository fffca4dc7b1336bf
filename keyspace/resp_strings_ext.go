package keyspace

import (
	"context"
	"math/big"
)

// IncrByFloatText adds incr, given as the client sent it, to the float
// value of key (0 if absent) as Redis's INCRBYFLOAT does, and returns the
// text it stored, which is also Redis's reply.
//
// IncrByFloat takes the increment as a float64; Redis parses it with
// strtold, so an increment with more digits than a float64 holds
// ("12.34567890123456789") or beyond its range ("1e4000") gives a
// different sum. This parses it as a long double too, and checks in
// Redis's order: the key's type, then its value, then the increment (all
// three failures but the first are ErrNotFloat).
func (s *Store) IncrByFloatText(ctx context.Context, db int, key, incr []byte) ([]byte, error) {
	if err := checkDB(db); err != nil {
		return nil, err
	}
	defer s.lock(db, key)()
	gen := s.gen(db)
	m, exists, err := s.getTyped(ctx, gen, key, TypeString)
	if err != nil {
		return nil, err
	}
	cur := newLongDouble()
	if exists {
		var ok bool
		if cur, ok = parseLongDouble(m.Payload); !ok {
			return nil, ErrNotFloat
		}
	}
	d, ok := parseLongDouble(incr)
	if !ok {
		return nil, ErrNotFloat
	}
	// An infinite operand makes an infinite (or NaN) sum, which Redis
	// refuses; big.Float panics on inf + -inf, so check before adding.
	if cur.IsInf() || d.IsInf() {
		return nil, ErrNaNOrInfinity
	}
	sum := newLongDouble().Add(cur, d)
	if new(big.Float).Abs(sum).Cmp(ldblMax) > 0 {
		return nil, ErrNaNOrInfinity
	}
	text := []byte(formatLongDouble(sum))
	return text, s.setString(ctx, gen, key, text, m, exists)
}
