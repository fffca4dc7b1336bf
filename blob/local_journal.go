package blob

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The local journal makes a create-if-absent upload to a LocalBucket durable
// with one fdatasync of an overwrite in a preallocated file, instead of an
// fsync of the new object and one of its directory. On ext4 the second way
// costs ~1.3 ms per WAL object under load (each fsync writes the inode,
// bitmaps and directory block); the first costs ~0.2 ms, what redis-server's
// appendfsync always pays.
//
// An upload through the journal writes its body to a temp file without
// fsync, publishes it under its name (create-if-absent, as before: the name
// shows a whole object or nothing, to every process), then appends a record
// (the name and the body) to the journal and fdatasyncs it; group commit lets
// concurrent uploads share one fdatasync. The object is then durable in the
// journal, if not yet in its own file.
//
// A process keeps two journal files of JournalBytes each, zero-filled once
// and then overwritten in place, so an fdatasync never has metadata to write.
// Records go to the active file. When it is full, or has held records for
// journalCheckpointAge, the other file becomes active and a checkpoint runs
// in the background: once every append to the old file has finished, one
// syncfs(2) makes everything written so far durable in its own right, and
// the old file is reset under a new generation (its header rewritten and
// fdatasynced), which voids its records. A checkpoint that is not over when
// the active file fills sends uploads the direct way (fsync, directory
// fsync) until it is: the journal never makes an upload wait for a
// checkpoint.
//
// Recovery. Every journal file is flocked by the process using it. Opening
// a LocalBucket takes the journal directory's LOCK, replays every journal
// file no live process holds, in (instance, generation) order, and removes
// it: a create record whose object is missing or differs from the record
// (torn by a power loss: named, but its data never reached the disk) is
// written again, fsynced, by rename; a forget record cancels the creates of
// its name before it. After a kill -9 every object is intact (the page
// cache survives a process) and replay writes nothing. After a power loss
// every process died, and the first to open the bucket repairs it before it,
// or any other process (they wait on LOCK), reads an object.
//
// Journal invariants:
//
//	J1. An upload that returned nil is in its own durable file, or in a
//	    valid record of a journal file that holds no older generation's
//	    records after it; a journal file is removed only after a syncfs that
//	    followed every append to it.
//	J2. Only create-if-absent uploads are journaled, and only after their
//	    name was published: a record names an object this process created, so a
//	    replay that finds different bytes under the name finds a torn copy,
//	    never another writer's object. (Strata never deletes such a name and
//	    creates it again with other bytes.)
//	J3. Deleting, or overwriting with a plain upload, a name whose record
//	    is not yet checkpointed first appends a durable forget record, so
//	    replay does not bring back the old bytes. If that append fails (the
//	    journal is then off), a replay after a power loss may restore the
//	    deleted object; Strata's deleted objects are garbage whose names are
//	    never reused (WAL ids at or below the replay point, old manifests),
//	    which garbage collection deletes again.
//	J4. A journal whose fdatasync, write or checkpoint fails is turned off
//	    for the rest of the process (uploads go the direct way) and its files
//	    are kept for the next open to replay unless a final syncfs at Close
//	    succeeds.

const (
	journalDirName  = ".journal"
	journalLockName = "LOCK"
	journalMagic    = "STRJNL01"
	// journalHeaderSize is the header's share of a file: magic, instance,
	// generation, crc32c of those, padding.
	journalHeaderSize = 32
	// journalRecordHeader: crc32c, body length, generation, kind, name length.
	journalRecordHeader = 4 + 4 + 8 + 1 + 2
	// DefaultJournalBytes is the size of each of a process's two journal
	// files.
	DefaultJournalBytes = 32 << 20
	// journalMaxBody is the largest body the journal takes (and half a
	// journal file, if that is less). A larger one is a big group of writes
	// (an everysec second, a bulk load) whose two fsyncs are a small part of
	// its cost, and journaling it would write its bytes to the disk twice
	// (record, then the object at the checkpoint).
	journalMaxBody = 1 << 20
	// journalCheckpointAge bounds how long a record lives before the
	// checkpoint that voids it: it bounds a replay's work, and the window
	// in which another process's delete of a journaled name (which writes no
	// forget record here) could be undone by a replay (J3).
	journalCheckpointAge = 2 * time.Second
)

