package blob

import (
	"bytes"
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/thanos-io/objstore"
)

// DiskCacheOptions configure a DiskCache.
type DiskCacheOptions struct {
	// Dir holds the part files. It is created if needed; files in it that
	// are not part files are left alone.
	Dir string
	// MaxBytes bounds the bytes of the part files; the least recently used
	// parts are evicted beyond it.
	MaxBytes int64
	// PartSize is the unit of caching: objects are cached in aligned parts
	// of this many bytes, so a read fetches whole parts and the rest of a
	// part comes free. Default 256 KiB.
	PartSize int64
	// Cacheable says which objects are cached. Only immutable objects may
	// be: a cached part is never checked against the bucket again. Default:
	// SST objects (ParseSSTName), which are written once and never change;
	// WAL objects and manifests pass through.
	Cacheable func(name string) bool
}

// EnsureDefaults fills unset fields with their defaults.
func (o *DiskCacheOptions) EnsureDefaults() {
	if o.PartSize == 0 {
		o.PartSize = 256 << 10
	}
	if o.Cacheable == nil {
		o.Cacheable = func(name string) bool { _, ok := ParseSSTName(name); return ok }
	}
}

// Validate reports the first unusable setting.
func (o *DiskCacheOptions) Validate() error {
	switch {
	case o.Dir == "":
		return errors.New("blob: disk cache: no directory")
	case o.MaxBytes <= 0:
		return fmt.Errorf("blob: disk cache: size %d must be positive", o.MaxBytes)
	case o.PartSize < 1<<10 || o.PartSize > 1<<30:
		return fmt.Errorf("blob: disk cache: part size %d outside [1 KiB, 1 GiB]", o.PartSize)
	}
	return nil
}

// DiskCacheStats is a snapshot of a DiskCache's counters.
type DiskCacheStats struct {
	Hits         uint64 // parts served from disk
	Misses       uint64 // parts fetched from the bucket
	Fetches      uint64 // ranged reads of the bucket (one per run of missing parts)
	FetchedBytes uint64 // bytes those reads returned
	WrittenParts uint64 // parts written through by uploads
	Evictions    uint64 // parts evicted to stay within MaxBytes
	BadParts     uint64 // part files found torn or corrupt, deleted and refetched
	Bytes        int64  // bytes of part files held
	Files        int64  // part files held
	Capacity     int64  // MaxBytes
}

// DiskCache is a bucket wrapper that keeps parts of immutable objects in
// local files, bounded in size and kept across restarts, so warm reads make
// no bucket requests. See doc.go (invariants 11-13). Operations on names
// that are not Cacheable, and Get, pass through.
//
// One process per directory: the index of parts lives in memory.
type DiskCache struct {
	objstore.Bucket // the wrapped bucket; methods not defined here forward

	opts   DiskCacheOptions
	tmpDir string

	mu      sync.Mutex
	objs    map[string]*cachedObj
	lru     list.List // of *cachedPart, most recently used at the front
	bytes   int64
	flights map[partKey]*partFlight

	hits, misses, fetches, fetchedBytes, written, evictions, bad atomic.Uint64
}

var (
	_ objstore.Bucket = (*DiskCache)(nil)
	_ RangeReader     = (*DiskCache)(nil)
)

// cachedObj is the cached parts of one object.
type cachedObj struct {
	name  string
	parts map[int64]*cachedPart
	// lastIdx is the index of the object's last part, or -1 while
	// unknown. Parts past it are not read; the last part's own length is
	// only believed once its file is read and checked.
	lastIdx int64
	// pending counts fetches and uploads that will add parts: the entry
	// stays in DiskCache.objs while any is under way.
	pending int
	// dropped is set when the object was deleted or replaced: parts that
	// in-flight work produces for it are thrown away.
	dropped bool
}

type cachedPart struct {
	obj     *cachedObj
	idx     int64
	last    bool
	size    int64     // file bytes
	touched time.Time // the file's mtime, as last set
	elem    *list.Element
}

func (p *cachedPart) file() string { return partFileName(p.obj.name, p.idx, p.last) }

// touchEvery is how stale a part's mtime may get while it is being read:
// mtime is the recency a reopened cache evicts by.
const touchEvery = time.Minute

// NewDiskCache wraps bkt with a disk cache in opts.Dir, indexing the part
// files already there (their mtime is their recency) and evicting down to
// opts.MaxBytes.
func NewDiskCache(bkt objstore.Bucket, opts DiskCacheOptions) (*DiskCache, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("blob: disk cache %s: %w", opts.Dir, err)
	}
	opts.Dir = dir
	c := &DiskCache{Bucket: bkt, opts: opts, tmpDir: filepath.Join(dir, tmpDirName),
		objs: make(map[string]*cachedObj), flights: make(map[partKey]*partFlight)}
	// Temp files are all ours and all dead: nothing else writes here.
	if err := os.RemoveAll(c.tmpDir); err != nil {
		return nil, fmt.Errorf("blob: disk cache %s: %w", dir, err)
	}
	if err := os.MkdirAll(c.tmpDir, 0o755); err != nil {
		return nil, fmt.Errorf("blob: disk cache %s: %w", dir, err)
	}
	if err := c.checkPartSize(); err != nil {
		return nil, fmt.Errorf("blob: disk cache %s: %w", dir, err)
	}
	if err := c.index(); err != nil {
		return nil, fmt.Errorf("blob: disk cache %s: %w", dir, err)
	}
	return c, nil
}

