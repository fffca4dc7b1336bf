package blob

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
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
// Deleted WAL objects' files become WAL objects again (recycle), blocks
// and all. A new file needs a new inode, and on ext4 without a journal
// allocating one scans past every inode freed in the last half minute
// (recently_deleted), so once garbage collection deletes WAL objects as
// fast as new ones are written, each create cost 0.3-3 ms of CPU here
// instead of 30 us: a third of a durable SET's server CPU. (With creation
// made free, 50 clients did 16.5-18.5k durable SETs/s at 52-57 us of CPU
// each, against 13.3-14.1k at 73-88.) And freeing a file's blocks, by
// truncation or unlink, is what a file system mounted with discard makes
// the WAL's own fdatasyncs wait for (see free): a recycled file keeps its
// blocks, and a new WAL object overwrites them in place. It takes a file
// holding no more blocks than it needs (files are kept by the blocks they
// hold, class by class), so cutting the file to the object's size frees
// none; a file that sits unused for recycledMaxAge is freed.
//
// Only WAL objects are recycled, into WAL objects only. Overwriting a file
// in place means that, after a power loss, the name of an object whose
// upload was not acknowledged (its journal record not yet durable) may show
// the older object's bytes, whole and valid; a WAL object records its own
// id, and replay never applies another id's bytes (wal/format.go). A recycled
// file reused while a reader still has the old object open would show the
// reader new bytes; nothing reads a WAL object garbage collection deletes
// (replay reads only those above the manifest's replay point).
//
// The goroutine runs only while there is work, so a bucket that is not
// closed leaks nothing but its spare and recycled files, which
// NewLocalBucket of a later process removes once stale. After Close every
// operation is done inline.
type localAids struct {
	tmpDir string

	blockSize int64 // the file system's: recycled files are kept by the blocks they hold

	mu       sync.Mutex
	spares   []spareTemp
	retired  []string // temp names whose uploads are over
	recycled recycledFiles
	trim     *time.Timer // frees recycled files unused for recycleAge
	// recycleAge is recycledMaxAge (tests shorten it).
	recycleAge time.Duration
	running    bool
	closed     bool
	idle       *sync.Cond // signalled when running becomes false
	dirs       map[string]*os.File
	rings      syncRings // the uploads' fsyncs, file and directory

	freeMu sync.Mutex // the lane of the calls that free blocks; see free
	// freeCall runs a call in the lane (tests watch the lane with it).
	freeCall func(fn func() error) error
}

// free runs fn, a remove that may free a file's blocks, in the bucket's
// one lane for them, which then rests as long as fn took: one at a time,
// and the lane busy at most half the time.
//
// Why: on a file system mounted with discard (as cloud VMs' often are, and
// this machine's ext4), freeing blocks discards them on the disk, and a
// cache flush, which every WAL fdatasync is, waits for the discards before
// it. Garbage collection deletes the WAL objects of a minute at once
// (10-17k under 50 durable clients), 8 at a time; when each deletion
// emptied its file, durable writes all but stopped for 4-6 s. One at a
// time without the rest, the journal's fdatasyncs still took 0.5-1.2 s and
// writes fell to 40/s; with it, the writes during a pass ran at 0.84-0.97x
// of before, while the pass freed 350-700 objects a second. Recycled WAL
// files now keep their blocks; the lane paces what still frees them (SSTs,
// manifests, recycled files aged out).
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
// blocks. An empty file (a spare) frees none and is removed directly.
func (a *localAids) unlink(path string) error {
	return a.free(func() error { return os.Remove(path) })
}

// remove is unlink ignoring errors: for names whose removal is cleanup.
func (a *localAids) remove(path string) { a.unlink(path) }

// recycledTemp is the file of a deleted WAL object, renamed into the temp
// directory with its bytes.
type recycledTemp struct {
	path string
	size int64     // of the old object, whose bytes it still holds
	when time.Time // of the rename, when its mtime was set too
}

// recycledFiles are the recycled files, by class: class c holds the files
// of c file system blocks, oldest first.
type recycledFiles struct {
	class [maxRecycledClass + 1][]recycledTemp
	files int
	bytes int64
	stats struct {
		recycled, reused, freed uint64
	}
}

// RecycleStats count a LocalBucket's recycling of deleted WAL objects'
// files (local_temps.go).
type RecycleStats struct {
	Files    int    // recycled files kept now
	Bytes    int64  // the old objects' bytes they hold
	Recycled uint64 // deleted WAL objects whose files were kept
	Reused   uint64 // WAL objects written into a recycled file
	Freed    uint64 // recycled files removed unused (aged out, or at close)
}

