package blob

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/thanos-io/objstore"
)

// RangeReader is implemented by buckets that can read a byte range straight
// into memory, without the stream (and, on local disk, the open and close)
// of GetRange. The SST reader's block reads use it when it is there.
type RangeReader interface {
	// ReadRange returns up to length bytes of name from off; fewer only at
	// the end of the object.
	ReadRange(ctx context.Context, name string, off, length int64) ([]byte, error)
}

// ReadRange reads a byte range of name through bkt's RangeReader if it has
// one, else through GetRange.
func ReadRange(ctx context.Context, bkt objstore.BucketReader, name string, off, length int64) ([]byte, error) {
	if rr, ok := bkt.(RangeReader); ok {
		return rr.ReadRange(ctx, name, off, length)
	}
	rc, err := bkt.GetRange(ctx, name, off, length)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	buf := make([]byte, length)
	n, err := io.ReadFull(rc, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:n], nil
}

// maxOpenFiles bounds the read handles a LocalBucket keeps open.
const maxOpenFiles = 512

// fileCache keeps read handles of local objects open, least recently used
// first out. Objects are written once, so a handle stays valid; an upload
// over a name or a delete drops that name's handle.
type fileCache struct {
	mu    sync.Mutex
	files map[string]*openFile
	lru   list.List // of *openFile, most recent at the front
}

type openFile struct {
	path    string
	f       *os.File
	size    int64
	refs    int // readers using f now; f is closed when 0 and dropped
	dropped bool
	elem    *list.Element
}

// acquire returns an open handle of path. REQUIRES: release when done.
func (c *fileCache) acquire(path string) (*openFile, error) {
	c.mu.Lock()
	if of, ok := c.files[path]; ok {
		of.refs++
		c.lru.MoveToFront(of.elem)
		c.mu.Unlock()
		return of, nil
	}
	c.mu.Unlock()
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if of, ok := c.files[path]; ok { // opened meanwhile by another reader
		f.Close()
		of.refs++
		c.lru.MoveToFront(of.elem)
		return of, nil
	}
	if c.files == nil {
		c.files = make(map[string]*openFile)
	}
	of := &openFile{path: path, f: f, size: info.Size(), refs: 1}
	of.elem = c.lru.PushFront(of)
	c.files[path] = of
	for len(c.files) > maxOpenFiles {
		c.dropLocked(c.lru.Back().Value.(*openFile))
	}
	return of, nil
}

func (c *fileCache) release(of *openFile) {
	c.mu.Lock()
	defer c.mu.Unlock()
	of.refs--
	if of.refs == 0 && of.dropped {
		of.f.Close()
	}
}

// drop forgets path's handle, after the object was replaced or deleted.
func (c *fileCache) drop(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if of, ok := c.files[path]; ok {
		c.dropLocked(of)
	}
}

// REQUIRES: c.mu held.
func (c *fileCache) dropLocked(of *openFile) {
	delete(c.files, of.path)
	c.lru.Remove(of.elem)
	of.dropped = true
	if of.refs == 0 {
		of.f.Close()
	}
}

// ReadRange implements RangeReader with a positioned read on a cached
// handle.
func (b *LocalBucket) ReadRange(ctx context.Context, name string, off, length int64) ([]byte, error) {
	if off < 0 || length < 0 {
		return nil, fmt.Errorf("blob: read %s: invalid range off=%d length=%d", name, off, length)
	}
	path, err := b.objectPath(name)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	of, err := b.files.acquire(path)
	if err != nil {
		return nil, b.statErr(name, err)
	}
	defer b.files.release(of)
	n := max(min(length, of.size-off), 0)
	buf := make([]byte, n)
	if _, err := of.f.ReadAt(buf, off); err != nil && !(errors.Is(err, io.EOF) && n == 0) {
		return nil, fmt.Errorf("blob: read %s: %w", name, err)
	}
	return buf, nil
}
