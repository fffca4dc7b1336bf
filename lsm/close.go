package lsm

import (
	"context"
	"errors"
)

// Close stores everything written so far in the WAL, flushes the memtables
// to L0 so the next Open has little to replay, and stops the engine. Writes
// after Close fail with ErrClosed. A fenced DB closes without flushing.
func (db *DB) Close() error {
	db.mu.Lock()
	if db.closing {
		db.mu.Unlock()
		return ErrClosed
	}
	db.closing = true
	fenced := db.bgErr
	db.mu.Unlock()

	db.commitMu.Lock()
	walErr := db.wal.Close()
	db.commitMu.Unlock()

	var flushErr error
	if fenced == nil && walErr == nil {
		flushErr = db.Flush(context.Background())
	}
	db.setBGErr(ErrClosed)
	close(db.done)
	db.wg.Wait()
	if errors.Is(fenced, ErrFenced) {
		return fenced
	}
	return errors.Join(db.mapWALErr(walErr), flushErr)
}

// Abandon stops the engine the way a crash would: nothing pending is
// written, no memtable is flushed, and WAL PUTs already in flight may or
// may not land. For crash tests and drills; a server calls Close.
func (db *DB) Abandon() {
	db.mu.Lock()
	db.closing = true
	db.mu.Unlock()
	db.wal.Abandon()
	db.setBGErr(ErrClosed)
	close(db.done)
	db.wg.Wait()
}

// Err returns the engine's sticky error, nil while it accepts writes: once
// it is fenced by a newer writer (learned from the manifest poll or a
// write), closed, or stopped by a storage failure, writes fail with it.
func (db *DB) Err() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.bgErr
}