const (
	recordCreate byte = 1
	recordForget byte = 2
)

var (
	// errJournalOff sends an upload the direct way: the journal is not
	// ready yet, is full while a checkpoint runs, failed, or is closed.
	errJournalOff = errors.New("blob: local journal not available")
	errLocked     = errors.New("blob: file is locked by another process")
	crcTable      = crc32.MakeTable(crc32.Castagnoli)
)

// JournalStats count a LocalBucket journal's work.
type JournalStats struct {
	Journaled   uint64 // uploads made durable by a journal record
	Direct      uint64 // uploads small enough for the journal that it could not take (not ready, full, off)
	Forgotten   uint64 // forget records appended
	Syncs       uint64 // fdatasyncs of journal files (group commit: <= Journaled)
	Checkpoints uint64 // checkpoints finished
	Replayed    uint64 // records read from dead journals at open
	Restored    uint64 // objects written again by replay (torn or missing)
	Err         error  // why the journal is off, if it failed
}

// journalFile is one of a process's two journal files.
type journalFile struct {
	f    *os.File // flocked while this process uses it
	fd   int      // f's descriptor for the raw writes of appends; f is closed only once no append is in flight
	path string
	// ring syncs the file through syncf, its own open file description, so
	// that closing f releases the flock at once: a ring may keep a file it
	// synced referenced for a while after the request completes.
	ring  *syncRing // nil where io_uring is unavailable: plain fdatasync
	syncf *os.File

	// Guarded by localJournal.mu.
	gen     uint64
	used    int64     // bytes reserved, the header included
	writers int       // appends that reserved space and have not finished
	since   time.Time // when its first record of this generation was reserved
	names   []string  // names of create records in this generation

	// Group commit: an append needs an fdatasync that started after its
	// write.
	syncMu            sync.Mutex
	syncCond          *sync.Cond
	syncing           bool
	started, finished uint64
	syncErr           error
}

// sync returns once an fdatasync that started after the call has finished.
func (f *journalFile) sync(count *atomic.Uint64) error {
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	need := f.started + 1
	for {
		if f.syncErr != nil {
			return f.syncErr
		}
		if f.finished >= need {
			return nil
		}
		if f.syncing {
			f.syncCond.Wait()
			continue
		}
		f.syncing = true
		f.started++
		g := f.started
		f.syncMu.Unlock()
		err := f.datasync()
		count.Add(1)
		f.syncMu.Lock()
		f.syncing = false
		f.finished = g
		if err != nil {
			f.syncErr = fmt.Errorf("blob: journal fdatasync: %w", err)
		}
		f.syncCond.Broadcast()
	}
}

// writeHeader starts generation gen: the header is written and made durable
// before any record of gen is, so records of an older generation after the
// new ones never pass for them.
func (f *journalFile) writeHeader(instance, gen uint64) error {
	var h [journalHeaderSize]byte
	copy(h[:8], journalMagic)
	binary.LittleEndian.PutUint64(h[8:], instance)
	binary.LittleEndian.PutUint64(h[16:], gen)
	binary.LittleEndian.PutUint32(h[24:], crc32.Checksum(h[:24], crcTable))
	if _, err := f.f.WriteAt(h[:], 0); err != nil {
		return err
	}
	return f.datasync()
}

// datasync is fdatasync(2) of the file, through its ring if it has one.
func (f *journalFile) datasync() error {
	if f.ring != nil {
		return f.ring.fdatasync(f.syncf)
	}
	return fdatasync(f.f)
}

// close closes the file (releasing its lock) and its ring.
func (f *journalFile) close() {
	f.f.Close()
	if f.ring != nil {
		f.ring.close()
		f.syncf.Close()
	}
}

