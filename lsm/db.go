package lsm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/manifest"
	"github.com/stratakv/strata/wal"
)

// The engine's public errors, checked with errors.Is.
var (
	ErrNotFound   = errors.New("lsm: not found")
	ErrClosed     = errors.New("lsm: closed")
	ErrFenced     = errors.New("lsm: fenced by a newer writer")
	ErrCorruption = sst.ErrCorruption
)

// DB is the LSM engine over one bucket (prefix). It is safe for concurrent
// use.
type DB struct {
	iterPool sync.Pool // of *Iterator, closed
	bkt      objstore.Bucket
	counts   *blob.CountingBucket
	opts     Options
	store    *manifest.Store
	cache    *sst.Cache
	clock    *clock
	tables   *tableCache
	epoch    uint64
	wal      *wal.Writer

	// commitMu serializes seq assignment, WAL append and memtable insert,
	// so WAL order, seq order and memtable contents agree.
	commitMu sync.Mutex
	seq      uint64    // last assigned seq. REQUIRES: commitMu held.
	walRows  []sst.Row // Write's copies of a batch's rows for the WAL. REQUIRES: commitMu held.

	// visibleSeq is the newest seq reads may see. Loaded before readState,
	// so every row with seq <= visibleSeq is in that state.
	visibleSeq atomic.Uint64
	state      atomic.Pointer[readState]

	// mu guards what follows and the installation of new read states.
	mu       sync.Mutex
	mem      *memtable
	imm      []*memtable // frozen, oldest first
	man      *manifest.Manifest
	bgErr    error         // sticky background error (fenced, closed, storage)
	failed   atomic.Bool   // bgErr != nil (set with it, by setBGErrLocked), for throttle's fast path
	changed  chan struct{} // closed and replaced when flushes or manifests land
	closing  bool
	flushReq chan struct{}
	done     chan struct{} // closed when background goroutines must stop
	wg       sync.WaitGroup

	m metricsCounters
}

// readState is an immutable view for readers: memtables and the manifest
// whose SSTs hold everything older.
type readState struct {
	mem *memtable
	imm []*memtable // newest first
	man *manifest.Manifest
}

// unflushed is the bytes of the state's memtables.
func (st *readState) unflushed() int64 {
	n := st.mem.size()
	for _, m := range st.imm {
		n += m.size()
	}
	return n
}

