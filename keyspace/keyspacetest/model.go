// Package keyspacetest holds an in-memory reference model of the Redis
// semantics keyspace.Store implements, and a driver that runs the same
// random commands against the model and any other implementation of the
// Store API (the real Store, or real Redis in this package's tests) and
// compares every reply.
//
// The model is checked against redis-server 7.0 (model_test.go). Where the
// Store API and Redis differ by construction, the model follows the API and
// says so: see Model.
package keyspacetest

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/stratakv/strata/keyspace"
)

// NumDBs is the number of Redis databases, SELECT 0..15.
const NumDBs = 16

// Model is an in-memory Redis keyspace with the Store API: 16 databases of
// typed values with millisecond expiry, read from an injected clock.
//
// Expiry is lazy, as in Redis: a key whose expireAt has come is absent to
// every command and is deleted when next touched. A key is expired when
// expireAt <= now, as lsm hides a row whose ExpireAt <= now and as EXPIRE
// deletes a key given a time <= now. Redis itself keeps a key alive
// through the millisecond of its expireAt (PTTL 0); the model, like the
// Store, does not.
//
// Every method takes the ctx and db of the Store API; ctx is not used. A
// Model is safe for concurrent use; each command is atomic.
type Model struct {
	mu    sync.Mutex
	clock func() int64
	dbs   [NumDBs]map[string]*value
	rnd   *rand.Rand
}

// value is one key's value: typ says which field holds it. Collections are
// never empty: the command that empties one deletes the key.
type value struct {
	typ      Type
	str      []byte
	hash     map[string][]byte
	list     [][]byte
	set      map[string]struct{}
	zset     map[string]float64
	expireAt int64 // ms; 0: no TTL
}

// NewModel returns an empty model that reads the time in ms from clock (the
// wall clock if nil).
func NewModel(clock func() int64) *Model {
	if clock == nil {
		clock = func() int64 { return time.Now().UnixMilli() }
	}
	m := &Model{clock: clock, rnd: rand.New(rand.NewPCG(1, 2))}
	for i := range m.dbs {
		m.dbs[i] = map[string]*value{}
	}
	return m
}

// keyspace returns db's keys and the current time.
// REQUIRES: m.mu held.
func (m *Model) keyspace(db int) (map[string]*value, int64, error) {
	if db < 0 || db >= NumDBs {
		return nil, 0, ErrInvalidDB
	}
	return m.dbs[db], m.clock(), nil
}

// lookup returns key's live value, deleting it if it has expired.
func lookup(ks map[string]*value, now int64, key []byte) *value {
	v, ok := ks[string(key)]
	if !ok {
		return nil
	}
	if v.expireAt != 0 && v.expireAt <= now {
		delete(ks, string(key))
		return nil
	}
	return v
}

// lookupType returns key's live value if it has type t, nil if the key is
// missing, and ErrWrongType if it holds another type.
func lookupType(ks map[string]*value, now int64, key []byte, t Type) (*value, error) {
	v := lookup(ks, now, key)
	if v != nil && v.typ != t {
		return nil, ErrWrongType
	}
	return v, nil
}

// begin locks the model and returns db's keys and the time; the caller
// defers m.mu.Unlock.
func (m *Model) begin(db int) (map[string]*value, int64, error) {
	m.mu.Lock()
	return m.keyspace(db)
}

func clone(b []byte) []byte { return append([]byte{}, b...) }

