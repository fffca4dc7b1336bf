package keyspace

import (
	"context"
	"errors"
	"fmt"

	"github.com/stratakv/strata/lsm"
)

// Errors of the string commands below, with Redis's reply text. They live
// here rather than in errors.go so this file's commands stay self-contained.
var (
	ErrOffsetOutOfRange   = errors.New("ERR offset is out of range")
	ErrStringTooLong      = errors.New("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
	ErrInvalidExpireGetEx = errors.New("ERR invalid expire time in 'getex' command")
)

// maxStringLen is the longest string SETRANGE may build: Redis's default
// proto-max-bulk-len, 512 MB.
const maxStringLen = 512 << 20

// GetRange returns the bytes of key's string from start to end inclusive,
// as GETRANGE does: negative indexes count from the end, the range is
// clipped to the string, and a missing key reads as the empty string.
func (s *Store) GetRange(ctx context.Context, db int, key []byte, start, end int64) ([]byte, error) {
	v, _, err := s.Get(ctx, db, key)
	if err != nil {
		return nil, err
	}
	lo, hi, ok := stringRange(int64(len(v)), start, end)
	if !ok {
		return []byte{}, nil
	}
	return v[lo : hi+1], nil
}

// stringRange resolves GETRANGE's start and end against a string of n
// bytes, exactly as Redis 7.0 does (so -100 -100 on a short string is its
// first byte, and both negative with start > end is empty). ok is false
// when the range is empty.
func stringRange(n, start, end int64) (lo, hi int64, ok bool) {
	if start < 0 && end < 0 && start > end {
		return 0, 0, false
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		return 0, 0, false
	}
	return start, end, true
}

// SetRange overwrites key's string from offset with val, zero-padding it
// first if it is shorter, keeps its expiry, and returns the new length,
// as SETRANGE does. An empty val changes nothing (and creates no key).
func (s *Store) SetRange(ctx context.Context, db int, key []byte, offset int64, val []byte) (int64, error) {
	if err := checkDB(db); err != nil {
		return 0, err
	}
	if offset < 0 {
		return 0, ErrOffsetOutOfRange
	}
	defer s.lock(db, key)()
	gen := s.gen(db)
	m, exists, err := s.getTyped(ctx, gen, key, TypeString)
	if err != nil {
		return 0, err
	}
	if len(val) == 0 {
		return int64(len(m.Payload)), nil
	}
	if offset > maxStringLen-int64(len(val)) {
		return 0, ErrStringTooLong
	}
	n := max(int64(len(m.Payload)), offset+int64(len(val)))
	next := make([]byte, n)
	copy(next, m.Payload)
	copy(next[offset:], val)
	return n, s.setString(ctx, gen, key, next, m, exists)
}

// MGet returns the string values of keys, nil for a key that is missing or
// not a string (an empty string is a non-nil empty slice). It holds the
// keys' stripes while it reads, so it never sees half of an MSET.
func (s *Store) MGet(ctx context.Context, db int, keys ...[]byte) ([][]byte, error) {
	if err := checkDB(db); err != nil {
		return nil, err
	}
	gen := s.gen(db)
	out := make([][]byte, len(keys))
	if s.tx != nil {
		for i, k := range keys {
			m, ok, err := s.getMeta(ctx, gen, k)
			if err != nil {
				return nil, err
			}
			if ok && m.Type == TypeString {
				out[i] = m.Payload
			}
		}
		return out, nil
	}
	// One snapshot of the engine, not the keys' locks: a batch is seen
	// whole or not at all, and writers to these keys do not wait on the
	// reads (which may go to the bucket).
	mks := make([][]byte, len(keys))
	for i, k := range keys {
		mks[i] = appendMetaKey(nil, gen, k)
	}
	vals, err := s.db.GetMulti(ctx, mks)
	if err != nil {
		return nil, err
	}
	for i, v := range vals {
		if v == nil {
			continue
		}
		m, err := decodeMeta(v)
		if err != nil {
			return nil, fmt.Errorf("keyspace: key %q: %w", keys[i], err)
		}
		if m.Type == TypeString {
			out[i] = m.Payload
		}
	}
	return out, nil
}

// MSet sets every pair's key to its value as SET does (any old type is
// overwritten, any expiry cleared), all in one batch. A key given twice
// gets its last value.
func (s *Store) MSet(ctx context.Context, db int, pairs ...[2][]byte) error {
	if err := checkDB(db); err != nil {
		return err
	}
	defer s.lock(db, pairKeys(pairs)...)()
	gen := s.gen(db)
	b := lsm.NewBatch()
	defer b.Release()
	s.putStrings(b, gen, pairs)
	return s.commit(ctx, b)
}

// MSetNX sets the pairs as MSet does only if none of their keys exists,
// and reports whether it did.
func (s *Store) MSetNX(ctx context.Context, db int, pairs ...[2][]byte) (bool, error) {
	if err := checkDB(db); err != nil {
		return false, err
	}
	defer s.lock(db, pairKeys(pairs)...)()
	gen := s.gen(db)
	for _, p := range pairs {
		_, ok, err := s.getMeta(ctx, gen, p[0])
		if err != nil || ok {
			return false, err
		}
	}
	b := lsm.NewBatch()
	defer b.Release()
	s.putStrings(b, gen, pairs)
	return true, s.commit(ctx, b)
}

// pairKeys returns the keys of pairs, to lock.
func pairKeys(pairs [][2][]byte) [][]byte {
	keys := make([][]byte, len(pairs))
	for i, p := range pairs {
		keys[i] = p[0]
	}
	return keys
}

// putStrings adds to b each pair as a string with no expiry, replacing
// whatever the key held: only its metadata row (and expiry-index row) is
// touched, so an overwritten collection's elements become unreachable as
// with SET. A later pair for the same key replaces an earlier one in b.
// REQUIRES: the pairs' stripes locked.
func (s *Store) putStrings(b *lsm.Batch, gen uint32, pairs [][2][]byte) {
	for _, p := range pairs {
		putMeta(b, gen, p[0], Meta{Type: TypeString, Payload: p[1]}, Meta{}, false) // blind: see setBlind
	}
}

// GetDel returns key's string value and deletes the key, as GETDEL does.
func (s *Store) GetDel(ctx context.Context, db int, key []byte) ([]byte, bool, error) {
	if err := checkDB(db); err != nil {
		return nil, false, err
	}
	defer s.lock(db, key)()
	gen := s.gen(db)
	m, ok, err := s.getTyped(ctx, gen, key, TypeString)
	if err != nil || !ok {
		return nil, false, err
	}
	b := lsm.NewBatch()
	defer b.Release()
	deleteMeta(b, gen, key, m)
	return m.Payload, true, s.commit(ctx, b)
}

// GetExOptions are GETEX's flags. ExpireAt (ms since the epoch, 0 = leave
// the expiry alone) is the absolute time EX/PX/EXAT/PXAT resolve to; one at
// or before now deletes the key, as Redis does for a past EXAT/PXAT.
// Persist removes the expiry. At most one of them is set (GETEX rejects
// both); ExpireAt wins if both are.
type GetExOptions struct {
	ExpireAt int64
	Persist  bool
}

// GetEx returns key's string value and changes its expiry as GETEX does.
func (s *Store) GetEx(ctx context.Context, db int, key []byte, o GetExOptions) ([]byte, bool, error) {
	if o.ExpireAt < 0 {
		return nil, false, ErrInvalidExpireGetEx
	}
	if o.ExpireAt == 0 && !o.Persist {
		return s.Get(ctx, db, key)
	}
	if err := checkDB(db); err != nil {
		return nil, false, err
	}
	defer s.lock(db, key)()
	gen := s.gen(db)
	m, ok, err := s.getTyped(ctx, gen, key, TypeString)
	if err != nil || !ok {
		return nil, false, err
	}
	b := lsm.NewBatch()
	defer b.Release()
	next := m
	switch {
	case o.ExpireAt > 0 && o.ExpireAt <= s.db.Now():
		deleteMeta(b, gen, key, m)
	case o.ExpireAt > 0:
		next.ExpireAt = o.ExpireAt
		putMeta(b, gen, key, next, m, true)
	case m.ExpireAt != 0: // Persist
		next.ExpireAt = 0
		putMeta(b, gen, key, next, m, true)
	}
	return m.Payload, true, s.commit(ctx, b)
}
