package keyspacetest

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"strconv"

	"github.com/stratakv/strata/keyspace"
)

// ---- hashes ----

// HSet is HSET: the number of fields that were new. A field named twice
// takes the last value and counts once.
func (m *Model) HSet(_ context.Context, db int, key []byte, pairs ...[2][]byte) (int64, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return 0, err
	}
	v, err := lookupType(ks, now, key, TypeHash)
	if err != nil || len(pairs) == 0 {
		return 0, err
	}
	if v == nil {
		v = &value{typ: TypeHash, hash: map[string][]byte{}}
		ks[string(key)] = v
	}
	var added int64
	for _, p := range pairs {
		if _, ok := v.hash[string(p[0])]; !ok {
			added++
		}
		v.hash[string(p[0])] = clone(p[1])
	}
	return added, nil
}

// HGet is HGET.
func (m *Model) HGet(_ context.Context, db int, key, field []byte) ([]byte, bool, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return nil, false, err
	}
	v, err := lookupType(ks, now, key, TypeHash)
	if v == nil || err != nil {
		return nil, false, err
	}
	f, ok := v.hash[string(field)]
	return clone(f), ok, nil
}

// HDel is HDEL: the number of fields removed. The last one deletes the key.
func (m *Model) HDel(_ context.Context, db int, key []byte, fields ...[]byte) (int64, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return 0, err
	}
	v, err := lookupType(ks, now, key, TypeHash)
	if v == nil || err != nil {
		return 0, err
	}
	var n int64
	for _, f := range fields {
		if _, ok := v.hash[string(f)]; ok {
			delete(v.hash, string(f))
			n++
		}
	}
	if len(v.hash) == 0 {
		delete(ks, string(key))
	}
	return n, nil
}

// HLen is HLEN.
func (m *Model) HLen(_ context.Context, db int, key []byte) (int64, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return 0, err
	}
	v, err := lookupType(ks, now, key, TypeHash)
	if v == nil || err != nil {
		return 0, err
	}
	return int64(len(v.hash)), nil
}

// HExists is HEXISTS.
func (m *Model) HExists(_ context.Context, db int, key, field []byte) (bool, error) {
	_, ok, err := m.HGet(context.Background(), db, key, field)
	return ok, err
}

// HGetAll is HGETALL, fields in ascending byte order.
func (m *Model) HGetAll(_ context.Context, db int, key []byte) ([][2][]byte, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return nil, err
	}
	v, err := lookupType(ks, now, key, TypeHash)
	if v == nil || err != nil {
		return nil, err
	}
	out := make([][2][]byte, 0, len(v.hash))
	for f, val := range v.hash {
		out = append(out, [2][]byte{[]byte(f), clone(val)})
	}
	slices.SortFunc(out, func(a, b [2][]byte) int { return bytes.Compare(a[0], b[0]) })
	return out, nil
}

// HIncrBy is HINCRBY: a missing field counts as 0; a field that holds no
// canonical integer is ErrHashNotInteger.
func (m *Model) HIncrBy(_ context.Context, db int, key, field []byte, delta int64) (int64, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return 0, err
	}
	v, err := lookupType(ks, now, key, TypeHash)
	if err != nil {
		return 0, err
	}
	var cur int64
	if v != nil {
		if f, ok := v.hash[string(field)]; ok {
			if cur, ok = parseInt(f); !ok {
				return 0, ErrHashNotInteger
			}
		}
	}
	n, err := addInt64(cur, delta)
	if err != nil {
		return 0, err
	}
	hashSet(ks, key, v, field, []byte(strconv.FormatInt(n, 10)))
	return n, nil
}

// hashSet sets field of key's hash v, creating the hash if v is nil.
func hashSet(ks map[string]*value, key []byte, v *value, field, val []byte) {
	if v == nil {
		v = &value{typ: TypeHash, hash: map[string][]byte{}}
		ks[string(key)] = v
	}
	v.hash[string(field)] = val
}