// liveKeys returns db's live keys in ascending byte order.
func liveKeys(ks map[string]*value, now int64) []string {
	keys := make([]string, 0, len(ks))
	for k := range ks {
		if lookup(ks, now, []byte(k)) != nil {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// ---- strings ----

// Get is GET: the value and whether the key exists.
func (m *Model) Get(_ context.Context, db int, key []byte) ([]byte, bool, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return nil, false, err
	}
	v, err := lookupType(ks, now, key, TypeString)
	if v == nil || err != nil {
		return nil, false, err
	}
	return clone(v.str), true, nil
}

// Set is SET. ok says whether the value was written (NX and XX can stop
// it); old and hadOld report the previous value when o.Get is set, and are
// zero otherwise. With o.Get a key of another type is ErrWrongType and
// nothing is written; without it SET overwrites any type. The new value
// has no TTL unless KeepTTL keeps the old one or ExpireAt sets one; an
// ExpireAt <= now writes a key that is at once expired.
func (m *Model) Set(_ context.Context, db int, key, val []byte, o SetOptions) (old []byte, hadOld, ok bool, err error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	switch {
	case err != nil:
		return nil, false, false, err
	case o.NX && o.XX, o.KeepTTL && o.ExpireAt != 0:
		return nil, false, false, ErrSyntax
	case o.ExpireAt < 0:
		return nil, false, false, ErrInvalidExpire
	}
	cur := lookup(ks, now, key)
	if o.Get && cur != nil {
		if cur.typ != TypeString {
			return nil, false, false, ErrWrongType
		}
		old, hadOld = clone(cur.str), true
	}
	if (o.NX && cur != nil) || (o.XX && cur == nil) {
		return old, hadOld, false, nil
	}
	nv := &value{typ: TypeString, str: clone(val), expireAt: o.ExpireAt}
	if o.KeepTTL && cur != nil {
		nv.expireAt = cur.expireAt
	}
	ks[string(key)] = nv
	return old, hadOld, true, nil
}

// IncrBy is INCRBY: a missing key counts as 0; the TTL is kept.
func (m *Model) IncrBy(_ context.Context, db int, key []byte, delta int64) (int64, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return 0, err
	}
	v, err := lookupType(ks, now, key, TypeString)
	if err != nil {
		return 0, err
	}
	var cur int64
	if v != nil {
		var ok bool
		if cur, ok = parseInt(v.str); !ok {
			return 0, ErrNotInteger
		}
	}
	n, err := addInt64(cur, delta)
	if err != nil {
		return 0, err
	}
	setString(ks, key, v, []byte(strconv.FormatInt(n, 10)))
	return n, nil
}

// setString stores s as key's string, keeping old's TTL if old is not nil.
func setString(ks map[string]*value, key []byte, old *value, s []byte) {
	if old != nil {
		old.str = s
		return
	}
	ks[string(key)] = &value{typ: TypeString, str: s}
}

// IncrByFloat is INCRBYFLOAT, computed as Redis does in long double (see
// float.go); it stores Redis's text of the result (GET returns it exactly)
// and returns that text's float64. The TTL is kept.
func (m *Model) IncrByFloat(_ context.Context, db int, key []byte, delta float64) (float64, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return 0, err
	}
	v, err := lookupType(ks, now, key, TypeString)
	if err != nil {
		return 0, err
	}
	var cur []byte // nil: 0
	if v != nil {
		cur = v.str
	}
	if delta != delta { // NaN: no client can send it
		return 0, ErrNotFloat
	}
	s, err := keyspace.IncrFloat(cur, delta)
	if err != nil {
		return 0, err
	}
	setString(ks, key, v, []byte(s))
	f, _ := strconv.ParseFloat(s, 64)
	return f, nil
}

// Append is APPEND: the new length.
func (m *Model) Append(_ context.Context, db int, key, val []byte) (int64, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return 0, err
	}
	v, err := lookupType(ks, now, key, TypeString)
	if err != nil {
		return 0, err
	}
	if v == nil {
		v = &value{typ: TypeString, str: []byte{}}
		ks[string(key)] = v
	}
	v.str = append(clone(v.str), val...)
	return int64(len(v.str)), nil
}

// StrLen is STRLEN: 0 for a missing key.
func (m *Model) StrLen(_ context.Context, db int, key []byte) (int64, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return 0, err
	}
	v, err := lookupType(ks, now, key, TypeString)
	if v == nil || err != nil {
		return 0, err
	}
	return int64(len(v.str)), nil
}

// ---- keys ----

// Exists is EXISTS: a key named twice counts twice.
func (m *Model) Exists(_ context.Context, db int, keys ...[]byte) (int64, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return 0, err
	}
	var n int64
	for _, k := range keys {
		if lookup(ks, now, k) != nil {
			n++
		}
	}
	return n, nil
}

// TypeOf is TYPE.
func (m *Model) TypeOf(_ context.Context, db int, key []byte) (Type, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return TypeNone, err
	}
	if v := lookup(ks, now, key); v != nil {
		return v.typ, nil
	}
	return TypeNone, nil
}

// Del is DEL: the number of keys deleted (a key named twice counts once).
func (m *Model) Del(_ context.Context, db int, keys ...[]byte) (int64, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return 0, err
	}
	var n int64
	for _, k := range keys {
		if lookup(ks, now, k) != nil {
			delete(ks, string(k))
			n++
		}
	}
	return n, nil
}

// Rename is RENAME (nx false) and RENAMENX (nx true). A missing src is
// ErrNoSuchKey for both, also when dst == src. Renaming a key onto itself
// succeeds for RENAME and returns false for RENAMENX. The value keeps its
// TTL; a dst that existed is replaced whatever its type (RENAME) or stops
// the rename (RENAMENX).
func (m *Model) Rename(_ context.Context, db int, src, dst []byte, nx bool) (bool, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return false, err
	}
	v := lookup(ks, now, src)
	if v == nil {
		return false, ErrNoSuchKey
	}
	if string(src) == string(dst) {
		return !nx, nil
	}
	if nx && lookup(ks, now, dst) != nil {
		return false, nil
	}
	delete(ks, string(src))
	ks[string(dst)] = v
	return true, nil
}