// Open opens (creating if empty) the database in bkt. It becomes the only
// writer: any writer open before it is fenced.
func Open(ctx context.Context, bkt objstore.Bucket, opts Options) (*DB, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if !opts.UnsafeSkipConditionalWriteCheck {
		if err := blob.CheckConditionalWrites(ctx, bkt); err != nil {
			return nil, err
		}
	}
	counts := blob.NewCountingBucket(bkt)
	db := &DB{
		bkt:      counts,
		counts:   counts,
		opts:     opts,
		store:    manifest.NewStore(counts),
		cache:    sst.NewCache(opts.BlockCacheBytes),
		changed:  make(chan struct{}),
		flushReq: make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
	db.tables = newTableCache(db.bkt, db.cache)
	if err := db.recover(ctx); err != nil {
		return nil, err
	}
	db.wg.Add(2)
	go db.flushLoop()
	go db.pollLoop()
	if !db.mem.empty() {
		// Flush what the WAL replay rebuilt, in the background: until then
		// every later open (a crash, a takeover) replays it again, and a
		// writer fenced before its first flush would hand the next one an
		// ever longer WAL.
		db.commitMu.Lock()
		db.rotate()
		db.commitMu.Unlock()
	}
	return db, nil
}

// recover loads the manifest, fences older writers and replays the WAL.
func (db *DB) recover(ctx context.Context) error {
	man, err := db.store.Latest(ctx)
	if errors.Is(err, manifest.ErrNotFound) {
		err = db.store.Create(ctx, &manifest.Manifest{ID: 1})
		if err != nil && !errors.Is(err, manifest.ErrConflict) {
			return fmt.Errorf("lsm: create first manifest: %w", err)
		}
		man, err = db.store.Latest(ctx)
	}
	if err != nil {
		return fmt.Errorf("lsm: load manifest: %w", err)
	}
	man, err = db.store.Update(ctx, man, func(m *manifest.Manifest) error {
		m.WriterEpoch++
		return nil
	})
	if err != nil {
		return fmt.Errorf("lsm: claim writer epoch: %w", err)
	}
	db.epoch = man.WriterEpoch
	fenced, err := wal.Fence(ctx, db.bkt, man.ReplayAfterWALID, db.epoch)
	if err != nil {
		return err
	}
	db.clock = newClock(db.opts.WallClock, man.ClockTick)
	db.seq = man.LastSeq
	mem := newMemtable()
	var history []wal.Stored
	err = wal.ReplayTorn(ctx, db.bkt, fenced.Replay, func(o wal.Object) error {
		history = append(history, wal.Stored{ID: o.ID, MaxSeq: o.Stats.MaxSeq})
		db.clock.observe(o.Stats.ClockTick)
		for _, r := range o.Rows {
			if r.Seq <= man.LastSeq {
				continue
			}
			mem.add(r)
			db.seq = max(db.seq, r.Seq)
		}
		mem.clockTick.Store(max(mem.clockTick.Load(), o.Stats.ClockTick))
		return nil
	}, func(skipped []uint64) {
		db.opts.Logger.Warn("WAL replay skipped a torn tail: objects a writer stored before a power loss "+
			"and never acknowledged, the first damaged", "first", skipped[0], "last", skipped[len(skipped)-1])
	})
	if err != nil {
		return err
	}
	history = append(history, wal.Stored{ID: fenced.Fence})
	db.wal = wal.NewWriter(db.bkt, fenced.FirstID, db.seq, history, wal.Options{
		Epoch:          db.epoch,
		Inflight:       db.opts.WALInflight,
		FlushInterval:  db.opts.WALFlushInterval,
		MaxObjectBytes: db.opts.WALMaxObjectBytes,
		Compression:    db.opts.Compression,
		Pacer:          db.opts.Pacer,
		Logger:         db.opts.Logger,
	})
	db.mem, db.man = mem, man
	db.visibleSeq.Store(db.seq)
	db.publishLocked()
	db.opts.Logger.Info("lsm opened", "manifest", man.ID, "epoch", db.epoch,
		"replayed_wal_objects", len(history)-1, "last_seq", db.seq, "l0", len(man.L0), "runs", len(man.Runs))
	return nil
}

// publishLocked installs a read state for the current memtables and
// manifest. REQUIRES: db.mu held, or no concurrent access (Open).
func (db *DB) publishLocked() {
	imm := make([]*memtable, len(db.imm))
	for i, m := range db.imm {
		imm[len(imm)-1-i] = m
	}
	db.state.Store(&readState{mem: db.mem, imm: imm, man: db.man})
	close(db.changed)
	db.changed = make(chan struct{})
}

// WriteHandle is returned by Write; Durable waits for the batch's WAL object.
type WriteHandle struct {
	db  *DB
	seq uint64
}

// Seq returns the batch's sequence number.
func (h WriteHandle) Seq() uint64 { return h.seq }

// Stored reports, without waiting, whether the batch is stored in the WAL
// (false too if it never will be: Durable says why).
func (h WriteHandle) Stored() bool { return h.seq == 0 || h.db.wal.DurableSeq() >= h.seq }

// Durable blocks until the batch is stored in the WAL, and so survives any
// crash, or returns why it cannot be (fenced, closed, ctx).
func (h WriteHandle) Durable(ctx context.Context) error {
	if h.seq == 0 {
		return nil
	}
	err := h.db.wal.WaitDurable(ctx, h.seq)
	if errors.Is(err, wal.ErrFenced) {
		return fmt.Errorf("%w: %w", ErrFenced, err)
	}
	if errors.Is(err, wal.ErrClosed) {
		return ErrClosed
	}
	return err
}

// LastWrite returns the handle of the newest write applied so far. Its
// Durable returns once every write applied before the call is durable
// (the WAL acknowledges in order), which lets a server send a pipeline's
// replies after one wait.
func (db *DB) LastWrite() WriteHandle {
	return WriteHandle{db: db, seq: db.visibleSeq.Load()}
}

// Write applies b atomically. The batch is visible to reads when Write
// returns and durable once the handle's Durable returns nil. b may be reused
// after Write returns.
func (db *DB) Write(ctx context.Context, b *Batch) (WriteHandle, error) {
	if b.Len() == 0 {
		return WriteHandle{db: db}, nil
	}
	if err := db.throttle(ctx); err != nil {
		return WriteHandle{}, err
	}
	db.commitMu.Lock()
	defer db.commitMu.Unlock()
	if db.wal.Failed() {
		return WriteHandle{}, db.mapWALErr(db.wal.Err())
	}
	seq := db.seq + 1
	// The batch's tick, which the WAL object and the memtable (so the
	// SST) record so that a restarted clock starts at or above it: the
	// clock's last tick, at or above every tick anything in the batch
	// (an expiry, a collection's version) was computed from, so the wall
	// clock need not be read per write (a clock read was 1.5-2% of a
	// pipelined write's CPU). The compaction clock is the manifest's,
	// read from the wall clock at each flush.
	tick := db.clock.Last()
	// The memtable copies the rows first, and the WAL is handed those
	// copies: they stay unchanged for as long as anything holds them, so
	// the batch's own bytes are free once Write returns, and a reused batch
	// allocates nothing for its rows. (A memtable's arena outlives its rows
	// in the WAL: the WAL's slices keep it reachable.)
	mem := db.mem // only rotate changes it, under commitMu
	rows := db.walRows[:0]
	for _, r := range b.rows {
		r.Seq = seq
		rows = append(rows, mem.add(r))
	}
	err := db.wal.Append(rows, tick)
	clear(rows)
	db.walRows = rows[:0]
	if err != nil {
		// The WAL stopped since Failed: it is fenced or closed, and no
		// write succeeds again. These rows are in the memtable, not
		// durable, as those of a write whose PUT fails are.
		return WriteHandle{}, db.mapWALErr(err)
	}
	db.seq = seq
	if tick > mem.clockTick.Load() {
		mem.clockTick.Store(tick)
	}
	db.visibleSeq.Store(seq)
	db.m.writes.Add(1)
	if mem.size() >= db.opts.MemtableSize {
		db.rotate()
	}
	return WriteHandle{db: db, seq: seq}, nil
}

func (db *DB) mapWALErr(err error) error {
	switch {
	case errors.Is(err, wal.ErrFenced):
		return fmt.Errorf("%w: %w", ErrFenced, err)
	case errors.Is(err, wal.ErrClosed):
		return ErrClosed
	}
	return err
}

// rotate freezes the memtable and asks the flusher to write it.
// REQUIRES: db.commitMu held (no insert is in progress).
func (db *DB) rotate() {
	db.mu.Lock()
	if !db.mem.empty() {
		db.imm = append(db.imm, db.mem)
		db.mem = newMemtable()
		db.publishLocked()
	}
	db.mu.Unlock()
	select {
	case db.flushReq <- struct{}{}:
	default:
	}
}

// throttle applies backpressure: writes wait while unflushed memtables
// exceed MaxUnflushedBytes, and are delayed a little while L0 is long.
func (db *DB) throttle(ctx context.Context) error {
	// The common case, without db.mu: the published read state is at most
	// one rotation or manifest behind, which only moves a write's throttling
	// by that much; past a limit, the loop below decides under the lock.
	if !db.failed.Load() {
		st := db.state.Load()
		if len(st.man.L0) < db.opts.L0SlowdownSSTs && st.unflushed() < db.opts.MaxUnflushedBytes {
			return nil
		}
	}
	stalled := time.Time{}
	for {
		db.mu.Lock()
		err := db.bgErr
		st := db.state.Load() // under db.mu, the current memtables and manifest
		unflushed, l0 := st.unflushed(), len(st.man.L0)
		ch := db.changed
		db.mu.Unlock()
		if err != nil {
			return err
		}
		if unflushed < db.opts.MaxUnflushedBytes {
			if !stalled.IsZero() {
				db.m.stallNanos.Add(int64(time.Since(stalled)))
			}
			if l0 >= db.opts.L0SlowdownSSTs {
				db.m.slowdowns.Add(1)
				time.Sleep(time.Millisecond)
			}
			return nil
		}
		if stalled.IsZero() {
			stalled = time.Now()
			db.m.stalls.Add(1)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Now returns the engine clock in ms since the epoch: the time reads use to
// decide expiry, never behind any write's time.
func (db *DB) Now() int64 { return db.clock.Now() }

// Get returns the value of key, or ErrNotFound if it is absent, deleted or
// expired. The returned slice is the caller's.
func (db *DB) Get(ctx context.Context, key []byte) ([]byte, error) {
	var v []byte
	err := db.View(ctx, key, func(value []byte) error {
		v = bytes.Clone(value)
		return nil
	})
	return v, err
}

// View calls fn with the value of key, or returns ErrNotFound if it is
// absent, deleted or expired. The value is not copied: it is valid only
// during fn, which must not change it. fn's error is View's.
func (db *DB) View(ctx context.Context, key []byte, fn func(value []byte) error) error {
	row, _, ok, err := db.getRow(ctx, key)
	if err != nil {
		return err
	}
	if !ok {
		return ErrNotFound
	}
	return fn(row.Value)
}

// ViewRecent is View that also tells fn whether the value is in the
// memtable taking writes (recent). A caller that rewrites a value it did
// not change only to keep it in memory, where reads of it are cheapest,
// can skip the write while it is recent.
func (db *DB) ViewRecent(ctx context.Context, key []byte, fn func(value []byte, recent bool) error) error {
	row, recent, ok, err := db.getRow(ctx, key)
	if err != nil {
		return err
	}
	if !ok {
		return ErrNotFound
	}
	return fn(row.Value, recent)
}

// getRow returns the newest visible row of key, if any is live, and
// whether it came from the mutable memtable. Its slices are shared with a
// memtable or an SST block: valid while held, not to be modified.
func (db *DB) getRow(ctx context.Context, key []byte) (r sst.Row, recent, ok bool, err error) {
	seq := db.visibleSeq.Load()
	rs := db.state.Load()
	db.m.gets.Add(1)
	if r, ok := rs.mem.get(key, seq); ok {
		return r, true, db.live(r), nil
	}
	if r, ok := rs.immGet(key, seq); ok {
		return r, false, db.live(r), nil
	}
	r, ok, err = db.tables.lookup(ctx, rs.man, key, &db.m.bloomSkips)
	return r, false, ok && db.live(r), err
}

// Recent is the memtable taking writes as it stood at one seq: the rows
// written since it began. A key whose visible row it holds has its newest
// row there, so a read through Recent touches nothing older (no other
// memtable, no SST); a key it lacks must be read the full way. It is for
// reads of rows that were likely just written, a list's newest elements
// say, which a scan would have merged with every SST's rows in range.
type Recent struct {
	db  *DB
	mem *memtable
	seq uint64
}

// Recent returns the memtable taking writes, at the newest visible seq.
func (db *DB) Recent() Recent {
	seq := db.visibleSeq.Load() // before the state: every row at or below seq is in it
	return Recent{db: db, mem: db.state.Load().mem, seq: seq}
}

// Values sets vals[i] to the value of keys[i], for the first WarmKeys
// keys, their cache misses overlapped (see Warm), and reports whether r
// holds a live row of every one of them as its newest row. When it does
// not, vals means nothing and the keys must be read the full way. The
// values are shared with the memtable: valid while held, not to be
// modified.
func (r Recent) Values(keys, vals [][]byte) bool {
	n := min(len(keys), WarmKeys)
	if !r.mem.values(keys[:n], r.seq, r.db.clock.Now, vals[:n]) {
		return false
	}
	r.db.m.gets.Add(uint64(n))
	return true
}

// ViewWarm calls fn with the value of key if the memtable taking writes
// holds it live, and reports whether it did; it never reads an SST. It is
// for hints that only pay off for what that memtable holds (Warm), which
// must cost no I/O and count no read: the command behind them reads again.
// The value is valid only during fn, which must not change it.
func (db *DB) ViewWarm(key []byte, fn func(value []byte)) bool {
	seq := db.visibleSeq.Load() // before the state, as getRow
	r, ok := db.state.Load().mem.get(key, seq)
	if !ok || !db.live(r) {
		return false
	}
	fn(r.Value)
	return true
}

// Warm is a hint that point reads of keys (the first WarmKeys) come
// next: it brings what the mutable memtable holds for them into the CPU's
// cache with their cache misses overlapped, where reading them one by one
// waits for each miss in turn. A pipeline of GETs of a memtable larger than
// the cache reads several times faster warmed (BenchmarkMemtableGetPipelined).
// It changes nothing a read returns.
func (db *DB) Warm(keys [][]byte) {
	db.state.Load().mem.warm(keys)
}

// live reports whether r is a value readers see now. The clock is read
// only for a row that can expire (a tenth of a cached GET's CPU went to
// reading it for every row).
func (db *DB) live(r sst.Row) bool {
	return r.Kind == sst.KindPut && (r.ExpireAt == 0 || r.ExpireAt > db.clock.Now())
}

// memGet returns key's newest row at or below seq in the memtables, newest
// memtable first, of any kind.
func (rs *readState) memGet(key []byte, seq uint64) (sst.Row, bool) {
	if r, ok := rs.mem.get(key, seq); ok {
		return r, true
	}
	return rs.immGet(key, seq)
}

// immGet is memGet over the immutable memtables only.
func (rs *readState) immGet(key []byte, seq uint64) (sst.Row, bool) {
	for _, m := range rs.imm {
		if r, ok := m.get(key, seq); ok {
			return r, true
		}
	}
	return sst.Row{}, false
}

// live reports whether r is a value readers see at clock time now.
func live(r *sst.Row, now int64) bool {
	return r.Kind == sst.KindPut && (r.ExpireAt == 0 || r.ExpireAt > now)
}

// lookup returns the newest row of key in the SSTs of man, of any kind:
// L0 newest first, then the runs newest first, skipping SSTs by key range
// and bloom filter.
func (c *tableCache) lookup(ctx context.Context, man *manifest.Manifest, key []byte, bloomSkips *atomic.Uint64) (sst.Row, bool, error) {
	r, ok, _, err := c.walk(ctx, man, key, 0, false, bloomSkips)
	return r, ok, err
}

// walk is lookup from the table at position from on (L0's tables, then
// one per run). With cacheOnly, a table whose data block for key is not
// cached ends the walk with a blockWait: once that block is loaded
// (GetMulti), walking again from its pos finishes the lookup.
func (c *tableCache) walk(ctx context.Context, man *manifest.Manifest, key []byte, from int, cacheOnly bool, bloomSkips *atomic.Uint64) (sst.Row, bool, *blockWait, error) {
	nL0 := len(man.L0)
	for pos := from; pos < nL0+len(man.Runs); pos++ {
		var t manifest.SST
		if pos < nL0 {
			t = man.L0[pos]
		} else {
			var ok bool
			if t, ok = findInRun(man.Runs[pos-nL0].SSTs, key); !ok {
				continue
			}
		}
		if bytes.Compare(key, t.Stats.Smallest) < 0 || bytes.Compare(key, t.Stats.Largest) > 0 {
			continue
		}
		rd, err := c.get(ctx, t)
		if err != nil {
			return sst.Row{}, false, nil, err
		}
		var r sst.Row
		var ok, filtered, uncached bool
		if cacheOnly {
			r, ok, filtered, uncached, err = rd.LookupCached(ctx, key)
		} else {
			r, ok, filtered, err = rd.Lookup(ctx, key)
		}
		if filtered {
			bloomSkips.Add(1)
		}
		switch {
		case err != nil:
			return sst.Row{}, false, nil, err
		case uncached:
			return sst.Row{}, false, &blockWait{pos: pos, rd: rd}, nil
		case ok:
			return r, true, nil, nil
		}
	}
	return sst.Row{}, false, nil, nil
}

// findInRun returns the SST of a sorted run whose key range holds key.
func findInRun(ssts []manifest.SST, key []byte) (manifest.SST, bool) {
	lo, hi := 0, len(ssts)
	for lo < hi {
		mid := (lo + hi) / 2
		if bytes.Compare(ssts[mid].Stats.Largest, key) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == len(ssts) || bytes.Compare(ssts[lo].Stats.Smallest, key) > 0 {
		return manifest.SST{}, false
	}
	return ssts[lo], true
}