// spareTemp is an empty temp file created ahead of an upload, open for
// writing. Its descriptor is raw (sysfile_linux.go): a journaled upload
// writes and closes it without the os package; file hands it to an
// os.File for the others.
type spareTemp struct {
	fd   int
	path string
	made time.Time
	size int64 // bytes in the file already: a recycled file's
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
	// maxRecycled and maxRecycledBytes bound the recycled files kept: a
	// minute of WAL objects of 50 clients under appendfsync always, which
	// garbage collection deletes at once, is 10-17k files, and as much disk
	// as the WAL held before the deletion.
	maxRecycled      = 32 << 10
	maxRecycledBytes = 1 << 30
	// maxRecycledClass is the most blocks a recycled file holds (1 MiB in
	// 4 KiB blocks, the journal's largest body): a larger file is freed.
	maxRecycledClass = 256
	// recycledMaxAge frees a recycled file no upload took for that long:
	// garbage collection's passes bring back about as many files as the
	// uploads between them take, so only a surplus (a class written less
	// than before, a load that stopped) waits that long.
	recycledMaxAge = 2 * time.Minute
)

func newLocalAids(tmpDir string) *localAids {
	a := &localAids{tmpDir: tmpDir, blockSize: fsBlockSize(tmpDir), recycleAge: recycledMaxAge, dirs: make(map[string]*os.File)}
	a.idle = sync.NewCond(&a.mu)
	return a
}

// tempPrefix starts the names of this process's temp files: its pid (taken
// once: os.Getpid is a system call, and one was made for every WAL object)
// and 8 random bytes, so that names stay unique across processes on other
// hosts sharing the directory and across a pid's reuse. tempSeq numbers the
// names within the process; reading crypto/rand for each name cost a
// getrandom(2) and a stack growth of the goroutine making it.
var (
	tempPrefix = func() string {
		var rnd [8]byte
		rand.Read(rnd[:]) // never returns an error: it crashes the process instead
		return fmt.Sprintf("upload-%d-%s-", os.Getpid(), hex.EncodeToString(rnd[:]))
	}()
	tempSeq atomic.Uint64
)

// tempName returns a new name in the temp directory.
func (a *localAids) tempName() string {
	return filepath.Join(a.tmpDir, tempPrefix+strconv.FormatUint(tempSeq.Add(1), 36))
}

// newTemp creates an empty temp file.
func (a *localAids) newTemp() (spareTemp, error) {
	path := a.tempName()
	fd, err := openRaw(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return spareTemp{}, err
	}
	return spareTemp{fd: fd, path: path, made: time.Now()}, nil
}

// blocks is how many file system blocks n bytes take.
func (a *localAids) blocks(n int64) int64 { return (n + a.blockSize - 1) / a.blockSize }

// takeRecycled opens, for a WAL object of n bytes, the newest recycled
// file of the largest class that is not above n's: writing the object over
// its old bytes and cutting it to n frees none of its blocks. False if
// there is none (or none left that opens).
func (a *localAids) takeRecycled(n int) (spareTemp, bool) {
	for {
		a.mu.Lock()
		c := min(a.blocks(int64(n)), maxRecycledClass)
		for a.recycled.files > 0 && c >= 0 && len(a.recycled.class[c]) == 0 {
			c--
		}
		if a.recycled.files == 0 || c < 0 {
			a.mu.Unlock()
			return spareTemp{}, false
		}
		files := a.recycled.class[c]
		r := files[len(files)-1]
		a.recycled.class[c] = files[:len(files)-1]
		a.recycled.files--
		a.recycled.bytes -= r.size
		a.mu.Unlock()
		if time.Since(r.when) >= spareMaxAge {
			// Fresh again for removeStaleTemps of another process.
			now := time.Now()
			if os.Chtimes(r.path, now, now) != nil {
				a.dropRecycled(r)
				continue
			}
		}
		fd, err := openRaw(r.path, os.O_WRONLY, 0)
		if err != nil {
			a.dropRecycled(r)
			continue
		}
		a.mu.Lock()
		a.recycled.stats.reused++
		a.mu.Unlock()
		return spareTemp{fd: fd, path: r.path, made: time.Now(), size: r.size}, true
	}
}

