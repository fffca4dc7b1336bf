package sst

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
)

// ObjectReader reads byte ranges of one stored object.
type ObjectReader interface {
	// ReadAt returns length bytes at off. It may return fewer only when the
	// object ends first; the Reader treats that as a truncated object.
	ReadAt(ctx context.Context, off, length int64) ([]byte, error)
}

// BucketObject reads the named object with ranged GETs.
func BucketObject(bkt objstore.BucketReader, name string) ObjectReader {
	return bucketObject{bkt: bkt, name: name}
}

type bucketObject struct {
	bkt  objstore.BucketReader
	name string
}

func (o bucketObject) ReadAt(ctx context.Context, off, length int64) ([]byte, error) {
	return blob.ReadRange(ctx, o.bkt, o.name, off, length)
}

// BytesObject serves an object held in memory, such as one just built.
func BytesObject(data []byte) ObjectReader { return bytesObject(data) }

type bytesObject []byte

func (o bytesObject) ReadAt(_ context.Context, off, length int64) ([]byte, error) {
	if off < 0 || length < 0 || off > int64(len(o)) {
		return nil, fmt.Errorf("sst: read of %d bytes at offset %d outside a %d-byte object", length, off, len(o))
	}
	return o[off:min(off+length, int64(len(o)))], nil
}

// tailReadLen is how much OpenReader reads from the end of an object: the
// footer and, for all but large objects, the index, filter and stats blocks
// in the same request (one round trip instead of two).
const tailReadLen = 64 << 10

// Reader reads one ordered SST. It is safe for concurrent use; the object is
// immutable, so a Reader needs no closing beyond dropping it.
type Reader struct {
	obj   ObjectReader
	name  string
	size  int64
	cache *Cache // nil: no caching
	id    uint64 // cache key namespace of this Reader
	f     footer
	stats Stats

	// Index and filter live in the cache (high priority) when there is one
	// that can hold them, and are pinned here otherwise. While cached, they
	// are reached through indexRef and filterRef (Cache.getRef), which the
	// cache clears when it evicts them.
	index        indexBlock
	indexPinned  bool
	heads        *indexHeads // made at open, kept however the index is
	filter       bloomFilter
	filterPinned bool
	indexRef     atomic.Pointer[[]byte]
	filterRef    atomic.Pointer[[]byte]
}

// OpenReader reads and verifies the footer, index, filter and stats of an
// ordered object of the given size. cache may be nil.
func OpenReader(ctx context.Context, obj ObjectReader, name string, size int64, cache *Cache) (*Reader, error) {
	r := &Reader{obj: obj, name: name, size: size, cache: cache}
	if cache != nil {
		r.id = cache.newID()
	}
	if size < footerLen {
		return nil, corruptErr(name, 0, errTruncated)
	}
	tailOff := size - min(size, tailReadLen)
	tail, err := r.read(ctx, tailOff, size-tailOff)
	if err != nil {
		return nil, err
	}
	footerOff := size - footerLen
	if r.f, _, err = decodeFooter(tail[footerOff-tailOff:]); err != nil {
		return nil, corruptErr(name, footerOff, err)
	}
	if r.f.version != formatVersion1 {
		return nil, fmt.Errorf("sst: %s: unsupported format version %d", name, r.f.version)
	}
	if r.f.flags&flagUnordered != 0 {
		return nil, fmt.Errorf("sst: %s: unordered (WAL) object: read it with DecodeAll", name)
	}
	if err := r.f.validate(size); err != nil {
		return nil, corruptErr(name, footerOff, err)
	}
	metaOff := int64(r.f.index.offset)
	var meta []byte
	if metaOff >= tailOff {
		meta = tail[metaOff-tailOff : footerOff-tailOff]
	} else if meta, err = r.read(ctx, metaOff, footerOff-metaOff); err != nil {
		return nil, err
	}
	if err := r.initMeta(meta); err != nil {
		return nil, err
	}
	return r, nil
}