// partSizeFile names the file that records the PartSize of the part files.
const partSizeFile = "PART_SIZE"

// checkPartSize removes every part file unless the directory records the
// current PartSize (a part index means another offset under another part
// size), then records it.
func (c *DiskCache) checkPartSize() error {
	path := filepath.Join(c.opts.Dir, partSizeFile)
	want := partFormat + " " + strconv.FormatInt(c.opts.PartSize, 10) + "\n"
	if b, err := os.ReadFile(path); err == nil && string(b) == want {
		return nil
	}
	entries, err := os.ReadDir(c.opts.Dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if _, _, _, ok := parsePartFileName(e.Name()); ok && e.Type().IsRegular() {
			if err := os.Remove(filepath.Join(c.opts.Dir, e.Name())); err != nil {
				return err
			}
		}
	}
	tmp := filepath.Join(c.tmpDir, partSizeFile)
	if err := os.WriteFile(tmp, []byte(want), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// index adds the part files in the directory, oldest first, then evicts.
func (c *DiskCache) index() error {
	entries, err := os.ReadDir(c.opts.Dir)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var parts []*cachedPart
	for _, e := range entries {
		name, idx, last, ok := parsePartFileName(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		if info.Size() < partFixedLen { // torn: a crash cut it short
			c.removeFileLocked(e.Name())
			continue
		}
		obj := c.objLocked(name)
		p := &cachedPart{obj: obj, idx: idx, last: last, size: info.Size(), touched: info.ModTime()}
		if _, dup := obj.parts[idx]; dup { // both .part and .end: keep one
			c.removeFileLocked(p.file())
			continue
		}
		parts = append(parts, p)
		obj.parts[idx] = p
	}
	slices.SortFunc(parts, func(a, b *cachedPart) int { return a.touched.Compare(b.touched) })
	for _, p := range parts {
		if p.last {
			p.obj.lastIdx = p.idx
		}
		p.elem = c.lru.PushFront(p)
		c.bytes += p.size
	}
	c.evictLocked()
	return nil
}

// objLocked returns name's entry, making it if needed. REQUIRES: c.mu held.
func (c *DiskCache) objLocked(name string) *cachedObj {
	obj, ok := c.objs[name]
	if !ok {
		obj = &cachedObj{name: name, parts: make(map[int64]*cachedPart), lastIdx: -1}
		c.objs[name] = obj
	}
	return obj
}

// releaseLocked forgets obj when nothing is cached or coming for it.
// REQUIRES: c.mu held.
func (c *DiskCache) releaseLocked(obj *cachedObj) {
	if len(obj.parts) == 0 && obj.pending == 0 && c.objs[obj.name] == obj {
		delete(c.objs, obj.name)
	}
}

// installLocked moves the temp file tmp to part idx of obj and indexes it,
// unless obj was dropped meanwhile. REQUIRES: c.mu held.
func (c *DiskCache) installLocked(obj *cachedObj, idx int64, last bool, tmp string, size int64) {
	if obj.dropped {
		os.Remove(tmp)
		return
	}
	if old, ok := obj.parts[idx]; ok {
		c.removePartLocked(old)
	}
	p := &cachedPart{obj: obj, idx: idx, last: last, size: size, touched: time.Now()}
	if err := os.Rename(tmp, filepath.Join(c.opts.Dir, p.file())); err != nil {
		os.Remove(tmp)
		return // caching is best effort; the read already has its bytes
	}
	obj.parts[idx] = p
	p.elem = c.lru.PushFront(p)
	c.bytes += size
	if last {
		obj.lastIdx = idx
	}
}

// removePartLocked deletes p's file and forgets p. REQUIRES: c.mu held.
func (c *DiskCache) removePartLocked(p *cachedPart) {
	if p.obj.parts[p.idx] != p {
		return // already removed
	}
	delete(p.obj.parts, p.idx)
	c.lru.Remove(p.elem)
	c.bytes -= p.size
	c.removeFileLocked(p.file())
	c.releaseLocked(p.obj)
}

// removeFileLocked removes a part file. A failure leaves a file the index
// no longer counts; reopening finds it again. REQUIRES: c.mu held.
func (c *DiskCache) removeFileLocked(file string) { os.Remove(filepath.Join(c.opts.Dir, file)) }

// evictLocked removes least recently used parts until the files fit in
// MaxBytes. REQUIRES: c.mu held.
func (c *DiskCache) evictLocked() {
	for c.bytes > c.opts.MaxBytes && c.lru.Len() > 0 {
		c.removePartLocked(c.lru.Back().Value.(*cachedPart))
		c.evictions.Add(1)
	}
}

// dropLocked forgets every part of name and marks its entry dropped, so
// in-flight fetches and uploads of the old contents are not kept.
// REQUIRES: c.mu held.
func (c *DiskCache) dropLocked(name string) {
	obj, ok := c.objs[name]
	if !ok {
		return
	}
	delete(c.objs, name)
	obj.dropped = true
	for _, p := range obj.parts {
		c.removePartLocked(p)
	}
}

// Stats returns a snapshot of the counters.
func (c *DiskCache) Stats() DiskCacheStats {
	c.mu.Lock()
	bytes, files := c.bytes, int64(c.lru.Len())
	c.mu.Unlock()
	return DiskCacheStats{
		Hits: c.hits.Load(), Misses: c.misses.Load(), Fetches: c.fetches.Load(),
		FetchedBytes: c.fetchedBytes.Load(), WrittenParts: c.written.Load(),
		Evictions: c.evictions.Load(), BadParts: c.bad.Load(),
		Bytes: bytes, Files: files, Capacity: c.opts.MaxBytes,
	}
}

// GetRange implements objstore.Bucket; a cacheable name is served from
// parts (length -1, to the end, passes through).
func (c *DiskCache) GetRange(ctx context.Context, name string, off, length int64) (io.ReadCloser, error) {
	if !c.opts.Cacheable(name) || length < 0 {
		return c.Bucket.GetRange(ctx, name, off, length)
	}
	b, err := c.ReadRange(ctx, name, off, length)
	if err != nil {
		return nil, err
	}
	return objstore.NopCloserWithSize(bytes.NewReader(b)), nil
}

// Delete implements objstore.Bucket and drops name's parts, whether or not
// the bucket's delete succeeded (a part may always be fetched again).
func (c *DiskCache) Delete(ctx context.Context, name string) error {
	err := c.Bucket.Delete(ctx, name)
	if c.opts.Cacheable(name) {
		c.mu.Lock()
		c.dropLocked(name)
		c.mu.Unlock()
	}
	return err
}

// Upload implements objstore.Bucket. A cacheable body is written through:
// it is teed into part files while it uploads, and they replace name's
// parts only if the upload succeeded, so a new SST is warm at once.
func (c *DiskCache) Upload(ctx context.Context, name string, r io.Reader, opts ...objstore.ObjectUploadOption) error {
	if !c.opts.Cacheable(name) {
		return c.Bucket.Upload(ctx, name, r, opts...)
	}
	t := &partTee{r: r, c: c, buf: make([]byte, 0, c.opts.PartSize)}
	err := c.Bucket.Upload(ctx, name, t, opts...)
	if err == nil {
		err2 := t.finish()
		if err2 == nil {
			c.installUpload(name, t)
			return nil
		}
	}
	t.discard()
	return err
}

// installUpload replaces name's parts with the uploaded ones.
func (c *DiskCache) installUpload(name string, t *partTee) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(name)
	obj := c.objLocked(name)
	for i, tmp := range t.temps {
		c.installLocked(obj, int64(i), i == len(t.temps)-1, tmp.path, tmp.size)
	}
	c.written.Add(uint64(len(t.temps)))
	t.temps = nil
	c.releaseLocked(obj)
	c.evictLocked()
}

// partTee passes an upload body through, cutting it into part files in the
// cache's temp directory as it goes.
type partTee struct {
	r     io.Reader
	c     *DiskCache
	buf   []byte // the part being filled
	n     int64  // bytes read so far
	eof   bool
	err   error // a part could not be written: the upload goes on uncached
	temps []tempPart
}

type tempPart struct {
	path string
	size int64
}

// Read implements io.Reader.
func (t *partTee) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.add(p[:n])
	if err == io.EOF {
		t.eof = true
	}
	return n, err
}

// ObjectSize lets the bucket learn the body's size as if it had the body
// itself (objstore.TryToGetSize), which S3 uploads use to pick a method.
func (t *partTee) ObjectSize() (int64, error) { return objstore.TryToGetSize(t.r) }

// add tees b. A full part is written only once more bytes arrive, since
// the last part must be written with its flag.
func (t *partTee) add(b []byte) {
	t.n += int64(len(b))
	for len(b) > 0 && t.err == nil {
		if int64(len(t.buf)) == t.c.opts.PartSize {
			t.flush(false)
		}
		k := min(len(b), int(t.c.opts.PartSize)-len(t.buf))
		t.buf = append(t.buf, b[:k]...)
		b = b[k:]
	}
}

func (t *partTee) flush(last bool) {
	path, size, err := writePartTemp(t.c.tmpDir, t.buf, t.c.opts.PartSize, last)
	if err != nil {
		t.err = err
		return
	}
	t.temps = append(t.temps, tempPart{path, size})
	t.buf = t.buf[:0]
}

// finish writes the last part after a successful upload. A body the bucket
// did not read to its end is not cached: its parts would be incomplete.
func (t *partTee) finish() error {
	if !t.eof {
		return errors.New("blob: disk cache: upload body not read to its end")
	}
	if t.err == nil {
		t.flush(true)
	}
	return t.err
}

func (t *partTee) discard() {
	for _, tmp := range t.temps {
		os.Remove(tmp.path)
	}
	t.temps = nil
}
