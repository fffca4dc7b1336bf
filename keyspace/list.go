package keyspace

import (
	"context"
	"encoding/binary"

	"github.com/stratakv/strata/lsm"
)

// A list is a deque: its elements sit at positions head..tail-1 of its
// element rows, so pushes and pops at either end and LINDEX/LSET by index
// are one row each.

func posSuffix(pos uint64) []byte { return binary.BigEndian.AppendUint64(nil, pos) }

func (s *Store) openList(ctx context.Context, db int, key []byte, create bool) (*collection, bool, error) {
	c := new(collection)
	ok, err := s.openListInto(c, ctx, db, key, create)
	if !ok || err != nil {
		return nil, ok, err
	}
	return c, true, nil
}

// openListInto is openList filling *c (see openCollectionInto).
func (s *Store) openListInto(c *collection, ctx context.Context, db int, key []byte, create bool) (bool, error) {
	ok, err := s.openCollectionInto(c, ctx, db, key, TypeList, create)
	if err == nil && ok && !c.exists {
		c.meta.Head, c.meta.Tail = listInitialPosition, listInitialPosition
	}
	return ok, err
}

// LPush prepends vals one by one (so the last ends up first) and returns
// the new length. With onlyIfExists (LPUSHX), a missing list stays missing.
func (s *Store) LPush(ctx context.Context, db int, key []byte, vals ...[]byte) (int64, error) {
	return s.push(ctx, db, key, true, false, vals)
}

// RPush appends vals and returns the new length.
func (s *Store) RPush(ctx context.Context, db int, key []byte, vals ...[]byte) (int64, error) {
	return s.push(ctx, db, key, false, false, vals)
}

// LPushX is LPush on an existing list only.
func (s *Store) LPushX(ctx context.Context, db int, key []byte, vals ...[]byte) (int64, error) {
	return s.push(ctx, db, key, true, true, vals)
}

// RPushX is RPush on an existing list only.
func (s *Store) RPushX(ctx context.Context, db int, key []byte, vals ...[]byte) (int64, error) {
	return s.push(ctx, db, key, false, true, vals)
}

func (s *Store) push(ctx context.Context, db int, key []byte, left, onlyIfExists bool, vals [][]byte) (int64, error) {
	defer s.lock(db, key)()
	var c collection
	if _, err := s.openListInto(&c, ctx, db, key, true); err != nil {
		return 0, err
	}
	if onlyIfExists && !c.exists {
		return 0, nil
	}
	b := lsm.NewBatch()
	defer b.Release()
	for _, v := range vals {
		if left {
			c.meta.Head--
			c.putElem(b, posSuffix(c.meta.Head), v)
		} else {
			c.putElem(b, posSuffix(c.meta.Tail), v)
			c.meta.Tail++
		}
	}
	c.meta.Count += int64(len(vals))
	return c.meta.Count, c.finish(ctx, b)
}

// LPop removes and returns up to count elements from the head.
func (s *Store) LPop(ctx context.Context, db int, key []byte, count int) ([][]byte, error) {
	return s.pop(ctx, db, key, true, count)
}

// RPop removes and returns up to count elements from the tail.
func (s *Store) RPop(ctx context.Context, db int, key []byte, count int) ([][]byte, error) {
	return s.pop(ctx, db, key, false, count)
}

func (s *Store) pop(ctx context.Context, db int, key []byte, left bool, count int) ([][]byte, error) {
	defer s.lock(db, key)()
	var c collection
	ok, err := s.openListInto(&c, ctx, db, key, false)
	if err != nil || !ok {
		return nil, err
	}
	n := min(int64(count), c.meta.Count)
	b := lsm.NewBatch()
	defer b.Release()
	out := make([][]byte, 0, n)
	for range n {
		pos := c.meta.Tail - 1
		if left {
			pos = c.meta.Head
		}
		v, ok, err := c.get(ctx, posSuffix(pos))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errCorruptList(key, pos)
		}
		out = append(out, v)
		c.deleteElem(b, posSuffix(pos))
		if left {
			c.meta.Head++
		} else {
			c.meta.Tail--
		}
	}
	c.meta.Count -= n
	return out, c.finish(ctx, b)
}

// LLen returns the length of the list at key: O(1).
func (s *Store) LLen(ctx context.Context, db int, key []byte) (int64, error) {
	var c collection
	ok, err := s.openListInto(&c, ctx, db, key, false)
	if err != nil || !ok {
		return 0, err
	}
	return c.meta.Count, nil
}

// position maps a Redis index (negative from the end) to a position.
func (c *collection) position(i int64) (uint64, bool) {
	if i < 0 {
		i += c.meta.Count
	}
	if i < 0 || i >= c.meta.Count {
		return 0, false
	}
	return c.meta.Head + uint64(i), true
}

