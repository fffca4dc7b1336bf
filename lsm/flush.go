package lsm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/manifest"
)

// flushLoop writes frozen memtables to L0 SSTs, oldest first.
func (db *DB) flushLoop() {
	defer db.wg.Done()
	for {
		select {
		case <-db.flushReq:
		case <-db.done:
			return
		}
		for {
			db.mu.Lock()
			var m *memtable
			if len(db.imm) > 0 && db.bgErr == nil {
				m = db.imm[0]
			}
			db.mu.Unlock()
			if m == nil {
				break
			}
			if err := db.flushMemtable(m); err != nil {
				if !db.retryable(err) {
					db.setBGErr(err)
					break
				}
				db.opts.Logger.Warn("memtable flush failed, retrying", "err", err)
				select {
				case <-time.After(time.Second):
				case <-db.done:
					return
				}
			}
		}
	}
}

func (db *DB) retryable(err error) bool {
	return !errors.Is(err, ErrFenced) && !errors.Is(err, sst.ErrCorruption) && !errors.Is(err, ErrClosed)
}

func (db *DB) setBGErr(err error) {
	db.mu.Lock()
	if db.setBGErrLocked(err) {
		if !errors.Is(err, ErrClosed) {
			db.opts.Logger.Error("lsm stopped accepting writes", "err", err)
		}
		close(db.changed)
		db.changed = make(chan struct{})
	}
	db.mu.Unlock()
}

// setBGErrLocked makes err the sticky background error unless there is one,
// and reports whether it did. REQUIRES: db.mu held.
func (db *DB) setBGErrLocked(err error) bool {
	if db.bgErr != nil {
		return false
	}
	db.bgErr = err
	db.failed.Store(true) // throttle's lock-free view of it
	return true
}

// flushMemtable writes m to one L0 SST and publishes it in the manifest.
func (db *DB) flushMemtable(m *memtable) error {
	start := time.Now()
	ctx := context.Background()
	// L0 may not grow past its stop limit: wait for the compactor.
	if err := db.waitL0(); err != nil {
		return err
	}
	maxSeq := m.maxSeq.Load()
	// Only WAL objects already stored can be skipped at replay, so the
	// memtable's rows must be durable before the manifest says they are.
	if err := db.wal.WaitDurable(ctx, maxSeq); err != nil {
		return db.mapWALErr(err)
	}
	data, stats, err := db.buildSST(m)
	if err != nil {
		return err
	}
	var added []manifest.SST
	if stats.Entries > 0 {
		id := blob.NewSSTID()
		if err := db.bkt.Upload(ctx, blob.SSTName(id), bytes.NewReader(data)); err != nil {
			return fmt.Errorf("lsm: upload %s: %w", blob.SSTName(id), err)
		}
		added = append(added, manifest.SST{ID: id, Size: uint64(len(data)), Stats: stats})
	}
	replayAfter := db.wal.FlushedThrough(maxSeq)
	// The manifest's clock tick is the compaction clock. Any tick up to the
	// engine clock is safe (reads already hide rows expired at it), and the
	// current one lets compaction drop rows that expired since the newest
	// write.
	tick := db.clock.Now()
	db.mu.Lock()
	cur := db.man
	db.mu.Unlock()
	next, err := db.store.Update(ctx, cur, func(man *manifest.Manifest) error {
		if err := manifest.CheckWriter(man, db.epoch); err != nil {
			return fmt.Errorf("%w: %w", ErrFenced, err)
		}
		man.L0 = append(append([]manifest.SST{}, added...), man.L0...)
		man.LastSeq = max(man.LastSeq, maxSeq)
		man.ClockTick = max(man.ClockTick, tick)
		man.ReplayAfterWALID = max(man.ReplayAfterWALID, replayAfter)
		return nil
	})
	if err != nil {
		return err
	}
	db.mu.Lock()
	db.installLocked(next)
	if len(db.imm) > 0 && db.imm[0] == m {
		db.imm = db.imm[1:]
	}
	db.publishLocked()
	db.mu.Unlock()
	db.m.flushes.Add(1)
	db.m.flushBytes.Add(uint64(len(data)))
	db.opts.Logger.Debug("memtable flushed", "entries", stats.Entries, "bytes", len(data),
		"manifest", next.ID, "took", time.Since(start))
	return nil
}