// dropRecycled frees a recycled file that could not be reused.
func (a *localAids) dropRecycled(r recycledTemp) {
	a.remove(r.path)
	a.mu.Lock()
	a.recycled.stats.freed++
	a.mu.Unlock()
}

// recycle takes the file of a WAL object of size bytes being deleted, at
// path, as a later WAL object's if there is room for it: renamed into the
// temp directory, its bytes kept. It reports whether path is gone; if not,
// the caller removes it. An error is the rename's (the object may be gone
// already).
func (a *localAids) recycle(path string, size int64) (bool, error) {
	c := a.blocks(size)
	a.mu.Lock()
	room := a.roomLocked(c, size)
	a.mu.Unlock()
	if !room {
		return false, nil
	}
	tmp := a.tempName()
	if err := os.Rename(path, tmp); err != nil {
		return false, err
	}
	// The mtime tells removeStaleTemps of another process that the file is
	// in use; the rename left the object's.
	now := time.Now()
	if err := os.Chtimes(tmp, now, now); err != nil {
		a.remove(tmp)
		return true, nil
	}
	a.mu.Lock()
	if !a.roomLocked(c, size) {
		a.mu.Unlock()
		a.remove(tmp)
		return true, nil
	}
	a.recycled.class[c] = append(a.recycled.class[c], recycledTemp{path: tmp, size: size, when: now})
	a.recycled.files++
	a.recycled.bytes += size
	a.recycled.stats.recycled++
	if a.trim == nil {
		a.trim = time.AfterFunc(a.recycleAge, a.trimRecycled)
	}
	a.mu.Unlock()
	return true, nil
}

// roomLocked reports whether a file of c blocks and size bytes may be
// recycled.
// REQUIRES: a.mu held.
func (a *localAids) roomLocked(c, size int64) bool {
	return !a.closed && c <= maxRecycledClass && a.recycled.files < maxRecycled && a.recycled.bytes+size <= maxRecycledBytes
}

// trimRecycled frees, through the lane, the recycled files older than
// recycleAge, and runs again later while any are left.
func (a *localAids) trimRecycled() {
	a.mu.Lock()
	a.trim = nil
	if a.closed {
		a.mu.Unlock()
		return
	}
	cutoff := time.Now().Add(-a.recycleAge)
	var old []string
	for c, files := range a.recycled.class {
		k := 0
		for k < len(files) && files[k].when.Before(cutoff) {
			old = append(old, files[k].path)
			a.recycled.bytes -= files[k].size
			k++
		}
		if k == len(files) {
			a.recycled.class[c] = nil
		} else {
			a.recycled.class[c] = files[k:]
		}
		a.recycled.files -= k
	}
	if a.recycled.files > 0 {
		a.trim = time.AfterFunc(a.recycleAge, a.trimRecycled)
	}
	a.mu.Unlock()
	for _, p := range old {
		a.remove(p)
	}
	a.mu.Lock()
	a.recycled.stats.freed += uint64(len(old))
	a.mu.Unlock()
}

// recycleStats returns the recycling's counters.
func (a *localAids) recycleStats() RecycleStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := &a.recycled
	return RecycleStats{Files: r.files, Bytes: r.bytes, Recycled: r.stats.recycled, Reused: r.stats.reused, Freed: r.stats.freed}
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
			t, err := a.newTemp()
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

// close waits for the goroutine, then removes the spares and the recycled
// files and closes the directory handles. Later calls do their work inline.
//
// The recycled files are removed directly, not through the lane: the
// process writes nothing more, and a lane of up to 32k files with a rest
// after each would hold Close for a minute.
func (a *localAids) close() {
	a.mu.Lock()
	a.closed = true
	for a.running {
		a.idle.Wait()
	}
	if a.trim != nil {
		a.trim.Stop()
		a.trim = nil
	}
	var recycled []recycledTemp
	for c, files := range a.recycled.class {
		recycled = append(recycled, files...)
		a.recycled.class[c] = nil
	}
	a.recycled.stats.freed += uint64(len(recycled))
	a.recycled.files, a.recycled.bytes = 0, 0
	spares, retired, dirs := a.spares, a.retired, a.dirs
	a.spares, a.retired, a.dirs = nil, nil, map[string]*os.File{}
	a.mu.Unlock()
	for _, t := range spares {
		closeFd(t.fd)
		os.Remove(t.path) // empty
	}
	for _, p := range retired {
		a.remove(p)
	}
	for _, r := range recycled {
		os.Remove(r.path)
	}
	for _, d := range dirs {
		d.Close()
	}
	a.rings.close()
}
