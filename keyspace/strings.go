package keyspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/stratakv/strata/lsm"
)

// SetOptions are SET's flags. ExpireAt (ms since the epoch, 0 = none) is
// the absolute expiry EX/PX/EXAT/PXAT resolve to.
type SetOptions struct {
	NX, XX, KeepTTL, Get bool
	ExpireAt             int64
}

// Get returns the string value of key.
func (s *Store) Get(ctx context.Context, db int, key []byte) ([]byte, bool, error) {
	if err := checkDB(db); err != nil {
		return nil, false, err
	}
	m, ok, err := s.getTyped(ctx, s.gen(db), key, TypeString)
	if err != nil || !ok {
		return nil, false, err
	}
	return m.Payload, true, nil
}

// GetView calls fn with the string value of key, if it has one, and
// reports whether it did. The value is not copied: it is valid only during
// fn, which must not change it. It spares GET a copy of every value.
func (s *Store) GetView(ctx context.Context, db int, key []byte, fn func(val []byte)) (bool, error) {
	if err := checkDB(db); err != nil {
		return false, err
	}
	if s.tx != nil {
		v, ok, err := s.Get(ctx, db, key)
		if ok {
			fn(v)
		}
		return ok, err
	}
	var kbuf [64]byte
	found := false
	err := s.db.View(ctx, appendMetaKey(kbuf[:0], s.gen(db), key), func(v []byte) error {
		m, err := decodeMeta(v)
		switch {
		case err != nil:
			return fmt.Errorf("keyspace: key %q: %w", key, err)
		case m.Type != TypeString:
			return ErrWrongType
		}
		found = true
		fn(m.Payload)
		return nil
	})
	if errors.Is(err, lsm.ErrNotFound) {
		return false, nil
	}
	return found, err
}

// WarmMeta is a hint that commands reading keys of database db come next:
// the engine brings their metadata rows into the CPU's cache together
// (lsm.DB.Warm). A server calls it for a pipeline of commands on keys. Outside a
// transaction only; it changes nothing.
func (s *Store) WarmMeta(db int, keys [][]byte) {
	if s.tx != nil || checkDB(db) != nil {
		return
	}
	var buf [warmBytes]byte
	var mks [WarmKeys][]byte
	gen, b, n := s.gen(db), buf[:0], 0
	for _, k := range keys {
		if n == len(mks) || len(b)+metaKeyHeaderLen+len(k) > cap(b) {
			break
		}
		b = appendMetaKey(b, gen, k)
		mks[n] = b[len(b)-metaKeyHeaderLen-len(k):]
		n++
	}
	s.db.Warm(mks[:n])
}

// WarmMembers is WarmMeta for commands on one member of a hash, set or
// sorted set each (HSET key field ..., SADD key member, ZSCORE key member):
// the rows of members[i] in the collection at keys[i] are warmed together.
// Finding a row's key takes its collection's metadata, read once for a
// run of commands on one key (a pipeline on a big hash); keys that hold
// no such collection are skipped. It changes nothing.
func (s *Store) WarmMembers(db int, keys, members [][]byte) {
	if s.tx != nil || checkDB(db) != nil {
		return
	}
	var buf [warmBytes]byte
	var rows [WarmKeys][]byte
	s.db.Warm(s.memberRows(db, keys, members, buf[:0], rows[:0]))
}

// memberRows appends to rows the engine keys of the rows WarmMembers
// warms, encoded in b's spare capacity: as many as fit. A collection's
// metadata is read from the memtable taking writes only (lsm.DB.ViewWarm):
// DB.Warm warms nothing else, and a metadata row elsewhere means none of the
// collection's rows was written since that memtable began.
func (s *Store) memberRows(db int, keys, members [][]byte, b []byte, rows [][]byte) [][]byte {
	var pbuf, mbuf [64]byte
	gen := s.gen(db)
	var prefix, last []byte
	var zset bool
	for i, k := range keys {
		if i == 0 || !bytes.Equal(k, last) {
			last, prefix = k, nil
			var m Meta
			var err error
			if !s.db.ViewWarm(appendMetaKey(mbuf[:0], gen, k), func(v []byte) { m, err = decodeMeta(v) }) || err != nil {
				continue
			}
			if kind, coll := elementKind(m.Type); coll && m.Type != TypeList {
				prefix = appendElementPrefix(pbuf[:0], kind, gen, k, m.Version)
				zset = m.Type == TypeZSet
			}
		}
		if prefix == nil {
			continue
		}
		if len(rows) == cap(rows) || len(b)+len(prefix)+1+len(members[i]) > cap(b) {
			break
		}
		start := len(b)
		b = append(b, prefix...)
		if zset {
			b = appendMemberSuffix(b, members[i])
		} else {
			b = append(b, members[i]...)
		}
		rows = append(rows, b[start:])
	}
	return rows
}

// WarmKeys is how many keys one WarmMeta looks at.
const WarmKeys = lsm.WarmKeys

// warmBytes bounds the metadata keys one WarmMeta encodes on its stack.
const warmBytes = 1024