// HIncrByFloat is HINCRBYFLOAT, in long double like IncrByFloat. An
// infinite delta is ErrValueNaNOrInf (checked before the key's type); a
// field that holds no float is ErrHashNotFloat.
func (m *Model) HIncrByFloat(_ context.Context, db int, key, field []byte, delta float64) (float64, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	switch {
	case err != nil:
		return 0, err
	case math.IsNaN(delta):
		return 0, ErrNotFloat
	case math.IsInf(delta, 0):
		return 0, ErrValueNaNOrInf
	}
	v, err := lookupType(ks, now, key, TypeHash)
	if err != nil {
		return 0, err
	}
	var cur []byte // nil: 0
	if v != nil {
		if f, ok := v.hash[string(field)]; ok {
			cur = f
		}
	}
	s, err := keyspace.IncrFloat(cur, delta)
	if errors.Is(err, ErrNotFloat) {
		return 0, ErrHashNotFloat
	}
	if err != nil {
		return 0, err
	}
	hashSet(ks, key, v, field, []byte(s))
	f, _ := strconv.ParseFloat(s, 64)
	return f, nil
}

// ---- lists ----

// LPush is LPUSH: each value goes to the head in turn, so LPUSH a b c
// leaves c b a. It returns the new length.
func (m *Model) LPush(ctx context.Context, db int, key []byte, vals ...[]byte) (int64, error) {
	return m.push(db, key, vals, true, false)
}

// RPush is RPUSH.
func (m *Model) RPush(ctx context.Context, db int, key []byte, vals ...[]byte) (int64, error) {
	return m.push(db, key, vals, false, false)
}

// LPushX is LPUSHX: LPUSH only if the list exists; 0 if it does not.
func (m *Model) LPushX(ctx context.Context, db int, key []byte, vals ...[]byte) (int64, error) {
	return m.push(db, key, vals, true, true)
}

// RPushX is RPUSHX.
func (m *Model) RPushX(ctx context.Context, db int, key []byte, vals ...[]byte) (int64, error) {
	return m.push(db, key, vals, false, true)
}

func (m *Model) push(db int, key []byte, vals [][]byte, head, onlyExisting bool) (int64, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return 0, err
	}
	v, err := lookupType(ks, now, key, TypeList)
	if err != nil {
		return 0, err
	}
	if v == nil {
		if onlyExisting || len(vals) == 0 {
			return 0, nil
		}
		v = &value{typ: TypeList}
		ks[string(key)] = v
	}
	for _, val := range vals {
		if head {
			v.list = slices.Insert(v.list, 0, clone(val))
		} else {
			v.list = append(v.list, clone(val))
		}
	}
	return int64(len(v.list)), nil
}

// LPop is LPOP with a count: nil for a missing key (whatever the count),
// an empty non-nil slice for count 0, else up to count elements from the
// head. A negative count is ErrNotPositive. LPOP without a count is
// LPop(1) replying with the one element.
func (m *Model) LPop(ctx context.Context, db int, key []byte, count int) ([][]byte, error) {
	return m.pop(db, key, count, true)
}

// RPop is RPOP with a count, elements from the tail, tail first.
func (m *Model) RPop(ctx context.Context, db int, key []byte, count int) ([][]byte, error) {
	return m.pop(db, key, count, false)
}

func (m *Model) pop(db int, key []byte, count int, head bool) ([][]byte, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	switch {
	case err != nil:
		return nil, err
	case count < 0:
		return nil, ErrNotPositive
	}
	v, err := lookupType(ks, now, key, TypeList)
	if v == nil || err != nil {
		return nil, err
	}
	n := min(count, len(v.list))
	out := make([][]byte, 0, n)
	for range n {
		if head {
			out, v.list = append(out, v.list[0]), v.list[1:]
		} else {
			out, v.list = append(out, v.list[len(v.list)-1]), v.list[:len(v.list)-1]
		}
	}
	if len(v.list) == 0 {
		delete(ks, string(key))
	}
	return out, nil
}

