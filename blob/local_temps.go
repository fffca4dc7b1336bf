package blob

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// localAids keeps a LocalBucket's uploads to the syscalls that make them
// durable: write, fsync, link, fsync of the directory. Creating the temp file
// and removing its name afterwards are done by a background goroutine, and
// directories are fsynced through handles kept open. On ext4 a create or an
// unlink waits for the journal commit of any fsync in progress, so under a
// stream of WAL PUTs each took as long as an fsync: measured, a PUT's
// critical path went from 0.73 ms to 0.51 ms.
//
// Deleted WAL objects' files become temp files again (recycle): a new
// temp file needs a new inode, and on ext4 without a journal allocating
// one scans past every inode freed in the last half minute
// (recently_deleted), so once garbage collection deletes WAL objects as
// fast as new ones are written, each create cost 0.3-3 ms of CPU here
// instead of 30 us: a third of a durable SET's server CPU. (With creation
// made free, 50 clients did 16.5-18.5k durable SETs/s at 52-57 us of CPU
// each, against 13.3-14.1k at 73-88.)
//
// The goroutine runs only while there is work, so a bucket that is not
// closed leaks nothing but its spare and recycled files, which
// NewLocalBucket of a later process removes once stale. After Close every
// operation is done inline.
type localAids struct {
	tmpDir string

	mu       sync.Mutex
	spares   []spareTemp
	retired  []string // temp names whose uploads are over
	recycled []recycledTemp
	running  bool
	closed   bool
	idle     *sync.Cond // signalled when running becomes false
	dirs     map[string]*os.File
	rings    syncRings // the uploads' fsyncs, file and directory

	freeMu sync.Mutex // the lane of the calls that free blocks; see free
	// freeCall runs a call in the lane (tests watch the lane with it).
	freeCall func(fn func() error) error
}

// free runs fn, a truncate or a remove that may free a file's blocks, in
// the bucket's one lane for them, which then rests as long as fn took: one
// at a time, and the lane busy at most half the time.
//
// Why: on a file system mounted with discard (as cloud VMs' often are, and
// this machine's ext4), freeing blocks discards them on the disk, and a
// cache flush, which every WAL fdatasync is, waits for the discards before
// it. Garbage collection deletes the WAL objects of a minute at once
// (10-17k under 50 durable clients), 8 at a time: durable writes all but
// stopped for 4-6 s. One at a time without the rest, the journal's
// fdatasyncs still took 0.5-1.2 s and writes fell to 40/s; with it, the
// writes during a pass ran at 0.84-0.97x of before, the slowest quarter
// second at 5-7k/s, while the pass freed 350-700 objects a second.
func (a *localAids) free(fn func() error) error {
	a.freeMu.Lock()
	defer a.freeMu.Unlock()
	start := time.Now()
	var err error
	if a.freeCall != nil {
		err = a.freeCall(fn)
	} else {
		err = fn()
	}
	time.Sleep(min(time.Since(start), maxFreeRest))
	return err
}

// maxFreeRest bounds the lane's rest after one slow call.
const maxFreeRest = 100 * time.Millisecond

// unlink removes path in the lane of free: for a file that may hold
// blocks. An empty file (a spare, a recycled one) frees none and is
// removed directly.
func (a *localAids) unlink(path string) error {
	return a.free(func() error { return os.Remove(path) })
}

// remove is unlink ignoring errors: for names whose removal is cleanup.
func (a *localAids) remove(path string) { a.unlink(path) }

// recycledTemp is the emptied file of a deleted object, renamed into the
// temp directory.
type recycledTemp struct {
	path string
	when time.Time // of the rename and truncation, which set its mtime
}

// spareTemp is an empty temp file created ahead of an upload, open for
// writing. Its descriptor is raw (sysfile_linux.go): a journaled upload
// writes and closes it without the os package; file hands it to an
// os.File for the others.
type spareTemp struct {
	fd   int
	path string
	made time.Time
}

// file returns an os.File that owns t's descriptor from then on.
func (t spareTemp) file() *os.File { return os.NewFile(uintptr(t.fd), t.path) }

const (
	// spareTemps is how many temp files are kept ready: one per upload
	// that can start before the goroutine makes the next.
	spareTemps = 2
	// spareMaxAge retires a spare well before removeStaleTemps of another
	// process sharing the directory would take its name.
	spareMaxAge = staleTempAge / 10
	// maxRecycled bounds the files of deleted objects kept for reuse: a
	// minute of WAL objects of 50 clients under appendfsync always, which
	// garbage collection deletes at once. They are empty, so they cost an
	// inode and a directory entry each.
	maxRecycled = 32 << 10
)

func newLocalAids(tmpDir string) *localAids {
	a := &localAids{tmpDir: tmpDir, dirs: make(map[string]*os.File)}
	a.idle = sync.NewCond(&a.mu)
	return a
}

// tempName returns a new name in the temp directory.
func (a *localAids) tempName() (string, error) {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", err
	}
	return filepath.Join(a.tmpDir, fmt.Sprintf("upload-%d-%s", os.Getpid(), hex.EncodeToString(rnd[:]))), nil
}

// newTemp creates an empty temp file.
func (a *localAids) newTemp() (spareTemp, error) {
	path, err := a.tempName()
	if err != nil {
		return spareTemp{}, err
	}
	fd, err := openRaw(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return spareTemp{}, err
	}
	return spareTemp{fd: fd, path: path, made: time.Now()}, nil
}

