package keyspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/stratakv/strata/lsm"
)

// NumDBs is the number of Redis databases (SELECT 0..15).
const NumDBs = 16

// Options configure a Store.
type Options struct {
	// Stripes is the number of per-key lock stripes. Default 1024.
	Stripes int
	// Async acknowledges a command once it is applied, without waiting for
	// the WAL (like appendfsync everysec: a crash may lose the last flush
	// interval). Default: wait, like appendfsync always.
	Async  bool
	Logger *slog.Logger
}

func (o *Options) ensureDefaults() {
	if o.Stripes <= 0 {
		o.Stripes = 1024
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Store is the Redis data model over one engine. A Store from Txn.Store
// runs commands inside a transaction; every other Store is the plain one.
type Store struct {
	*shared
	tx *Txn // nil outside a transaction
}

// shared is the state every view of one Store shares.
type shared struct {
	db      *lsm.DB
	opts    Options
	locks   []sync.Mutex
	unlocks []func() // locks[i].Unlock, made once: a method value made per call allocates
	seed    maphash.Seed
	version atomic.Uint64
	expired atomic.Uint64

	mods    []atomic.Uint64 // writes per lock stripe (watch.go)
	flushes atomic.Uint64   // FLUSHDB/FLUSHALL commands applied

	genMu sync.Mutex // serializes FLUSHDB/FLUSHALL
	gens  [NumDBs]atomic.Uint32
}

// Open loads the generation of every database and returns a Store.
func Open(ctx context.Context, db *lsm.DB, opts Options) (*Store, error) {
	opts.ensureDefaults()
	s := &Store{shared: &shared{db: db, opts: opts, locks: make([]sync.Mutex, opts.Stripes),
		mods: make([]atomic.Uint64, opts.Stripes), seed: maphash.MakeSeed()}}
	s.unlocks = make([]func(), len(s.locks))
	for i := range s.locks {
		s.unlocks[i] = s.locks[i].Unlock
	}
	// Start above every version handed out before a restart, even one in
	// this same millisecond: those are at most (their tick << 20) + count,
	// and every tick of a durable write is <= the engine clock now.
	s.version.Store((uint64(db.Now()) + 1) << 20)
	for i := range NumDBs {
		g, err := s.loadGen(ctx, i)
		if err != nil {
			return nil, err
		}
		s.gens[i].Store(g)
	}
	return s, nil
}

// gen returns the current generation of database i (as the transaction
// would leave it, inside one).
func (s *Store) gen(i int) uint32 {
	if s.tx != nil {
		if g, ok := s.tx.gens[i]; ok {
			return g
		}
	}
	return s.gens[i].Load()
}

// get reads key from the engine, through the transaction inside one.
func (s *Store) get(ctx context.Context, key []byte) ([]byte, error) {
	if s.tx != nil {
		return s.tx.ib.Get(ctx, key)
	}
	return s.db.Get(ctx, key)
}

// newIter iterates the engine, through the transaction inside one.
func (s *Store) newIter(ctx context.Context, o lsm.IterOptions) *lsm.Iterator {
	if s.tx != nil {
		return s.tx.ib.NewIter(ctx, o)
	}
	return s.db.NewIter(ctx, o)
}

func checkDB(db int) error {
	if db < 0 || db >= NumDBs {
		return ErrInvalidDB
	}
	return nil
}

// newVersion returns a collection version never used before, across
// restarts too: versions follow the engine clock (which never goes
// backwards and is persisted) shifted left by 20 bits, and Open starts
// them one millisecond above the clock, so a restarted Store is above every
// version handed out before unless more than a million collections a
// millisecond were created.
func (s *Store) newVersion() uint64 {
	floor := uint64(s.db.Now()) << 20
	for {
		cur := s.version.Load()
		next := max(cur+1, floor)
		if s.version.CompareAndSwap(cur, next) {
			return next
		}
	}
}

// stripe returns the lock index of key in database db.
func (s *Store) stripe(db int, key []byte) int {
	var h maphash.Hash
	h.SetSeed(s.seed)
	h.WriteByte(byte(db))
	h.Write(key)
	return int(h.Sum64() % uint64(len(s.locks)))
}

// lock takes the stripes of keys in ascending order (so multi-key commands
// cannot deadlock) and returns the unlock function. Inside a transaction
// the stripes are the transaction's, held until it commits.
func (s *Store) lock(db int, keys ...[]byte) func() {
	if s.tx != nil {
		s.tx.lock(db, keys...)
		return func() {}
	}
	if len(keys) == 1 { // the common case, without allocating
		i := s.stripe(db, keys[0])
		s.locks[i].Lock()
		return s.unlocks[i]
	}
	dks := make([]DBKey, len(keys))
	for i, k := range keys {
		dks[i] = DBKey{db, k}
	}
	return s.lockKeys(dks...)
}

// commit writes b as one atomic batch and, unless Async, waits until it is
// durable. Inside a transaction b joins the transaction's batch.
func (s *Store) commit(ctx context.Context, b *lsm.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	if s.tx != nil {
		s.tx.ib.Apply(b)
		s.tx.writes = append(s.tx.writes, b.Clone())
		return nil
	}
	h, err := s.db.Write(ctx, b)
	if err != nil {
		return err
	}
	s.bumpWrites(b)
	if s.opts.Async {
		return nil
	}
	return h.Durable(ctx)
}

// getMeta returns the live metadata of key, if any. The engine hides a
// metadata row once its expiry passed (the row carries the key's
// expire_at), so an expired key reads as absent here and everywhere.
func (s *Store) getMeta(ctx context.Context, gen uint32, key []byte) (Meta, bool, error) {
	m, ok, _, err := s.readMeta(ctx, gen, key)
	return m, ok, err
}

// readMeta is getMeta that also reports whether the metadata row is in the
// engine's mutable memtable (recent; never inside a transaction).
func (s *Store) readMeta(ctx context.Context, gen uint32, key []byte) (m Meta, ok, recent bool, err error) {
	var kbuf [64]byte // keys up to 55 bytes are encoded on the stack
	mk := appendMetaKey(kbuf[:0], gen, key)
	decode := func(v []byte) error {
		var derr error
		if m, derr = decodeMeta(v); derr != nil {
			return fmt.Errorf("keyspace: key %q: %w", key, derr)
		}
		m.Payload = bytes.Clone(m.Payload) // v is the engine's
		ok = true
		return nil
	}
	if s.tx != nil {
		var v []byte
		if v, err = s.tx.ib.Get(ctx, mk); err == nil {
			err = decode(v)
		}
	} else {
		err = s.db.ViewRecent(ctx, mk, func(v []byte, r bool) error {
			recent = r
			return decode(v)
		})
	}
	if errors.Is(err, lsm.ErrNotFound) {
		return Meta{}, false, false, nil
	}
	if err != nil {
		return Meta{}, false, false, err
	}
	return m, ok, recent, nil
}

// getTyped returns key's metadata if it holds type t; ErrWrongType if it
// holds another type.
func (s *Store) getTyped(ctx context.Context, gen uint32, key []byte, t Type) (Meta, bool, error) {
	m, ok, _, err := s.getTypedRecent(ctx, gen, key, t)
	return m, ok, err
}

// getTypedRecent is getTyped that also reports whether the metadata row is
// recent (see readMeta).
func (s *Store) getTypedRecent(ctx context.Context, gen uint32, key []byte, t Type) (Meta, bool, bool, error) {
	m, ok, recent, err := s.readMeta(ctx, gen, key)
	if err != nil || !ok {
		return m, ok, false, err
	}
	if m.Type != t {
		return m, false, false, ErrWrongType
	}
	return m, true, recent, nil
}

// putMeta adds the metadata row of key to b, moving its expiry-index entry
// when the expiry changed. old is the previous metadata (ok=false: none).
func putMeta(b *lsm.Batch, gen uint32, key []byte, m Meta, old Meta, hadOld bool) {
	// The batch copies the encodings, so they can live on the stack.
	var kbuf [64]byte
	var vbuf [128]byte
	b.PutWithExpiry(appendMetaKey(kbuf[:0], gen, key), appendMetaValue(vbuf[:0], m), m.ExpireAt)
	if hadOld && old.ExpireAt != 0 && (old.ExpireAt != m.ExpireAt || old.Version != m.Version) {
		b.Delete(appendExpiryKey(nil, gen, old.ExpireAt, key))
	}
	if m.ExpireAt != 0 {
		b.Put(appendExpiryKey(nil, gen, m.ExpireAt, key), appendExpiryValue(nil, m.Version))
	}
}

// deleteMeta adds the deletion of key to b: only the metadata row and its
// expiry entry. Element rows of its version become unreachable at once and
// are dropped by the compaction filter, so DEL is O(1) for any size.
func deleteMeta(b *lsm.Batch, gen uint32, key []byte, old Meta) {
	b.Delete(appendMetaKey(nil, gen, key))
	if old.ExpireAt != 0 {
		b.Delete(appendExpiryKey(nil, gen, old.ExpireAt, key))
	}
}