// localJournal is a LocalBucket's journal; see the comment at the top.
type localJournal struct {
	dir      string
	size     int64
	instance uint64
	// checkpointSync makes everything written to the file system durable;
	// tests replace it.
	checkpointSync func() error

	mu        sync.Mutex
	cond      *sync.Cond // a file's writers reached 0, or a background task ended
	preparing bool
	active    *journalFile
	spare     *journalFile
	retired   *journalFile // being checkpointed
	nextGen   uint64
	names     map[string]uint64 // name -> generation of its create record, until voided
	err       error             // sticky: the journal is off (J4)
	closed    bool
	bg        sync.WaitGroup

	stats struct {
		journaled, direct, forgotten, syncs, checkpoints, replayed, restored atomic.Uint64
	}
}

func newLocalJournal(b *LocalBucket, size int64) (*localJournal, error) {
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	j := &localJournal{
		dir:      filepath.Join(b.root, journalDirName),
		size:     size,
		instance: binary.LittleEndian.Uint64(id[:]),
		nextGen:  1,
		names:    make(map[string]uint64),
	}
	j.cond = sync.NewCond(&j.mu)
	j.checkpointSync = func() error {
		d, err := os.Open(b.root)
		if err != nil {
			return err
		}
		defer d.Close()
		return syncFS(d)
	}
	return j, nil
}

// maxBody is the largest body the journal takes.
func (j *localJournal) maxBody() int { return int(min(j.size/2, journalMaxBody)) }

// appendRecord makes a record durable in the active file. errJournalOff
// means it was not written: the caller makes its object durable itself.
func (j *localJournal) appendRecord(kind byte, name string, body []byte) error {
	n := int64(journalRecordHeader + len(name) + len(body))
	j.mu.Lock()
	if j.err != nil || j.closed {
		j.mu.Unlock()
		return errJournalOff
	}
	if j.active == nil {
		j.prepareLocked()
		j.mu.Unlock()
		return errJournalOff
	}
	f := j.active
	if f.used+n > j.size || (f.used > journalHeaderSize && time.Since(f.since) > journalCheckpointAge) {
		if j.spare != nil && j.retired == nil {
			j.rotateLocked()
			f = j.active
		}
		if f.used+n > j.size {
			j.mu.Unlock()
			return errJournalOff
		}
	}
	if f.used == journalHeaderSize {
		f.since = time.Now() // the age that bounds a record's life starts with the first
	}
	off, gen := f.used, f.gen
	f.used += n
	f.writers++
	if kind == recordCreate {
		j.names[name] = gen
		f.names = append(f.names, name)
	} else {
		delete(j.names, name)
	}
	j.mu.Unlock()

	hdr := make([]byte, journalRecordHeader+len(name))
	binary.LittleEndian.PutUint32(hdr[4:], uint32(len(body)))
	binary.LittleEndian.PutUint64(hdr[8:], gen)
	hdr[16] = kind
	binary.LittleEndian.PutUint16(hdr[17:], uint16(len(name)))
	copy(hdr[journalRecordHeader:], name)
	crc := crc32.Update(crc32.Checksum(hdr[4:], crcTable), crcTable, body)
	binary.LittleEndian.PutUint32(hdr[0:], crc)
	err := writeFull2(f.fd, hdr, body, off) // raw: sysfile_linux.go
	if err != nil {
		err = &os.PathError{Op: "write", Path: f.path, Err: err}
	}
	if err == nil {
		err = f.sync(&j.stats.syncs)
	}

	j.mu.Lock()
	f.writers--
	if f.writers == 0 {
		j.cond.Broadcast()
	}
	if err != nil {
		j.failLocked(err)
	}
	j.mu.Unlock()
	return err
}

// forget appends a forget record if name has a create record not yet
// voided by a checkpoint (J3).
func (j *localJournal) forget(name string) {
	j.mu.Lock()
	_, ok := j.names[name]
	j.mu.Unlock()
	if ok && j.appendRecord(recordForget, name, nil) == nil {
		j.stats.forgotten.Add(1)
	}
}

// REQUIRES: j.mu held.
func (j *localJournal) failLocked(err error) {
	if j.err == nil {
		j.err = err
	}
}