// LIndex returns the element at index i: O(1).
func (s *Store) LIndex(ctx context.Context, db int, key []byte, i int64) ([]byte, bool, error) {
	var c collection
	ok, err := s.openListInto(&c, ctx, db, key, false)
	if err != nil || !ok {
		return nil, false, err
	}
	pos, ok := c.position(i)
	if !ok {
		return nil, false, nil
	}
	return c.get(ctx, posSuffix(pos))
}

// LSet replaces the element at index i: O(1).
func (s *Store) LSet(ctx context.Context, db int, key []byte, i int64, val []byte) error {
	defer s.lock(db, key)()
	var c collection
	ok, err := s.openListInto(&c, ctx, db, key, false)
	if err != nil {
		return err
	}
	if !ok {
		return ErrNoSuchKey
	}
	pos, ok := c.position(i)
	if !ok {
		return ErrIndexOutOfRange
	}
	b := lsm.NewBatch()
	defer b.Release()
	c.putElem(b, posSuffix(pos), val)
	return c.s.commit(ctx, b)
}

// LRange returns the elements from start to stop inclusive, with Redis's
// clamping of out-of-range and negative indexes.
func (s *Store) LRange(ctx context.Context, db int, key []byte, start, stop int64) ([][]byte, error) {
	var out [][]byte
	var cp copier
	_, err := s.LRangeFunc(ctx, db, key, start, stop,
		func(n int) { out = make([][]byte, 0, n) },
		func(v []byte) { out = append(out, cp.copy(v)) })
	return out, err
}

// recentRangeMax bounds the elements recentRange reads: an LRANGE of the
// usual page, 10 to 100 elements, and its values fit on the stack.
const recentRangeMax = 128

// recentRange reads the n elements at positions from pos on from r alone,
// into vals, and reports whether it could: every one of them must be live
// in r (written since the memtable taking writes began, as a list's newest
// elements are). A scan of them would have merged the memtable's rows with
// those of every SST holding any in range, such as older versions of the
// same positions, pushed and popped before (LPUSH after LPOP reuses them):
// where those were, an LRANGE of 100 cost three times what the point
// reads here cost (BenchmarkLRange/reused). It checks the last element
// first, so a list whose range reaches past what r holds costs one lookup
// before the scan.
func (c *collection) recentRange(r lsm.Recent, pos uint64, n int, vals *[recentRangeMax][]byte) (int, bool) {
	var kbuf [lsm.WarmKeys][256]byte
	var keys [lsm.WarmKeys][]byte
	p := len(c.prefix())
	if p+8 > len(kbuf[0]) {
		return 0, false
	}
	for j := range min(lsm.WarmKeys, n) { // the prefix once; each key then rewrites its position
		keys[j] = append(kbuf[j][:0], c.prefix()...)
	}
	key := func(i, j int) []byte {
		return binary.BigEndian.AppendUint64(keys[j][:p], pos+uint64(i))
	}
	if keys[0] = key(n-1, 0); !r.Values(keys[:1], vals[n-1:]) {
		return 0, false
	}
	for i := 0; i < n-1; i += lsm.WarmKeys { // the last one is read
		m := min(lsm.WarmKeys, n-1-i)
		for j := range m {
			keys[j] = key(i+j, j)
		}
		if !r.Values(keys[:m], vals[i:i+m]) {
			return 0, false
		}
	}
	return n, true
}

// LRangeFunc is LRange without its copies, for a caller that writes each
// element somewhere at once (a reply): it calls begin with the number of
// elements from start to stop by the list's length, then each with every
// one of them in order, valid only during the call, and returns how many
// it passed. A missing list calls neither. A write that shortens the list
// between the read of its length and of its elements (another client's
// LPOP) leaves fewer than begin was told; never more.
func (s *Store) LRangeFunc(ctx context.Context, db int, key []byte, start, stop int64, begin func(n int), each func(v []byte)) (int, error) {
	var c collection
	ok, err := s.openListInto(&c, ctx, db, key, false)
	if err != nil || !ok {
		return 0, err
	}
	n := c.meta.Count
	if start < 0 {
		start = max(start+n, 0)
	}
	if stop < 0 {
		stop += n
	}
	stop = min(stop, n-1)
	if start > stop {
		begin(0)
		return 0, nil
	}
	if c.recent && s.tx == nil && stop-start < recentRangeMax {
		var vals [recentRangeMax][]byte
		if n, ok := c.recentRange(s.db.Recent(), c.meta.Head+uint64(start), int(stop-start+1), &vals); ok {
			begin(n)
			for _, v := range vals[:n] {
				each(v)
			}
			return n, nil
		}
	}
	begin(int(stop - start + 1))
	it := s.newIter(ctx, lsm.IterOptions{
		LowerBound: c.elem(posSuffix(c.meta.Head + uint64(start))),
		UpperBound: c.elem(posSuffix(c.meta.Head + uint64(stop) + 1)),
	})
	seen := 0
	for ok := it.First(); ok; ok = it.Next() {
		each(it.Value())
		seen++
	}
	return seen, it.Close()
}