// LLen is LLEN.
func (m *Model) LLen(_ context.Context, db int, key []byte) (int64, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return 0, err
	}
	v, err := lookupType(ks, now, key, TypeList)
	if v == nil || err != nil {
		return 0, err
	}
	return int64(len(v.list)), nil
}

// LIndex is LINDEX: a negative index counts from the tail (-1 is the last);
// out of range is (nil, false).
func (m *Model) LIndex(_ context.Context, db int, key []byte, i int64) ([]byte, bool, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return nil, false, err
	}
	v, err := lookupType(ks, now, key, TypeList)
	if v == nil || err != nil {
		return nil, false, err
	}
	j, ok := listIndex(len(v.list), i)
	if !ok {
		return nil, false, nil
	}
	return clone(v.list[j]), true, nil
}

func listIndex(n int, i int64) (int, bool) {
	if i < 0 {
		i += int64(n)
	}
	return int(i), i >= 0 && i < int64(n)
}

// LSet is LSET: ErrNoSuchKey for a missing key, ErrIndexOutOfRange for an
// index outside the list.
func (m *Model) LSet(_ context.Context, db int, key []byte, i int64, val []byte) error {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return err
	}
	v, err := lookupType(ks, now, key, TypeList)
	switch {
	case err != nil:
		return err
	case v == nil:
		return ErrNoSuchKey
	}
	j, ok := listIndex(len(v.list), i)
	if !ok {
		return ErrIndexOutOfRange
	}
	v.list[j] = clone(val)
	return nil
}

// rankRange clamps LRANGE/ZRANGE's start and stop to a collection of n
// elements as Redis does; ok is false for an empty range.
func rankRange(n int, start, stop int64) (lo, hi int, ok bool) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if stop < 0 {
		stop += ln
	}
	start = max(start, 0)
	if start > stop || start >= ln {
		return 0, 0, false
	}
	stop = min(stop, ln-1)
	return int(start), int(stop), true
}

// LRange is LRANGE (stop inclusive, negative indexes from the tail).
func (m *Model) LRange(_ context.Context, db int, key []byte, start, stop int64) ([][]byte, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return nil, err
	}
	v, err := lookupType(ks, now, key, TypeList)
	if v == nil || err != nil {
		return nil, err
	}
	lo, hi, ok := rankRange(len(v.list), start, stop)
	if !ok {
		return nil, nil
	}
	out := make([][]byte, 0, hi-lo+1)
	for _, e := range v.list[lo : hi+1] {
		out = append(out, clone(e))
	}
	return out, nil
}

// ---- sets ----

// SAdd is SADD: the number of members that were new.
func (m *Model) SAdd(_ context.Context, db int, key []byte, members ...[]byte) (int64, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return 0, err
	}
	v, err := lookupType(ks, now, key, TypeSet)
	if err != nil || len(members) == 0 {
		return 0, err
	}
	if v == nil {
		v = &value{typ: TypeSet, set: map[string]struct{}{}}
		ks[string(key)] = v
	}
	var n int64
	for _, mb := range members {
		if _, ok := v.set[string(mb)]; !ok {
			v.set[string(mb)] = struct{}{}
			n++
		}
	}
	return n, nil
}

// SRem is SREM: the number of members removed. The last one deletes the
// key.
func (m *Model) SRem(_ context.Context, db int, key []byte, members ...[]byte) (int64, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return 0, err
	}
	v, err := lookupType(ks, now, key, TypeSet)
	if v == nil || err != nil {
		return 0, err
	}
	var n int64
	for _, mb := range members {
		if _, ok := v.set[string(mb)]; ok {
			delete(v.set, string(mb))
			n++
		}
	}
	if len(v.set) == 0 {
		delete(ks, string(key))
	}
	return n, nil
}

// SCard is SCARD.
func (m *Model) SCard(ctx context.Context, db int, key []byte) (int64, error) {
	ms, err := m.SMembers(ctx, db, key)
	return int64(len(ms)), err
}