// waitL0 blocks while L0 is at its stop limit, except when the DB is
// closing: Close's final flush adds at most the memtables Close froze, and
// must not wait for a compactor that may never come.
func (db *DB) waitL0() error {
	for {
		db.mu.Lock()
		n, err, ch, closing := len(db.man.L0), db.bgErr, db.changed, db.closing
		db.mu.Unlock()
		if err != nil {
			return err
		}
		if n < db.opts.L0StopSSTs || closing {
			return nil
		}
		select {
		case <-ch:
		case <-db.done:
			return ErrClosed
		case <-time.After(db.opts.ManifestPollInterval):
		}
	}
}

// buildSST writes the newest version of each key in m. Older versions in the
// memtable are shadowed for every reader that can still exist.
func (db *DB) buildSST(m *memtable) ([]byte, sst.Stats, error) {
	b := sst.NewBuilder(sst.BuilderOptions{
		BlockSize:       db.opts.BlockSize,
		BloomBitsPerKey: db.opts.BloomBitsPerKey,
		Compression:     db.opts.Compression,
		Pacer:           db.opts.Pacer,
	})
	err := m.each(func(r sst.Row) error {
		if err := b.Add(r); err != nil {
			return fmt.Errorf("lsm: build L0 sst: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, sst.Stats{}, err
	}
	b.SetClockTick(m.clockTick.Load())
	return b.Finish()
}

// installLocked adopts a newer manifest, and notices being fenced.
// REQUIRES: db.mu held.
func (db *DB) installLocked(next *manifest.Manifest) {
	if next.ID <= db.man.ID {
		return
	}
	db.man = next
	db.tables.retain(next)
	if next.WriterEpoch > db.epoch && db.setBGErrLocked(fmt.Errorf("%w: manifest %d has writer epoch %d, ours is %d",
		ErrFenced, next.ID, next.WriterEpoch, db.epoch)) {
		db.opts.Logger.Error("lsm fenced", "err", db.bgErr)
	}
}

// pollLoop picks up manifests written by others (the compactor, or a newer
// writer that fences this one).
func (db *DB) pollLoop() {
	defer db.wg.Done()
	t := time.NewTicker(db.opts.ManifestPollInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-db.done:
			return
		}
		db.mu.Lock()
		cur := db.man
		db.mu.Unlock()
		next, err := db.store.Refresh(context.Background(), cur)
		if err != nil {
			db.opts.Logger.Warn("manifest poll failed", "err", err)
			continue
		}
		if next.ID > cur.ID {
			db.mu.Lock()
			db.installLocked(next)
			db.publishLocked()
			db.mu.Unlock()
		}
	}
}

// Flush freezes the memtable and waits until every frozen memtable is in an
// L0 SST.
//
// With nothing to flush it still publishes the engine clock as the
// manifest's clock tick, so compaction can drop what expired since the last
// flush even on an idle engine.
func (db *DB) Flush(ctx context.Context) error {
	db.commitMu.Lock()
	db.mu.Lock()
	idle := db.mem.empty() && len(db.imm) == 0
	db.mu.Unlock()
	db.rotate()
	db.commitMu.Unlock()
	if idle {
		return db.publishClock(ctx)
	}
	for {
		db.mu.Lock()
		n, err, ch := len(db.imm), db.bgErr, db.changed
		db.mu.Unlock()
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// publishClock records the engine clock as the manifest's clock tick.
func (db *DB) publishClock(ctx context.Context) error {
	db.mu.Lock()
	cur, err := db.man, db.bgErr
	db.mu.Unlock()
	if err != nil {
		return err
	}
	tick := db.clock.Now()
	if tick <= cur.ClockTick {
		return nil
	}
	next, err := db.store.Update(ctx, cur, func(man *manifest.Manifest) error {
		if err := manifest.CheckWriter(man, db.epoch); err != nil {
			return fmt.Errorf("%w: %w", ErrFenced, err)
		}
		man.ClockTick = max(man.ClockTick, tick)
		return nil
	})
	if err != nil {
		return err
	}
	db.mu.Lock()
	db.installLocked(next)
	db.publishLocked()
	db.mu.Unlock()
	return nil
}