// reuseTemp opens the next recycled file as a temp file; false if there
// is none (or none left that opens).
func (a *localAids) reuseTemp() (spareTemp, bool) {
	for {
		a.mu.Lock()
		n := len(a.recycled)
		if n == 0 {
			a.mu.Unlock()
			return spareTemp{}, false
		}
		r := a.recycled[n-1]
		a.recycled = a.recycled[:n-1]
		a.mu.Unlock()
		if time.Since(r.when) >= spareMaxAge {
			// Fresh again for removeStaleTemps of another process.
			now := time.Now()
			if os.Chtimes(r.path, now, now) != nil {
				os.Remove(r.path) // empty
				continue
			}
		}
		fd, err := openRaw(r.path, os.O_WRONLY, 0)
		if err != nil {
			os.Remove(r.path) // empty
			continue
		}
		return spareTemp{fd: fd, path: r.path, made: time.Now()}, true
	}
}

// recycle takes the file of an object being deleted, at path, as a future
// temp file if there is room for it: renamed into the temp directory and
// emptied. It reports whether path is gone; if not, the caller removes it.
// An error is the rename's (the object may be gone already).
func (a *localAids) recycle(path string) (bool, error) {
	a.mu.Lock()
	full := a.closed || len(a.recycled) >= maxRecycled
	a.mu.Unlock()
	if full {
		return false, nil
	}
	tmp, err := a.tempName()
	if err != nil {
		return false, nil
	}
	if err := os.Rename(path, tmp); err != nil {
		return false, err
	}
	// Truncation frees the blocks, as unlinking would, and sets the mtime
	// that tells removeStaleTemps the file is in use.
	if err := a.free(func() error { return os.Truncate(tmp, 0) }); err != nil {
		a.remove(tmp)
		return true, nil
	}
	a.mu.Lock()
	if a.closed || len(a.recycled) >= maxRecycled {
		a.mu.Unlock()
		os.Remove(tmp) // emptied above
		return true, nil
	}
	a.recycled = append(a.recycled, recycledTemp{path: tmp, when: time.Now()})
	a.mu.Unlock()
	return true, nil
}

// take returns an empty temp file: a spare if one is fresh, else a new one.
func (a *localAids) take() (spareTemp, error) {
	a.mu.Lock()
	for len(a.spares) > 0 {
		t := a.spares[len(a.spares)-1]
		a.spares = a.spares[:len(a.spares)-1]
		if time.Since(t.made) < spareMaxAge {
			a.kickLocked()
			a.mu.Unlock()
			return t, nil
		}
		closeFd(t.fd)
		a.retired = append(a.retired, t.path)
	}
	a.kickLocked()
	a.mu.Unlock()
	return a.reuseOrNewTemp()
}

// reuseOrNewTemp returns a recycled file if there is one, else a new temp
// file.
func (a *localAids) reuseOrNewTemp() (spareTemp, error) {
	if t, ok := a.reuseTemp(); ok {
		return t, nil
	}
	return a.newTemp()
}

// retire removes the temp name of a finished upload, in the background.
func (a *localAids) retire(path string) {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		a.remove(path)
		return
	}
	a.retired = append(a.retired, path)
	a.kickLocked()
	a.mu.Unlock()
}

// kickLocked starts the goroutine if there is work and it is not running.
// REQUIRES: a.mu held.
func (a *localAids) kickLocked() {
	if a.running || a.closed || (len(a.retired) == 0 && len(a.spares) >= spareTemps) {
		return
	}
	a.running = true
	go a.work()
}

func (a *localAids) work() {
	a.mu.Lock()
	for !a.closed {
		retired := a.retired
		need := spareTemps - len(a.spares)
		if len(retired) == 0 && need <= 0 {
			break
		}
		a.retired = nil
		a.mu.Unlock()
		for _, p := range retired {
			a.remove(p)
		}
		var made []spareTemp
		for range need {
			t, err := a.reuseOrNewTemp()
			if err != nil {
				break // uploads create their own; the next kick tries again
			}
			made = append(made, t)
		}
		a.mu.Lock()
		a.spares = append(a.spares, made...)
		if len(made) < need && len(a.retired) == 0 {
			break
		}
	}
	a.running = false
	a.idle.Broadcast()
	a.mu.Unlock()
}

// waitIdle waits until the goroutine has no work left.
func (a *localAids) waitIdle() {
	a.mu.Lock()
	for a.running {
		a.idle.Wait()
	}
	a.mu.Unlock()
}

// syncDir fsyncs dir through a handle kept open for it. A bucket has a
// handful of directories, so opening one under the lock is rare.
func (a *localAids) syncDir(dir string) error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return syncDir(dir)
	}
	d, ok := a.dirs[dir]
	if !ok {
		var err error
		if d, err = os.Open(dir); err != nil {
			a.mu.Unlock()
			return err
		}
		a.dirs[dir] = d
	}
	a.mu.Unlock()
	// Close, the only one to close a handle, does so once no upload is in
	// flight; an upload racing Close is the caller's error, as with any
	// bucket.
	return a.rings.fdatasync(d)
}

// close waits for the goroutine, then removes the spares and closes the
// directory handles. Later calls do their work inline.
func (a *localAids) close() {
	a.mu.Lock()
	a.closed = true
	for a.running {
		a.idle.Wait()
	}
	spares, retired, recycled, dirs := a.spares, a.retired, a.recycled, a.dirs
	a.spares, a.retired, a.recycled, a.dirs = nil, nil, nil, map[string]*os.File{}
	a.mu.Unlock()
	for _, t := range spares {
		closeFd(t.fd)
		os.Remove(t.path) // empty
	}
	for _, p := range retired {
		a.remove(p)
	}
	for _, r := range recycled {
		os.Remove(r.path) // empty
	}
	for _, d := range dirs {
		d.Close()
	}
	a.rings.close()
}