// prepareLocked starts making the two journal files, once.
// REQUIRES: j.mu held.
func (j *localJournal) prepareLocked() {
	if j.preparing || j.closed || j.err != nil {
		return
	}
	j.preparing = true
	j.bg.Add(1)
	go func() {
		defer j.bg.Done()
		files, err := j.makeFiles()
		j.mu.Lock()
		defer j.mu.Unlock()
		defer j.cond.Broadcast()
		if err == nil && j.closed {
			err = errJournalOff
		}
		if err != nil {
			j.failLocked(err)
			for _, f := range files {
				f.close()
				os.Remove(f.path)
			}
			return
		}
		j.active, j.spare = files[0], files[1]
	}()
}

// makeFiles creates, locks and zero-fills the two files and starts their
// first generations.
func (j *localJournal) makeFiles() (files []*journalFile, err error) {
	defer func() {
		if err != nil {
			for _, f := range files {
				f.close()
				os.Remove(f.path)
			}
			files = nil
		}
	}()
	// Create and lock under LOCK, so a recovery in another process never
	// sees them unlocked and takes them for a dead process's.
	err = withJournalLock(j.dir, func() error {
		for i := range 2 {
			path := filepath.Join(j.dir, fmt.Sprintf("%016x-%d", j.instance, i))
			fh, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return err
			}
			f := &journalFile{f: fh, fd: int(fh.Fd()), path: path}
			f.syncCond = sync.NewCond(&f.syncMu)
			if r, err := newSyncRing(); err == nil {
				if f.syncf, err = os.Open(path); err == nil {
					f.ring = r
				} else {
					r.close()
				}
			}
			files = append(files, f)
			if err := lockFile(fh, false); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return files, err
	}
	zeros := make([]byte, 1<<20)
	for _, f := range files {
		for off := int64(0); off < j.size; off += int64(len(zeros)) {
			if _, err := f.f.WriteAt(zeros[:min(int64(len(zeros)), j.size-off)], off); err != nil {
				return files, err
			}
		}
		if err := f.f.Sync(); err != nil { // the size and extents, once
			return files, err
		}
		j.mu.Lock()
		f.gen = j.nextGen
		j.nextGen++
		j.mu.Unlock()
		if err := f.writeHeader(j.instance, f.gen); err != nil {
			return files, err
		}
		f.used = journalHeaderSize
	}
	return files, syncDir(j.dir)
}

// rotateLocked makes the spare active and checkpoints the old active file.
// REQUIRES: j.mu held, j.spare != nil, j.retired == nil.
func (j *localJournal) rotateLocked() {
	old := j.active
	j.active, j.spare, j.retired = j.spare, nil, old
	j.bg.Add(1)
	go func() {
		defer j.bg.Done()
		j.checkpoint(old)
	}()
}

// checkpoint voids old's records once what they hold is durable in its own
// right, and makes old the spare.
func (j *localJournal) checkpoint(old *journalFile) {
	j.mu.Lock()
	for old.writers > 0 {
		j.cond.Wait()
	}
	j.mu.Unlock()
	// Every object with a record in old was linked before its append
	// reserved space, so this syncfs covers them all (J1).
	err := j.checkpointSync()
	var gen uint64
	if err == nil {
		j.mu.Lock()
		gen = j.nextGen
		j.nextGen++
		j.mu.Unlock()
		err = old.writeHeader(j.instance, gen)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	defer j.cond.Broadcast()
	if err != nil {
		j.failLocked(fmt.Errorf("blob: journal checkpoint: %w", err))
		return // old stays retired, its records valid for a replay
	}
	for _, name := range old.names {
		if j.names[name] == old.gen {
			delete(j.names, name)
		}
	}
	old.names = old.names[:0]
	old.gen, old.used = gen, journalHeaderSize
	j.retired, j.spare = nil, old
	j.stats.checkpoints.Add(1)
}

// close makes everything journaled durable in its own right and removes
// the journal files. If that fails they are left for the next open to
// replay.
func (j *localJournal) close() error {
	files := j.shutdown()
	if len(files) == 0 {
		return nil
	}
	err := j.checkpointSync()
	for _, f := range files {
		if err == nil {
			os.Remove(f.path)
		}
		f.close()
	}
	if err != nil {
		return fmt.Errorf("blob: journal: final sync failed, journal kept for the next open: %w", err)
	}
	return syncDir(j.dir)
}

// abandon stops the journal as a crash would: files closed (their locks
// released), nothing synced or removed. For tests.
func (j *localJournal) abandon() {
	for _, f := range j.shutdown() {
		f.close()
	}
}

// shutdown turns the journal off for good, waits for its background work
// and its appends in flight, and hands over its files.
func (j *localJournal) shutdown() []*journalFile {
	j.mu.Lock()
	j.closed = true
	j.mu.Unlock()
	j.bg.Wait()
	j.mu.Lock()
	defer j.mu.Unlock()
	var files []*journalFile
	for _, f := range []*journalFile{j.active, j.spare, j.retired} {
		for f != nil && f.writers > 0 {
			j.cond.Wait()
		}
		if f != nil {
			files = append(files, f)
		}
	}
	j.active, j.spare, j.retired = nil, nil, nil
	return files
}

// waitReady waits until the journal can take records or is off. For tests
// and benchmarks that must not race the background preparation.
func (j *localJournal) waitReady() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.prepareLocked()
	for j.active == nil && j.err == nil && !j.closed {
		j.cond.Wait()
	}
	if j.err != nil {
		return j.err
	}
	if j.active == nil {
		return errJournalOff
	}
	return nil
}

func (j *localJournal) statsSnapshot() JournalStats {
	j.mu.Lock()
	err := j.err
	j.mu.Unlock()
	return JournalStats{
		Journaled:   j.stats.journaled.Load(),
		Direct:      j.stats.direct.Load(),
		Forgotten:   j.stats.forgotten.Load(),
		Syncs:       j.stats.syncs.Load(),
		Checkpoints: j.stats.checkpoints.Load(),
		Replayed:    j.stats.replayed.Load(),
		Restored:    j.stats.restored.Load(),
		Err:         err,
	}
}

// withJournalLock runs fn holding the journal directory's LOCK, which
// orders recoveries and the creation of journal files across processes.
func withJournalLock(dir string, fn func() error) error {
	lf, err := os.OpenFile(filepath.Join(dir, journalLockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer lf.Close() // releases the lock
	if err := lockFile(lf, true); err != nil {
		return err
	}
	return fn()
}

// journalRecord is a record read back by recovery.
type journalRecord struct {
	kind byte
	name string
	body []byte
}

// deadJournal is a journal file no live process holds.
type deadJournal struct {
	f        *os.File
	path     string
	instance uint64
	gen      uint64
	records  []journalRecord
}

// readJournal parses a journal file's valid records: those after a good
// header, of its generation, each whole and matching its crc, up to the
// first that is not.
func readJournal(data []byte) (instance, gen uint64, recs []journalRecord, ok bool) {
	if len(data) < journalHeaderSize || string(data[:8]) != journalMagic ||
		binary.LittleEndian.Uint32(data[24:]) != crc32.Checksum(data[:24], crcTable) {
		return 0, 0, nil, false
	}
	instance = binary.LittleEndian.Uint64(data[8:])
	gen = binary.LittleEndian.Uint64(data[16:])
	off := journalHeaderSize
	for len(data)-off >= journalRecordHeader {
		h := data[off:]
		bodyLen := int(binary.LittleEndian.Uint32(h[4:]))
		kind := h[16]
		nameLen := int(binary.LittleEndian.Uint16(h[17:]))
		if binary.LittleEndian.Uint64(h[8:]) != gen || (kind != recordCreate && kind != recordForget) {
			break
		}
		end := journalRecordHeader + nameLen + bodyLen
		if end > len(h) || crc32.Checksum(h[4:end], crcTable) != binary.LittleEndian.Uint32(h) {
			break
		}
		recs = append(recs, journalRecord{
			kind: kind,
			name: string(h[journalRecordHeader : journalRecordHeader+nameLen]),
			body: h[journalRecordHeader+nameLen : end],
		})
		off += end
	}
	return instance, gen, recs, true
}

// recoverJournals replays and removes the journal files of dead processes
// (see the comment at the top). It holds LOCK throughout, so a process
// opening the bucket meanwhile reads nothing before the repair is done.
func (b *LocalBucket) recoverJournals(j *localJournal) error {
	if err := mkdirAllDurable(j.dir); err != nil {
		return err
	}
	return withJournalLock(j.dir, func() error {
		entries, err := os.ReadDir(j.dir)
		if err != nil {
			return err
		}
		var dead []*deadJournal
		defer func() {
			for _, d := range dead {
				d.f.Close()
			}
		}()
		for _, e := range entries {
			if e.Name() == journalLockName || !e.Type().IsRegular() {
				continue
			}
			path := filepath.Join(j.dir, e.Name())
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			} else if err != nil {
				return err
			}
			if err := lockFile(f, false); err != nil {
				f.Close()
				if errors.Is(err, errLocked) {
					continue // a live process's
				}
				return err
			}
			data, err := io.ReadAll(f)
			if err != nil {
				f.Close()
				return err
			}
			d := &deadJournal{f: f, path: path}
			var ok bool
			d.instance, d.gen, d.records, ok = readJournal(data)
			if !ok {
				d.records = nil // a header torn while a generation started: no records of it were acknowledged (J1)
			}
			dead = append(dead, d)
		}
		if len(dead) == 0 {
			return nil
		}
		slices.SortFunc(dead, func(a, b *deadJournal) int {
			if a.instance != b.instance {
				return cmp.Compare(a.instance, b.instance)
			}
			return cmp.Compare(a.gen, b.gen)
		})
		latest := map[string][]byte{}
		var order []string
		for _, d := range dead {
			for _, r := range d.records {
				j.stats.replayed.Add(1)
				if r.kind == recordForget {
					delete(latest, r.name)
					continue
				}
				if _, seen := latest[r.name]; !seen {
					order = append(order, r.name)
				}
				latest[r.name] = r.body
			}
		}
		for _, name := range order {
			body, ok := latest[name]
			if !ok {
				continue
			}
			restored, err := b.restore(name, body)
			if err != nil {
				return fmt.Errorf("journal replay of %s: %w", name, err)
			}
			if restored {
				j.stats.restored.Add(1)
			}
		}
		for _, d := range dead {
			if err := os.Remove(d.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		return syncDir(j.dir)
	})
}

// restore makes name hold body durably, unless it already does, and reports
// whether it wrote. It runs before the bucket has a journal, so the plain
// upload (a fsynced temp file renamed over the torn one, then the directory
// fsynced) is made durable by itself.
func (b *LocalBucket) restore(name string, body []byte) (bool, error) {
	path, err := b.objectPath(name)
	if err != nil {
		return false, err
	}
	if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, body) {
		return false, nil
	}
	return true, b.Upload(context.Background(), name, bytes.NewReader(body))
}

// readBody reads r whole if it holds at most limit bytes. Otherwise it
// returns ok false and a reader of everything r held. size is r's length if
// known (objstore.TryToGetSize sees through the metrics wrapper), else
// negative: a known size spares reading a body over the limit (an everysec
// WAL object read its first MiB into a growing buffer only to drop it) and
// growing the buffer of one under it.
func readBody(r io.Reader, size int64, limit int) (body []byte, rest io.Reader, ok bool, err error) {
	if size > int64(limit) {
		return nil, r, false, nil
	}
	if size >= 0 {
		body = make([]byte, 0, size+1) // +1: the read that meets EOF needs no growth
	}
	lr := io.LimitReader(r, int64(limit)+1)
	for {
		if len(body) == cap(body) {
			body = append(body, 0)[:len(body)]
		}
		n, err := lr.Read(body[len(body):cap(body)])
		body = body[:len(body)+n]
		if err == io.EOF {
			break
		} else if err != nil {
			return nil, nil, false, err
		}
	}
	if len(body) > limit {
		return nil, io.MultiReader(bytes.NewReader(body), r), false, nil
	}
	return body, nil, true, nil
}
