package keyspace

import (
	"context"
	"math"

	"github.com/stratakv/strata/lsm"
)

// ZAddIncr is ZADD's INCR form (and ZINCRBY): it adds delta to member's
// score under ZADD's flags, as Redis's zsetAdd does, and returns the new
// score and true, or false when the flags left the member alone (Redis then
// replies null): NX on a present member, XX on an absent one, GT or LT when
// the sum is not greater or less than the old score.
//
// An absent member starts at delta itself, not at 0+delta, so a delta of
// -0 returns -0 as Redis replies; the stored score is canonical (0). A sum
// that is NaN (inf plus -inf) is ErrNaN and changes nothing.
func (s *Store) ZAddIncr(ctx context.Context, db int, key []byte, o ZAddOptions, delta float64, member []byte) (float64, bool, error) {
	switch {
	case o.NX && o.XX:
		return 0, false, ErrZAddNXXX
	case (o.GT && o.LT) || (o.NX && (o.GT || o.LT)):
		return 0, false, ErrZAddGTLTNX
	case math.IsNaN(delta):
		return 0, false, ErrNotFloat
	}
	defer s.lock(db, key)()
	var c collection
	_, err := s.openCollectionInto(&c, ctx, db, key, TypeZSet, true)
	if err != nil {
		return 0, false, err
	}
	old, had, err := c.score(ctx, member)
	if err != nil {
		return 0, false, err
	}
	score := delta
	if had {
		if o.NX {
			return 0, false, nil
		}
		score = old + delta
		if math.IsNaN(score) {
			return 0, false, ErrNaN
		}
		if (o.LT && score >= old) || (o.GT && score <= old) {
			return 0, false, nil
		}
		if score == old {
			return score, true, nil
		}
	} else if o.XX {
		return 0, false, nil
	}
	b := lsm.NewBatch()
	defer b.Release()
	c.setScore(b, member, canonicalScore(score), old, had)
	if !had {
		c.meta.Count++
	}
	return score, true, c.finish(ctx, b)
}