// initMeta decodes the index, filter and stats blocks from their adjacent
// bytes and pins or caches the index and filter.
func (r *Reader) initMeta(meta []byte) error {
	idx, rest, err := decodeBlockOwned(meta, r.f.index.length)
	if err != nil {
		return corruptErr(r.name, int64(r.f.index.offset), err)
	}
	x, err := parseIndex(idx, r.f.index.offset, true)
	if err != nil {
		return corruptErr(r.name, int64(r.f.index.offset), err)
	}
	fb, rest, err := decodeBlockOwned(rest, r.f.filter.length)
	if err != nil {
		return corruptErr(r.name, int64(r.f.filter.offset), err)
	}
	filter, err := parseBloomFilter(fb)
	if err != nil {
		return corruptErr(r.name, int64(r.f.filter.offset), err)
	}
	sb, _, err := decodeBlock(rest, r.f.stats.length, maxBlockLen)
	if err != nil {
		return corruptErr(r.name, int64(r.f.stats.offset), err)
	}
	if r.stats, sb, err = decodeStats(sb); err != nil || len(sb) != 0 {
		return corruptErr(r.name, int64(r.f.stats.offset), errBadStats)
	}
	r.heads = newIndexHeads(x)
	x.heads = r.heads
	if r.cache != nil && r.cache.fits(len(idx)) {
		r.cache.setRef(r.id, r.f.index.offset, idx, &r.indexRef)
	} else {
		r.index, r.indexPinned = x, true
	}
	if r.cache != nil && len(fb) > 0 && r.cache.fits(len(fb)) { // "no filter" costs nothing to pin
		r.cache.setRef(r.id, r.f.filter.offset, fb, &r.filterRef)
	} else {
		r.filter, r.filterPinned = filter, true
	}
	return nil
}

// decodeBlockOwned is decodeBlock for a block inside a larger buffer: an
// uncompressed block is copied so keeping it does not pin the buffer.
func decodeBlockOwned(b []byte, n uint64) (contents, rest []byte, err error) {
	contents, rest, err = decodeBlock(b, n, maxBlockLen)
	if err == nil && Compression(b[n]) == CompressionNone {
		contents = bytes.Clone(contents)
	}
	return contents, rest, err
}

// read returns exactly n bytes at off.
func (r *Reader) read(ctx context.Context, off, n int64) ([]byte, error) {
	b, err := r.obj.ReadAt(ctx, off, n)
	if err != nil {
		return nil, fmt.Errorf("sst: %s: read %d bytes at offset %d: %w", r.name, n, off, err)
	}
	if int64(len(b)) < n {
		return nil, corruptErr(r.name, off+int64(len(b)), errTruncated)
	}
	return b[:n], nil
}

// Name returns the object name the Reader was opened with.
func (r *Reader) Name() string { return r.name }

// Size returns the object's size in bytes.
func (r *Reader) Size() int64 { return r.size }

// Stats returns the object's stats. The caller must not modify their keys.
func (r *Reader) Stats() Stats { return r.stats }

// indexBlock returns the index, from the Reader, the cache or the object.
func (r *Reader) indexBlock(ctx context.Context) (indexBlock, error) {
	if r.indexPinned {
		return r.index, nil
	}
	if p := r.indexRef.Load(); p != nil {
		return r.cachedIndex(*p)
	}
	if v, ok := r.cache.getRef(r.id, r.f.index.offset, &r.indexRef); ok {
		return r.cachedIndex(v)
	}
	b, err := r.readMeta(ctx, r.f.index)
	if err != nil {
		return indexBlock{}, err
	}
	x, err := parseIndex(b, r.f.index.offset, true)
	if err != nil {
		return indexBlock{}, corruptErr(r.name, int64(r.f.index.offset), err)
	}
	r.cache.setRef(r.id, r.f.index.offset, b, &r.indexRef)
	x.heads = r.heads
	return x, nil
}

// cachedIndex is the view of an index block from the cache, validated
// before it was cached.
func (r *Reader) cachedIndex(b []byte) (indexBlock, error) {
	x, err := indexView(b)
	x.heads = r.heads
	return x, err
}

// filterBlock returns the bloom filter, from the Reader, the cache or the
// object.
func (r *Reader) filterBlock(ctx context.Context) (bloomFilter, error) {
	if f, ok := r.residentFilter(); ok {
		return f, nil
	}
	b, err := r.readMeta(ctx, r.f.filter)
	if err != nil {
		return nil, err
	}
	f, err := parseBloomFilter(b)
	if err != nil {
		return nil, corruptErr(r.name, int64(r.f.filter.offset), err)
	}
	r.cache.setRef(r.id, r.f.filter.offset, b, &r.filterRef)
	return f, nil
}

// residentFilter returns the filter if it is in memory, without I/O.
func (r *Reader) residentFilter() (bloomFilter, bool) {
	if r.filterPinned {
		return r.filter, true
	}
	if p := r.filterRef.Load(); p != nil {
		return bloomFilter(*p), true
	}
	if v, ok := r.cache.getRef(r.id, r.f.filter.offset, &r.filterRef); ok {
		return bloomFilter(v), true
	}
	return nil, false
}