// SIsMember is SISMEMBER.
func (m *Model) SIsMember(_ context.Context, db int, key, member []byte) (bool, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return false, err
	}
	v, err := lookupType(ks, now, key, TypeSet)
	if v == nil || err != nil {
		return false, err
	}
	_, ok := v.set[string(member)]
	return ok, nil
}

// SMembers is SMEMBERS, members in ascending byte order.
func (m *Model) SMembers(_ context.Context, db int, key []byte) ([][]byte, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return nil, err
	}
	v, err := lookupType(ks, now, key, TypeSet)
	if v == nil || err != nil {
		return nil, err
	}
	out := make([][]byte, 0, len(v.set))
	for mb := range v.set {
		out = append(out, []byte(mb))
	}
	slices.SortFunc(out, bytes.Compare)
	return out, nil
}

// ---- sorted sets ----

// ZAdd is ZADD (INCR is ZIncrBy). It returns the number of members added,
// or with CH added plus updated (a score that changed). NX with XX is
// ErrZAddNXXX; GT, LT and NX two at a time ErrZAddGTLTNX; a NaN score
// ErrNotFloat: all before the key's type is checked. GT and LT only stop
// updates, never additions. XX on a missing key creates nothing. A member
// named twice is added, then updated.
func (m *Model) ZAdd(_ context.Context, db int, key []byte, o ZAddOptions, pairs ...ZMember) (int64, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	switch {
	case err != nil:
		return 0, err
	case o.NX && o.XX:
		return 0, ErrZAddNXXX
	case (o.GT && o.NX) || (o.LT && o.NX) || (o.GT && o.LT):
		return 0, ErrZAddGTLTNX
	}
	for _, p := range pairs {
		if math.IsNaN(p.Score) {
			return 0, ErrNotFloat
		}
	}
	v, err := lookupType(ks, now, key, TypeZSet)
	if err != nil || len(pairs) == 0 || (v == nil && o.XX) {
		return 0, err
	}
	if v == nil {
		v = &value{typ: TypeZSet, zset: map[string]float64{}}
		ks[string(key)] = v
	}
	var added, updated int64
	for _, p := range pairs {
		cur, exists := v.zset[string(p.Member)]
		switch {
		case !exists && !o.XX:
			v.zset[string(p.Member)] = canonicalScore(p.Score)
			added++
		case !exists, o.NX, o.LT && p.Score >= cur, o.GT && p.Score <= cur:
		case p.Score != cur:
			v.zset[string(p.Member)] = canonicalScore(p.Score)
			updated++
		}
	}
	if o.CH {
		return added + updated, nil
	}
	return added, nil
}

// canonicalScore stores -0 as 0, as Redis's listpack encoding (every small
// sorted set) and the Store's sortable encoding do.
func canonicalScore(f float64) float64 {
	if f == 0 {
		return 0
	}
	return f
}

// ZIncrBy is ZINCRBY: the new score. -inf plus +inf is ErrNaN.
func (m *Model) ZIncrBy(_ context.Context, db int, key []byte, delta float64, member []byte) (float64, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	switch {
	case err != nil:
		return 0, err
	case math.IsNaN(delta):
		return 0, ErrNotFloat
	}
	v, err := lookupType(ks, now, key, TypeZSet)
	if err != nil {
		return 0, err
	}
	score := delta
	if v != nil {
		score += v.zset[string(member)]
		if math.IsNaN(score) {
			return 0, ErrNaN
		}
	} else {
		v = &value{typ: TypeZSet, zset: map[string]float64{}}
		ks[string(key)] = v
	}
	score = canonicalScore(score)
	v.zset[string(member)] = score
	return score, nil
}

// ZRem is ZREM: the number of members removed. The last one deletes the
// key.
func (m *Model) ZRem(_ context.Context, db int, key []byte, members ...[]byte) (int64, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return 0, err
	}
	v, err := lookupType(ks, now, key, TypeZSet)
	if v == nil || err != nil {
		return 0, err
	}
	var n int64
	for _, mb := range members {
		if _, ok := v.zset[string(mb)]; ok {
			delete(v.zset, string(mb))
			n++
		}
	}
	if len(v.zset) == 0 {
		delete(ks, string(key))
	}
	return n, nil
}