// Expire is PEXPIREAT with its NX/XX/GT/LT condition: whether the TTL was
// set. atMs <= now deletes the key (and returns true) once the condition
// holds. GT and LT treat a key without a TTL as having an infinite one: GT
// never holds for it, LT always does.
func (m *Model) Expire(_ context.Context, db int, key []byte, atMs int64, c ExpireCond) (bool, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	switch {
	case err != nil:
		return false, err
	case c.NX && (c.XX || c.GT || c.LT):
		return false, ErrExpireNXAndOther
	case c.GT && c.LT:
		return false, ErrExpireGTLT
	}
	v := lookup(ks, now, key)
	if v == nil {
		return false, nil
	}
	cur := v.expireAt
	if (c.NX && cur != 0) || (c.XX && cur == 0) || (c.GT && (cur == 0 || atMs <= cur)) || (c.LT && cur != 0 && atMs >= cur) {
		return false, nil
	}
	if atMs <= now {
		delete(ks, string(key))
		return true, nil
	}
	v.expireAt = atMs
	return true, nil
}

// Persist is PERSIST: whether a TTL was removed.
func (m *Model) Persist(_ context.Context, db int, key []byte) (bool, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return false, err
	}
	v := lookup(ks, now, key)
	if v == nil || v.expireAt == 0 {
		return false, nil
	}
	v.expireAt = 0
	return true, nil
}

// PTTL is PTTL: -2 for a missing key, -1 for one without a TTL, else the ms
// left (> 0).
func (m *Model) PTTL(_ context.Context, db int, key []byte) (int64, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return 0, err
	}
	v := lookup(ks, now, key)
	switch {
	case v == nil:
		return -2, nil
	case v.expireAt == 0:
		return -1, nil
	}
	return v.expireAt - now, nil
}

// Scan is SCAN with MATCH, COUNT and TYPE. The model's cursor is the key to
// resume from, the last key examined followed by a 0 byte (so that a scan
// that stops at the empty key still returns a non-empty cursor): nil or
// empty starts, a nil next means the scan is done. Cursors are opaque;
// another implementation's differ. count (10 if <= 0)
// bounds the keys examined per call, before MATCH and TYPE filter them, so
// a call may return no keys and still not be the last. match "" and "*"
// match every key; typ TypeNone filters nothing. Keys come in ascending byte
// order; a key that lives through a whole scan is returned exactly once.
func (m *Model) Scan(_ context.Context, db int, cursor []byte, match string, count int, typ Type) ([]byte, [][]byte, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	if count <= 0 {
		count = 10
	}
	keys := liveKeys(ks, now)
	i, _ := slices.BinarySearch(keys, string(cursor))
	keys = keys[i:]
	var next []byte
	if len(keys) > count {
		keys = keys[:count]
		// Resume after the last key examined: its successor in byte order.
		next = append([]byte(keys[count-1]), 0)
	}
	var out [][]byte
	for _, k := range keys {
		if match != "" && match != "*" && !GlobMatch([]byte(match), []byte(k)) {
			continue
		}
		if typ != TypeNone && ks[k].typ != typ {
			continue
		}
		out = append(out, []byte(k))
	}
	return next, out, nil
}

// DBSize is DBSIZE: the number of live keys.
func (m *Model) DBSize(_ context.Context, db int) (int64, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return int64(len(liveKeys(ks, now))), nil
}

// RandomKey is RANDOMKEY: a live key chosen at random, false if there is
// none.
func (m *Model) RandomKey(_ context.Context, db int) ([]byte, bool, error) {
	ks, now, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return nil, false, err
	}
	keys := liveKeys(ks, now)
	if len(keys) == 0 {
		return nil, false, nil
	}
	return []byte(keys[m.rnd.IntN(len(keys))]), true, nil
}

// NextExpiry returns the earliest expireAt after `after` of any key in any
// db, and false if no key expires after it. Tests that compare the model
// with an implementation on another clock use it to stay clear of the
// moments keys expire.
func (m *Model) NextExpiry(after int64) (int64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var next int64
	found := false
	for _, ks := range m.dbs {
		for _, v := range ks {
			if v.expireAt > after && (!found || v.expireAt < next) {
				next, found = v.expireAt, true
			}
		}
	}
	return next, found
}

// FlushDB is FLUSHDB.
func (m *Model) FlushDB(_ context.Context, db int) error {
	ks, _, err := m.begin(db)
	defer m.mu.Unlock()
	if err != nil {
		return err
	}
	clear(ks)
	return nil
}

// FlushAll is FLUSHALL.
func (m *Model) FlushAll(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ks := range m.dbs {
		clear(ks)
	}
	return nil
}