func (r *Reader) readMeta(ctx context.Context, h blockHandle) ([]byte, error) {
	buf, err := r.read(ctx, int64(h.offset), int64(h.length+trailerLen))
	if err != nil {
		return nil, err
	}
	b, _, err := decodeBlock(buf, h.length, maxBlockLen)
	if err != nil {
		return nil, corruptErr(r.name, int64(h.offset), err)
	}
	return b, nil
}

// readBlock returns a decoded data block, from the cache or the object.
// fill says whether a block read from the object is added to the cache.
func (r *Reader) readBlock(ctx context.Context, h blockHandle, fill bool) ([]byte, error) {
	if r.cache != nil {
		if v, ok := r.cache.get(r.id, h.offset); ok {
			return v, nil
		}
	}
	b, err := r.readMeta(ctx, h)
	if err != nil {
		return nil, err
	}
	if fill && r.cache != nil {
		r.cache.set(r.id, h.offset, b, false)
	}
	return b, nil
}

// Get returns the newest row with the given key, of any kind, as a copy.
func (r *Reader) Get(ctx context.Context, key []byte) (Row, bool, error) {
	row, ok, _, err := r.Lookup(ctx, key)
	if ok {
		row.Key = key
		row = copyRow(row)
	}
	return row, ok, err
}

// Lookup is Get without the copy. The row has no Key: the caller holds it,
// and leaving it out keeps key off the heap where the value is handed to a
// function (lsm's View). Its Value points into a block, which the row keeps
// alive (blocks are never reused), so it stays valid while the caller holds
// it and must not be modified. filtered reports that the bloom filter ruled
// the key out. A point read that hands the value on at once saves Get's
// allocation and copy, and asks the block cache for the filter once.
func (r *Reader) Lookup(ctx context.Context, key []byte) (row Row, ok, filtered bool, err error) {
	row, ok, filtered, _, err = r.lookup(ctx, key, false)
	return row, ok, filtered, err
}

// LookupCached is Lookup that reads no data block from the object: if the
// block that may hold key is not in the block cache it reports uncached
// (and neither ok nor filtered), so that a batch can fetch such blocks
// together (MissingSpans, Span.Load) and then Lookup. The block cache
// counts no miss for the block here: Span.Load counts one per block it
// fetches, and each Lookup after it a hit.
func (r *Reader) LookupCached(ctx context.Context, key []byte) (row Row, ok, filtered, uncached bool, err error) {
	return r.lookup(ctx, key, true)
}

func (r *Reader) lookup(ctx context.Context, key []byte, cacheOnly bool) (row Row, ok, filtered, uncached bool, err error) {
	f, err := r.filterBlock(ctx)
	if err != nil {
		return Row{}, false, false, false, err
	}
	if !f.mayContain(bloomHash(key)) {
		return Row{}, false, true, false, nil
	}
	x, err := r.indexBlock(ctx)
	if err != nil {
		return Row{}, false, false, false, err
	}
	i := x.search(key)
	if i == x.n {
		return Row{}, false, false, false, nil
	}
	e := x.entry(i)
	if e.compareFirstKey(key) > 0 {
		return Row{}, false, false, false, nil // key falls between two blocks
	}
	var data []byte
	if cacheOnly && r.cache != nil {
		var cached bool
		if data, cached = r.cache.getNoMiss(r.id, e.handle.offset); !cached {
			return Row{}, false, false, true, nil
		}
	} else if data, err = r.readBlock(ctx, e.handle, true); err != nil {
		return Row{}, false, false, false, err
	}
	it := blockIterPool.Get().(*blockIter)
	defer func() {
		it.data, it.cur = nil, Row{} // the pooled iterator must not pin the block
		blockIterPool.Put(it)
	}()
	if err := it.init(data); err != nil {
		return Row{}, false, false, false, corruptErr(r.name, int64(e.handle.offset), err)
	}
	if !it.seekGE(key) {
		if it.err != nil {
			return Row{}, false, false, false, corruptErr(r.name, int64(e.handle.offset), it.err)
		}
		return Row{}, false, false, false, nil
	}
	if !bytes.Equal(it.key, key) {
		return Row{}, false, false, false, nil
	}
	row = *it.row()
	row.Key = nil // it.key is the pooled iterator's buffer
	return row, true, false, false, nil
}

// blockIterPool recycles Get's block iterators with their key buffers, so a
// cached Get allocates only the row it returns.
var blockIterPool = sync.Pool{New: func() any { return new(blockIter) }}

// copyRow copies a row's key and value into one allocation.
func copyRow(row Row) Row {
	buf := make([]byte, len(row.Key)+len(row.Value))
	n := copy(buf, row.Key)
	copy(buf[n:], row.Value)
	row.Key, row.Value = buf[:n:n], buf[n:]
	return row
}