// Set sets key to val as SET does. ok reports whether it was set (NX/XX);
// old and hadOld are the previous string value, for GET.
func (s *Store) Set(ctx context.Context, db int, key, val []byte, o SetOptions) (old []byte, hadOld, ok bool, err error) {
	if err := checkDB(db); err != nil {
		return nil, false, false, err
	}
	if o.ExpireAt < 0 {
		return nil, false, false, ErrInvalidExpire
	}
	defer s.lock(db, key)()
	gen := s.gen(db)
	if o == (SetOptions{}) {
		return nil, false, true, s.setBlind(ctx, gen, key, val)
	}
	m, exists, err := s.getMeta(ctx, gen, key)
	if err != nil {
		return nil, false, false, err
	}
	if o.Get && exists {
		if m.Type != TypeString {
			return nil, false, false, ErrWrongType
		}
		old, hadOld = m.Payload, true
	}
	if (o.NX && exists) || (o.XX && !exists) {
		return old, hadOld, false, nil
	}
	next := Meta{Type: TypeString, Payload: val, ExpireAt: o.ExpireAt}
	if o.KeepTTL && exists {
		next.ExpireAt = m.ExpireAt
	}
	b := lsm.NewBatch()
	defer b.Release()
	putMeta(b, gen, key, next, m, exists)
	return old, hadOld, true, s.commit(ctx, b)
}

// setBlind makes key the string val with no expiry without reading what
// it held: a plain SET or MSET is a single put. Whatever the key was, the
// new metadata row shadows it: an old collection's elements become
// unreachable by version, and an old expiry-index entry no longer matches
// the metadata, so the expirer deletes it when it comes due and the
// compaction filter drops it, both without touching the key.
// REQUIRES: key's stripe locked (an INCR or HSET racing it would otherwise
// write back what it read before this write).
func (s *Store) setBlind(ctx context.Context, gen uint32, key, val []byte) error {
	b := lsm.NewBatch()
	defer b.Release()
	s.putStrings(b, gen, [][2][]byte{{key, val}})
	return s.commit(ctx, b)
}

// setString replaces key's value keeping its expiry, as INCR and APPEND do.
// REQUIRES: key's stripe locked; m the current metadata if exists.
func (s *Store) setString(ctx context.Context, gen uint32, key []byte, val []byte, m Meta, exists bool) error {
	next := Meta{Type: TypeString, Payload: val}
	if exists {
		next.ExpireAt = m.ExpireAt
	}
	b := lsm.NewBatch()
	defer b.Release()
	putMeta(b, gen, key, next, m, exists)
	return s.commit(ctx, b)
}

// IncrBy adds delta to the integer value of key (0 if absent).
func (s *Store) IncrBy(ctx context.Context, db int, key []byte, delta int64) (int64, error) {
	if err := checkDB(db); err != nil {
		return 0, err
	}
	defer s.lock(db, key)()
	gen := s.gen(db)
	m, exists, err := s.getTyped(ctx, gen, key, TypeString)
	if err != nil {
		return 0, err
	}
	var cur int64
	if exists {
		if cur, err = parseInt(m.Payload); err != nil {
			return 0, err
		}
	}
	if (delta > 0 && cur > math.MaxInt64-delta) || (delta < 0 && cur < math.MinInt64-delta) {
		return 0, ErrOverflow
	}
	cur += delta
	var nbuf [20]byte // the batch copies the digits
	return cur, s.setString(ctx, gen, key, strconv.AppendInt(nbuf[:0], cur, 10), m, exists)
}

// IncrByFloat adds delta to the float value of key (0 if absent), in long
// double as Redis does, and stores the result's text.
func (s *Store) IncrByFloat(ctx context.Context, db int, key []byte, delta float64) (float64, error) {
	if err := checkDB(db); err != nil {
		return 0, err
	}
	if math.IsNaN(delta) {
		return 0, ErrNotFloat
	}
	defer s.lock(db, key)()
	gen := s.gen(db)
	m, exists, err := s.getTyped(ctx, gen, key, TypeString)
	if err != nil {
		return 0, err
	}
	var cur []byte
	if exists {
		cur = m.Payload
	}
	text, err := IncrFloat(cur, delta)
	if err != nil {
		return 0, err
	}
	f, _ := strconv.ParseFloat(text, 64)
	return f, s.setString(ctx, gen, key, []byte(text), m, exists)
}

// Append appends val to key's string and returns the new length.
func (s *Store) Append(ctx context.Context, db int, key, val []byte) (int64, error) {
	if err := checkDB(db); err != nil {
		return 0, err
	}
	defer s.lock(db, key)()
	gen := s.gen(db)
	m, exists, err := s.getTyped(ctx, gen, key, TypeString)
	if err != nil {
		return 0, err
	}
	next := append(append([]byte{}, m.Payload...), val...)
	return int64(len(next)), s.setString(ctx, gen, key, next, m, exists)
}

// StrLen returns the length of key's string (0 if absent).
func (s *Store) StrLen(ctx context.Context, db int, key []byte) (int64, error) {
	v, _, err := s.Get(ctx, db, key)
	return int64(len(v)), err
}

// parseInt parses a Redis integer: decimal, optional '-', no '+', no
// leading zeros or spaces, within int64.
func parseInt(b []byte) (int64, error) {
	if len(b) == 0 || len(b) > 20 || b[0] == '+' || (len(b) > 1 && b[0] == '0') ||
		(len(b) > 1 && b[0] == '-' && b[1] == '0') || b[len(b)-1] == ' ' || b[0] == ' ' {
		return 0, ErrNotInteger
	}
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, ErrNotInteger
	}
	return v, nil
}
