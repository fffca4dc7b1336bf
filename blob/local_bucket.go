package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/thanos-io/objstore"
)

// tmpDirName is the directory under a LocalBucket's root that holds upload
// temp files. It lives inside the root so that a temp file and its final name
// are on one file system (link and rename need that); Iter never lists it and
// no object name may start with it.
const tmpDirName = ".tmp"

// staleTempAge is how long a temp file must have gone unmodified before
// NewLocalBucket removes it. Another process may share the directory (a
// separate compactor), and its in-flight temp files are written continuously,
// so only files far older than any upload are leftovers of a crash.
const staleTempAge = 10 * time.Minute

var (
	errObjNotFound     = errors.New("blob: object not found")
	errConditionNotMet = errors.New("blob: object already exists (create-if-absent condition not met)")

	// errNoRenameNoReplace: the platform or file system has no atomic
	// rename-unless-exists; publishIfAbsent links instead.
	errNoRenameNoReplace = errors.New("blob: no RENAME_NOREPLACE here")

	// errNotDir is what the OS reports when a parent of a name is an object.
	errNotDir = syscall.ENOTDIR

	// ErrInvalidName reports an object or directory name a LocalBucket
	// refuses: empty, absolute, with empty, "." or ".." components, or in the
	// reserved ".tmp/" directory.
	ErrInvalidName = errors.New("blob: invalid object name")
)

// LocalBucket is a durable objstore.Bucket on a local directory: an upload
// that returns nil survives power loss, and create-if-absent is atomic across
// goroutines and processes sharing the directory. See doc.go (invariants 1-4).
type LocalBucket struct {
	root   string // absolute
	tmpDir string // root/.tmp

	// syncDir fsyncs a directory; tests replace it to observe or fail it.
	syncDir func(dir string) error

	// durableDirs holds the directories (relative, slash-separated) whose
	// entry in their parent this process has fsynced, so each costs one fsync
	// per process rather than one per upload.
	durableDirs sync.Map

	// files keeps read handles open for ReadRange.
	files fileCache

	aids *localAids // temp files and directory handles (local_temps.go)

	journal *localJournal // nil: every upload is made durable by itself (local_journal.go)
}

// LocalOptions configure a LocalBucket.
type LocalOptions struct {
	// JournalBytes is the size of each of the two journal files through
	// which create-if-absent uploads are made durable (local_journal.go):
	// 0 means DefaultJournalBytes, negative means no journal, so every
	// upload fsyncs its file and directory. Bodies over 1 MiB (or half a
	// journal file, if less) bypass the journal.
	JournalBytes int64
}

var _ objstore.Bucket = (*LocalBucket)(nil)

// NewLocalBucket opens (creating if needed) a local bucket rooted at dir
// with default options: see NewLocalBucketWithOptions.
func NewLocalBucket(dir string) (*LocalBucket, error) {
	return NewLocalBucketWithOptions(dir, LocalOptions{})
}

// NewLocalBucketWithOptions opens (creating if needed) a local bucket rooted
// at dir, replays the journals of processes that died using it (repairing
// objects a power loss tore) and removes stale upload temp files they left.
func NewLocalBucketWithOptions(dir string, opts LocalOptions) (*LocalBucket, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("blob: local bucket %s: %w", dir, err)
	}
	if err := mkdirAllDurable(root); err != nil {
		return nil, fmt.Errorf("blob: local bucket %s: %w", root, err)
	}
	b := &LocalBucket{root: root, tmpDir: filepath.Join(root, tmpDirName)}
	b.aids = newLocalAids(b.tmpDir)
	b.syncDir = b.aids.syncDir
	if err := mkdirAllDurable(b.tmpDir); err != nil {
		return nil, fmt.Errorf("blob: local bucket %s: %w", root, err)
	}
	if err := b.removeStaleTemps(time.Now().Add(-staleTempAge)); err != nil {
		return nil, fmt.Errorf("blob: local bucket %s: %w", root, err)
	}
	if journalSupported {
		size := opts.JournalBytes
		if size == 0 {
			size = DefaultJournalBytes
		}
		j, err := newLocalJournal(b, max(size, 2*journalHeaderSize))
		if err != nil {
			return nil, fmt.Errorf("blob: local bucket %s: %w", root, err)
		}
		// Replay runs whatever the options: a bucket opened without a
		// journal must still repair what a journaling process left.
		if err := b.recoverJournals(j); err != nil {
			return nil, fmt.Errorf("blob: local bucket %s: %w", root, err)
		}
		if size > 0 {
			b.journal = j
		}
	}
	return b, nil
}