// ZCard is ZCARD.
func (m *Model) ZCard(_ context.Context, db int, key []byte) (int64, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return 0, err
	}
	v, err := lookupType(ks, now, key, TypeZSet)
	if v == nil || err != nil {
		return 0, err
	}
	return int64(len(v.zset)), nil
}

// ZScore is ZSCORE.
func (m *Model) ZScore(_ context.Context, db int, key, member []byte) (float64, bool, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return 0, false, err
	}
	v, err := lookupType(ks, now, key, TypeZSet)
	if v == nil || err != nil {
		return 0, false, err
	}
	s, ok := v.zset[string(member)]
	return s, ok, nil
}

// sortedZ returns the members of z by score, then member bytes, ascending;
// reversed (descending in both) if rev.
func sortedZ(z map[string]float64, rev bool) []ZMember {
	out := make([]ZMember, 0, len(z))
	for mb, s := range z {
		out = append(out, ZMember{Score: s, Member: []byte(mb)})
	}
	slices.SortFunc(out, func(a, b ZMember) int {
		if c := cmp.Compare(a.Score, b.Score); c != 0 {
			return c
		}
		return bytes.Compare(a.Member, b.Member)
	})
	if rev {
		slices.Reverse(out)
	}
	return out
}

// ZRange is ZRANGE by rank (ZREVRANGE if rev: rank 0 is the highest),
// clamped as LRANGE is.
func (m *Model) ZRange(_ context.Context, db int, key []byte, start, stop int64, rev bool) ([]ZMember, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return nil, err
	}
	v, err := lookupType(ks, now, key, TypeZSet)
	if v == nil || err != nil {
		return nil, err
	}
	lo, hi, ok := rankRange(len(v.zset), start, stop)
	if !ok {
		return nil, nil
	}
	return sortedZ(v.zset, rev)[lo : hi+1], nil
}

// ZRangeByScore is ZRANGEBYSCORE with LIMIT offset count
// (ZREVRANGEBYSCORE if rev: highest first; min and max keep their meaning).
// Without LIMIT, offset is 0 and count -1. A negative offset returns
// nothing, a negative count everything after the offset.
func (m *Model) ZRangeByScore(_ context.Context, db int, key []byte, lo, hi ScoreBound, offset, count int64, rev bool) ([]ZMember, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	switch {
	case err != nil:
		return nil, err
	case math.IsNaN(lo.Value) || math.IsNaN(hi.Value):
		return nil, ErrMinMaxNotFloat
	}
	v, err := lookupType(ks, now, key, TypeZSet)
	if v == nil || err != nil || offset < 0 {
		return nil, err
	}
	var out []ZMember
	for _, z := range sortedZ(v.zset, rev) {
		if !aboveMin(z.Score, lo) || !belowMax(z.Score, hi) {
			continue
		}
		if offset > 0 {
			offset--
			continue
		}
		if count == 0 {
			break
		}
		out = append(out, z)
		count--
	}
	return out, nil
}

func aboveMin(s float64, b ScoreBound) bool {
	if b.Exclusive {
		return s > b.Value
	}
	return s >= b.Value
}

func belowMax(s float64, b ScoreBound) bool {
	if b.Exclusive {
		return s < b.Value
	}
	return s <= b.Value
}

// ZRank is ZRANK (ZREVRANK if rev): false for a missing key or member.
func (m *Model) ZRank(_ context.Context, db int, key, member []byte, rev bool) (int64, bool, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return 0, false, err
	}
	v, err := lookupType(ks, now, key, TypeZSet)
	if v == nil || err != nil {
		return 0, false, err
	}
	if _, ok := v.zset[string(member)]; !ok {
		return 0, false, nil
	}
	i := slices.IndexFunc(sortedZ(v.zset, rev), func(z ZMember) bool { return string(z.Member) == string(member) })
	return int64(i), true, nil
}