// Journaling reports whether the bucket makes small create-if-absent
// uploads durable through its journal (LocalOptions.JournalBytes).
func (b *LocalBucket) Journaling() bool { return b.journal != nil }

// RecycleStats returns counters of the recycling of deleted WAL objects'
// files.
func (b *LocalBucket) RecycleStats() RecycleStats { return b.aids.recycleStats() }

// JournalStats returns counters of the bucket's journal (zero without one).
func (b *LocalBucket) JournalStats() JournalStats {
	if b.journal == nil {
		return JournalStats{}
	}
	return b.journal.statsSnapshot()
}

// Root returns the absolute directory of the bucket.
func (b *LocalBucket) Root() string { return b.root }

func (b *LocalBucket) removeStaleTemps(before time.Time) error {
	entries, err := os.ReadDir(b.tmpDir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || !info.ModTime().Before(before) {
			continue // gone meanwhile, not ours, or possibly in use
		}
		if err := b.aids.unlink(filepath.Join(b.tmpDir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Provider implements objstore.Bucket.
func (b *LocalBucket) Provider() objstore.ObjProvider { return objstore.FILESYSTEM }

// Name implements objstore.Bucket.
func (b *LocalBucket) Name() string { return "local:" + b.root }

// Close implements objstore.Bucket. It makes every journaled upload durable
// in its own file and removes the journal, removes the spare temp files and
// closes the directory handles; the bucket still works afterwards, without
// them.
func (b *LocalBucket) Close() error {
	var err error
	if b.journal != nil {
		err = b.journal.close()
	}
	b.aids.close()
	return err
}

// SupportedObjectUploadOptions implements objstore.Bucket.
func (b *LocalBucket) SupportedObjectUploadOptions() []objstore.ObjectUploadOptionType {
	return []objstore.ObjectUploadOptionType{objstore.IfNotExists}
}

// SupportedIterOptions implements objstore.Bucket.
func (b *LocalBucket) SupportedIterOptions() []objstore.IterOptionType {
	return []objstore.IterOptionType{objstore.Recursive, objstore.UpdatedAt}
}

// IsObjNotFoundErr implements objstore.Bucket.
func (b *LocalBucket) IsObjNotFoundErr(err error) bool { return errors.Is(err, errObjNotFound) }

// IsConditionNotMetErr implements objstore.Bucket.
func (b *LocalBucket) IsConditionNotMetErr(err error) bool {
	return errors.Is(err, errConditionNotMet)
}

// IsAccessDeniedErr implements objstore.Bucket.
func (b *LocalBucket) IsAccessDeniedErr(err error) bool { return errors.Is(err, fs.ErrPermission) }

// objectPath validates an object name and returns its absolute path.
func (b *LocalBucket) objectPath(name string) (string, error) {
	if err := validateName(name, false); err != nil {
		return "", err
	}
	return filepath.Join(b.root, filepath.FromSlash(name)), nil
}

// validateName rejects names that could escape the root or collide with the
// temp directory. A directory (for Iter) may be empty or end with "/".
func validateName(name string, isDir bool) error {
	if isDir {
		if name == "" {
			return nil
		}
		name = strings.TrimSuffix(name, "/")
	}
	bad := name == "" || strings.HasPrefix(name, "/") || strings.ContainsRune(name, 0)
	for i, c := range strings.Split(name, "/") {
		bad = bad || c == "" || c == "." || c == ".." || (i == 0 && (c == tmpDirName || c == journalDirName))
	}
	if bad {
		return fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	return nil
}

// Upload implements objstore.Bucket. The body is written to a temp file and
// fsynced before it gets its name, so the name never refers to a partial
// object; then the directory is fsynced, so the name survives power loss.
func (b *LocalBucket) Upload(ctx context.Context, name string, r io.Reader, opts ...objstore.ObjectUploadOption) error {
	if err := objstore.ValidateUploadOptions(b.SupportedObjectUploadOptions(), opts...); err != nil {
		return err
	}
	params := objstore.ApplyObjectUploadOptions(opts...)
	path, err := b.objectPath(name)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := b.ensureDir(pathDir(name)); err != nil {
		return fmt.Errorf("blob: upload %s: %w", name, err)
	}
	if b.journal != nil {
		if params.IfNotExists {
			size, serr := objstore.TryToGetSize(r)
			if serr != nil {
				size = -1
			}
			body, rest, ok, err := readBody(ctxReader{ctx, r}, size, b.journal.maxBody())
			if err != nil {
				return fmt.Errorf("blob: upload %s: %w", name, err)
			}
			if ok {
				return b.uploadJournaled(ctx, name, path, body)
			}
			r = rest
		} else {
			b.journal.forget(name) // J3: before the new bytes replace the journaled ones
		}
	}
	tmp, err := b.writeTemp(ctx, r)
	if err != nil {
		return fmt.Errorf("blob: upload %s: %w", name, err)
	}
	moved := false
	defer func() {
		if !moved {
			b.aids.retire(tmp)
		}
	}()
	if err := ctx.Err(); err != nil {
		return err
	}
	if params.IfNotExists {
		if moved, err = publishIfAbsent(tmp, path, name); err != nil {
			return err
		}
	} else {
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("blob: upload %s: %w", name, err)
		}
		moved = true
		b.files.drop(path) // a handle of the old object must not serve the new one
	}
	if err := b.syncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("blob: upload %s: %w", name, err)
	}
	return nil
}

// uploadJournaled creates name (create-if-absent) holding body, made durable
// by a journal record (local_journal.go) or, when the journal cannot take
// it, by fsyncs of the file and its directory.
func (b *LocalBucket) uploadJournaled(ctx context.Context, name, path string, body []byte) error {
	var t spareTemp
	var err error
	ok := false
	if _, wal := ParseWALName(name); wal {
		t, ok = b.aids.takeRecycled(len(body))
	}
	if !ok {
		if t, err = b.aids.take(); err != nil {
			return fmt.Errorf("blob: upload %s: %w", name, err)
		}
	}
	moved := false
	defer func() {
		if !moved {
			b.aids.retire(t.path)
		}
	}()
	closed := false
	defer func() {
		if !closed {
			closeFd(t.fd)
		}
	}()
	if err := writeFull(t.fd, body, -1); err != nil {
		return fmt.Errorf("blob: upload %s: write %s: %w", name, t.path, err)
	}
	if t.size > int64(len(body)) {
		// A recycled file holding no more blocks than body needs: the cut
		// frees none.
		if err := truncateFd(t.fd, int64(len(body))); err != nil {
			return fmt.Errorf("blob: upload %s: truncate %s: %w", name, t.path, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if moved, err = publishIfAbsent(t.path, path, name); err != nil {
		return err
	}
	// From here the name exists and holds body; what is left is making it
	// durable.
	if err := b.journal.appendRecord(recordCreate, name, body); err == nil {
		b.journal.stats.journaled.Add(1)
		return nil
	}
	b.journal.stats.direct.Add(1)
	f := t.file()
	closed = true
	defer f.Close()
	if err := b.aids.rings.fdatasync(f); err != nil {
		return fmt.Errorf("blob: upload %s: %w", name, err)
	}
	if err := b.syncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("blob: upload %s: %w", name, err)
	}
	return nil
}

// publishIfAbsent gives the temp file tmp the name of object name, at
// path, unless the name exists, whoever (goroutine or process) created it:
// that is create-if-absent. It renames where the file system can
// (renameat2 with RENAME_NOREPLACE: one call, and no temp name left to
// remove afterwards) and links otherwise (link(2) fails with EEXIST
// atomically too). It reports whether tmp's name is gone.
func publishIfAbsent(tmp, path, name string) (moved bool, err error) {
	switch err := renameNoReplace(tmp, path); {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrExist):
		return false, fmt.Errorf("%w: %s", errConditionNotMet, name)
	case !errors.Is(err, errNoRenameNoReplace):
		return false, fmt.Errorf("blob: upload %s: %w", name, err)
	}
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, fmt.Errorf("%w: %s", errConditionNotMet, name)
		}
		return false, fmt.Errorf("blob: upload %s: %w", name, err)
	}
	return false, nil
}

// writeTemp copies r into a new, fsynced temp file and returns its path.
// On error it leaves no file behind.
func (b *LocalBucket) writeTemp(ctx context.Context, r io.Reader) (string, error) {
	t, err := b.aids.take()
	if err != nil {
		return "", err
	}
	f := t.file()
	_, err = io.Copy(&yieldingWriter{f: f}, ctxReader{ctx, r})
	if err == nil {
		err = b.aids.rings.fdatasync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.aids.remove(t.path)
		return "", err
	}
	return t.path, nil
}

// yieldingWriter writes to a file and yields the processor after every
// yieldBytes written. io.Copy hands it 32 KiB at a time, so a large object
// (an SST, a second of writes under everysec: tens of MB) is hundreds of
// write(2)s back to back, milliseconds with no point at which the scheduler
// runs another goroutine, until sysmon preempts the copy, which on this
// server (whose socket I/O makes no blocking system calls, so sysmon
// sleeps long) can be 10 ms later: every goroutine queued on that
// processor waited as long.
type yieldingWriter struct {
	f       *os.File
	written int // since the last yield
}

const yieldBytes = 256 << 10

func (w *yieldingWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if w.written += n; w.written >= yieldBytes {
		w.written = 0
		runtime.Gosched()
	}
	return n, err
}

// ctxReader stops a long copy when its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// ensureDir creates the directory rel (slash-separated, relative to the root)
// and its parents, and makes each one's entry durable by fsyncing its parent.
// A directory that already exists is fsynced too, the first time this process
// meets it: another goroutine or process may have created it without its
// fsync having happened yet.
func (b *LocalBucket) ensureDir(rel string) error {
	if rel == "" {
		return nil
	}
	if _, ok := b.durableDirs.Load(rel); ok {
		return nil
	}
	if err := b.ensureDir(pathDir(rel)); err != nil {
		return err
	}
	abs := filepath.Join(b.root, filepath.FromSlash(rel))
	if err := os.Mkdir(abs, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if info, err := os.Stat(abs); err != nil {
		return err
	} else if !info.IsDir() {
		return fmt.Errorf("%s is an object, not a directory", rel)
	}
	if err := b.syncDir(filepath.Dir(abs)); err != nil {
		return err
	}
	b.durableDirs.Store(rel, struct{}{})
	return nil
}

// pathDir returns the parent directory of a slash-separated name, "" at the top.
func pathDir(name string) string {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return ""
	}
	return name[:i]
}

// mkdirAllDurable creates dir and any missing parents, fsyncing the parent
// of each directory it creates.
func mkdirAllDurable(dir string) error {
	if info, err := os.Stat(dir); err == nil {
		if !info.IsDir() {
			return fmt.Errorf("%s is not a directory", dir)
		}
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirAllDurable(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return syncDir(parent)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Get implements objstore.Bucket.
func (b *LocalBucket) Get(ctx context.Context, name string) (io.ReadCloser, error) {
	return b.GetRange(ctx, name, 0, -1)
}

// GetRange implements objstore.Bucket. length -1 reads to the end; an offset
// at or beyond the end gives an empty body, like objstore's filesystem
// provider.
func (b *LocalBucket) GetRange(ctx context.Context, name string, off, length int64) (io.ReadCloser, error) {
	if off < 0 || length < -1 {
		return nil, fmt.Errorf("blob: get %s: invalid range off=%d length=%d", name, off, length)
	}
	f, size, err := b.open(ctx, name)
	if err != nil {
		return nil, err
	}
	if off > 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			f.Close()
			return nil, fmt.Errorf("blob: get %s: %w", name, err)
		}
	}
	n := max(size-off, 0)
	if length >= 0 {
		n = min(n, length)
	}
	return objstore.ObjectSizerReadCloser{
		ReadCloser: readCloser{io.LimitReader(f, n), f},
		Size:       func() (int64, error) { return n, nil },
	}, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// open opens an object for reading and returns its size.
func (b *LocalBucket) open(ctx context.Context, name string) (*os.File, int64, error) {
	path, err := b.objectPath(name)
	if err != nil {
		return nil, 0, err
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, b.statErr(name, err)
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("%w: %s", errObjNotFound, name) // a directory is not an object
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, info.Size(), nil
}

// statErr maps a file system error on an object to the bucket's errors. A
// missing parent (ENOTDIR: a parent is an object) also means not found.
func (b *LocalBucket) statErr(name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir) {
		return fmt.Errorf("%w: %s", errObjNotFound, name)
	}
	return fmt.Errorf("blob: %s: %w", name, err)
}

// Exists implements objstore.Bucket.
func (b *LocalBucket) Exists(ctx context.Context, name string) (bool, error) {
	_, err := b.Attributes(ctx, name)
	if b.IsObjNotFoundErr(err) {
		return false, nil
	}
	return err == nil, err
}

// Attributes implements objstore.Bucket.
func (b *LocalBucket) Attributes(ctx context.Context, name string) (objstore.ObjectAttributes, error) {
	path, err := b.objectPath(name)
	if err != nil {
		return objstore.ObjectAttributes{}, err
	}
	if err := ctx.Err(); err != nil {
		return objstore.ObjectAttributes{}, err
	}
	info, err := os.Lstat(path)
	if err != nil {
		return objstore.ObjectAttributes{}, b.statErr(name, err)
	}
	if !info.Mode().IsRegular() {
		return objstore.ObjectAttributes{}, fmt.Errorf("%w: %s", errObjNotFound, name)
	}
	return objstore.ObjectAttributes{Size: info.Size(), LastModified: info.ModTime()}, nil
}

// Delete implements objstore.Bucket. Deleting an absent object is a
// not-found error. Empty directories are left in place: removing one could
// race with an upload into it, and Iter does not list them.
//
// The removal is seen at once by every reader, but its directory is not
// fsynced: after a power loss the object may be back (invariant 14).
// Strata deletes only garbage whose names are never created again, which GC
// deletes again; fsyncing the WAL directory for each of the hundreds of WAL
// objects GC deletes per second under load put a directory write in the
// disk queue ahead of the WAL's own fdatasyncs.
func (b *LocalBucket) Delete(ctx context.Context, name string) error {
	attrs, err := b.Attributes(ctx, name)
	if err != nil {
		return err
	}
	path, _ := b.objectPath(name)
	b.files.drop(path)
	if b.journal != nil {
		b.journal.forget(name) // J3
	}
	// A WAL object's file, blocks and all, becomes a later WAL object's
	// (local_temps.go).
	if _, ok := ParseWALName(name); ok {
		switch gone, err := b.aids.recycle(path, attrs.Size); {
		case err != nil:
			return b.statErr(name, err)
		case gone:
			return nil
		}
	}
	if err := b.aids.unlink(path); err != nil {
		return b.statErr(name, err)
	}
	return nil
}

// Iter implements objstore.Bucket.
func (b *LocalBucket) Iter(ctx context.Context, dir string, f func(string) error, opts ...objstore.IterOption) error {
	var recursive []objstore.IterOption
	for _, o := range opts {
		if o.Type == objstore.Recursive {
			recursive = append(recursive, o)
		}
	}
	return b.IterWithAttributes(ctx, dir, func(a objstore.IterObjectAttributes) error {
		return f(a.Name)
	}, recursive...)
}

// IterWithAttributes implements objstore.Bucket. Names are passed in
// lexicographic order, like S3 lists them; a non-recursive listing includes
// each subdirectory holding at least one object as "dir/".
func (b *LocalBucket) IterWithAttributes(ctx context.Context, dir string, f func(objstore.IterObjectAttributes) error, opts ...objstore.IterOption) error {
	if err := objstore.ValidateIterOptions(b.SupportedIterOptions(), opts...); err != nil {
		return err
	}
	if err := validateName(dir, true); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	params := objstore.ApplyIterOptions(opts...)
	if dir != "" && !strings.HasSuffix(dir, "/") {
		dir += "/"
	}
	entries, err := b.list(ctx, dir, params.Recursive)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		attrs := objstore.IterObjectAttributes{Name: e.name}
		if params.LastModified && !e.modTime.IsZero() {
			attrs.SetLastModified(e.modTime)
		}
		if err := f(attrs); err != nil {
			return err
		}
	}
	return nil
}

type listEntry struct {
	name    string
	modTime time.Time // zero for directories
}

// list returns the entries under dir (which is "" or ends with "/"), sorted
// by name. Entries are collected before the callback runs, so a callback may
// upload or delete objects in the directory it lists.
func (b *LocalBucket) list(ctx context.Context, dir string, recursive bool) ([]listEntry, error) {
	absDir := filepath.Join(b.root, filepath.FromSlash(dir))
	var out []listEntry
	err := filepath.WalkDir(absDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == absDir && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir)) {
				return fs.SkipAll // listing a missing directory finds nothing
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if path == absDir {
			if !d.IsDir() {
				return fs.SkipAll
			}
			return nil
		}
		rel, err := filepath.Rel(b.root, path)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		switch {
		case d.IsDir() && (name == tmpDirName || name == journalDirName):
			return fs.SkipDir
		case d.IsDir() && recursive:
			return nil
		case d.IsDir():
			if ok, err := hasObject(path); err != nil {
				return err
			} else if !ok {
				return fs.SkipDir
			}
			out = append(out, listEntry{name: name + "/"})
			return fs.SkipDir
		case d.Type().IsRegular():
			info, err := d.Info()
			if errors.Is(err, fs.ErrNotExist) {
				return nil // deleted while listing
			} else if err != nil {
				return err
			}
			out = append(out, listEntry{name: name, modTime: info.ModTime()})
		}
		return nil // symlinks and other special files are not objects
	})
	if err != nil {
		return nil, fmt.Errorf("blob: list %q: %w", dir, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// hasObject reports whether the directory tree at dir holds a regular file:
// S3 has no directories, only names with a common prefix, so a directory
// without objects does not exist for Iter.
func hasObject(dir string) (bool, error) {
	found := false
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			found = true
			return fs.SkipAll
		}
		return nil
	})
	return found, err
}
