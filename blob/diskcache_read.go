package blob

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// partKey names one part of one object.
type partKey struct {
	name string
	idx  int64
}

// partFlight is one fetch of a part, shared by every reader that wants the
// part while it is under way.
type partFlight struct {
	done chan struct{}
	data []byte // the part's payload; nil past the object's end
	err  error
}

// partRun is a run of adjacent missing parts fetched with one ranged read.
type partRun struct {
	first, last int64
	flights     []*partFlight
	finished    bool // its flights are done; only the planning reader uses it
}

// readPlan says where each unresolved part of a read comes from.
type readPlan struct {
	obj    *cachedObj
	cached map[int64]cachedRead // by part index
	waits  map[int64]*partFlight
	runs   []*partRun
}

type cachedRead struct {
	p     *cachedPart
	touch bool // refresh the file's mtime once read
}

// maxReadRounds bounds how often one read plans again after cached parts
// turned out bad or vanished under it, or a fetch it waited on was
// canceled by its own reader.
const maxReadRounds = 4

// maxReadParts bounds the parts one read may span; a larger read passes
// through (no caller of a cache reads gigabytes at once).
const maxReadParts = 1 << 14

// ReadRange implements RangeReader. A cacheable name is served from part
// files; missing parts are fetched with one ranged read per run of adjacent
// missing parts and stored.
func (c *DiskCache) ReadRange(ctx context.Context, name string, off, length int64) ([]byte, error) {
	if !c.opts.Cacheable(name) || length == 0 {
		return ReadRange(ctx, c.Bucket, name, off, length)
	}
	if off < 0 || length < 0 {
		return nil, fmt.Errorf("blob: read %s: invalid range off=%d length=%d", name, off, length)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	size := c.opts.PartSize
	length = min(length, math.MaxInt64-off)
	first, last := off/size, (off+length-1)/size
	if last-first >= maxReadParts {
		return ReadRange(ctx, c.Bucket, name, off, length)
	}
	if first == last {
		// One part, the common case (an SST block): read only its bytes.
		if b, ok := c.readCachedRange(name, first, off-first*size, off+length-first*size); ok {
			return b, nil
		}
	}
	parts, err := c.loadParts(ctx, name, first, last)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, min(length, int64(len(parts))*size))
	for i, p := range parts {
		partOff := (first + int64(i)) * size
		lo, hi := max(off-partOff, 0), min(off+length-partOff, int64(len(p)))
		if lo < hi {
			out = append(out, p[lo:hi]...)
		}
		if int64(len(p)) < size {
			break // the object ends in this part
		}
	}
	return out, nil
}

// loadParts returns the payloads of parts first..last of name, nil for
// parts past the object's end.
func (c *DiskCache) loadParts(ctx context.Context, name string, first, last int64) ([][]byte, error) {
	out := make([][]byte, last-first+1)
	done := make([]bool, len(out))
	for range maxReadRounds {
		// Cached parts first, so that one found bad is fetched in the same
		// ranged read as its missing neighbours.
		c.readAllCached(c.plan(name, first, out, done, false), first, out, done)
		pl := c.plan(name, first, out, done, true)
		if err := c.fetchRuns(ctx, pl, first, out, done); err != nil {
			return nil, err
		}
		c.readAllCached(pl, first, out, done)
		if err := c.waitFlights(ctx, pl, first, out, done); err != nil {
			return nil, err
		}
		if !slices.Contains(done, false) {
			return out, nil
		}
	}
	return nil, fmt.Errorf("blob: disk cache: read %s: parts kept vanishing", name)
}

// fetchRuns fetches the plan's runs of missing parts.
func (c *DiskCache) fetchRuns(ctx context.Context, pl *readPlan, first int64, out [][]byte, done []bool) error {
	for _, run := range pl.runs {
		if err := c.fetchRun(ctx, pl.obj, run); err != nil {
			// Later runs' flights must still finish: waiters hang otherwise.
			for _, r := range pl.runs {
				c.finishRun(pl.obj, r, nil, err)
			}
			return err
		}
		for i, f := range run.flights {
			out[run.first+int64(i)-first], done[run.first+int64(i)-first] = f.data, true
		}
	}
	return nil
}

func (c *DiskCache) readAllCached(pl *readPlan, first int64, out [][]byte, done []bool) {
	for idx, cr := range pl.cached {
		if b, ok := c.readCached(cr); ok {
			out[idx-first], done[idx-first] = b, true
		}
	}
}

// waitFlights takes the parts other readers are fetching. A fetch given up
// by its own reader's context is left for the next round to fetch again.
func (c *DiskCache) waitFlights(ctx context.Context, pl *readPlan, first int64, out [][]byte, done []bool) error {
	for idx, f := range pl.waits {
		select {
		case <-f.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		switch {
		case f.err == nil:
			out[idx-first], done[idx-first] = f.data, true
		case !errors.Is(f.err, context.Canceled) && !errors.Is(f.err, context.DeadlineExceeded):
			return f.err
		}
	}
	return nil
}

// plan sorts the unresolved parts into cached, being fetched by another
// reader, and to fetch (starting those fetches' flights); with fetch false
// it finds only the cached ones.
func (c *DiskCache) plan(name string, first int64, out [][]byte, done []bool, fetch bool) *readPlan {
	c.mu.Lock()
	defer c.mu.Unlock()
	obj := c.objLocked(name)
	pl := &readPlan{obj: obj, cached: map[int64]cachedRead{}, waits: map[int64]*partFlight{}}
	now := time.Now()
	for i := range out {
		idx := first + int64(i)
		if done[i] {
			continue
		}
		if obj.lastIdx >= 0 && idx > obj.lastIdx {
			out[i], done[i] = nil, true
			continue
		}
		if p, ok := obj.parts[idx]; ok {
			c.lru.MoveToFront(p.elem)
			touch := now.Sub(p.touched) > touchEvery
			if touch {
				p.touched = now
			}
			pl.cached[idx] = cachedRead{p: p, touch: touch}
			continue
		}
		if !fetch {
			continue
		}
		key := partKey{name, idx}
		if f, ok := c.flights[key]; ok {
			pl.waits[idx] = f
			continue
		}
		f := &partFlight{done: make(chan struct{})}
		c.flights[key] = f
		obj.pending++
		if n := len(pl.runs); n > 0 && pl.runs[n-1].last == idx-1 {
			pl.runs[n-1].last = idx
			pl.runs[n-1].flights = append(pl.runs[n-1].flights, f)
		} else {
			pl.runs = append(pl.runs, &partRun{first: idx, last: idx, flights: []*partFlight{f}})
		}
	}
	c.releaseLocked(obj)
	return pl
}

// readCachedRange reads payload bytes [lo, hi) of part idx of name if that
// part is cached, checking only the checksum chunks they touch. A bad file
// is removed; ok false sends the read down the general path.
func (c *DiskCache) readCachedRange(name string, idx, lo, hi int64) (b []byte, ok bool) {
	c.mu.Lock()
	obj, found := c.objs[name]
	var p *cachedPart
	touch := false
	if found {
		if p = obj.parts[idx]; p != nil {
			c.lru.MoveToFront(p.elem)
			if now := time.Now(); now.Sub(p.touched) > touchEvery {
				p.touched, touch = now, true
			}
		}
	}
	c.mu.Unlock()
	if p == nil {
		return nil, false
	}
	return c.readPartFile(cachedRead{p: p, touch: touch}, func(dir, file string) ([]byte, error) {
		return readPartRange(dir, file, c.opts.PartSize, p.last, lo, hi)
	})
}

// readCached reads a cached part's file. A bad file is deleted and a
// vanished one (evicted or dropped meanwhile) forgotten; either way the
// part is fetched in the next round.
func (c *DiskCache) readCached(cr cachedRead) ([]byte, bool) {
	return c.readPartFile(cr, func(dir, file string) ([]byte, error) {
		return readPart(dir, file, c.opts.PartSize, cr.p.last)
	})
}

// readPartFile reads cr's part file with read, counting a hit, or removes
// the part when the file is bad or gone.
func (c *DiskCache) readPartFile(cr cachedRead, read func(dir, file string) ([]byte, error)) ([]byte, bool) {
	file := cr.p.file()
	b, err := read(c.opts.Dir, file)
	if err != nil {
		if errors.Is(err, errBadPart) {
			c.bad.Add(1)
		}
		c.mu.Lock()
		c.removePartLocked(cr.p)
		c.mu.Unlock()
		return nil, false
	}
	c.hits.Add(1)
	if cr.touch {
		now := time.Now()
		os.Chtimes(filepath.Join(c.opts.Dir, file), now, now)
	}
	return b, true
}

// fetchRun reads a run of parts from the bucket with one ranged read,
// stores them, and finishes their flights.
func (c *DiskCache) fetchRun(ctx context.Context, obj *cachedObj, run *partRun) error {
	size := c.opts.PartSize
	n := run.last - run.first + 1
	data, err := ReadRange(ctx, c.Bucket, obj.name, run.first*size, n*size)
	c.fetches.Add(1)
	if err != nil {
		c.finishRun(obj, run, nil, err)
		return err
	}
	c.fetchedBytes.Add(uint64(len(data)))
	c.misses.Add(uint64(n))
	c.finishRun(obj, run, data, nil)
	return nil
}

// finishRun stores the parts in data (a ranged read of the run), removes
// the run's flights and hands their readers the payloads or err. Finishing
// a finished run does nothing.
func (c *DiskCache) finishRun(obj *cachedObj, run *partRun, data []byte, err error) {
	if run.finished {
		return
	}
	run.finished = true
	size := c.opts.PartSize
	short := int64(len(data)) < int64(len(run.flights))*size
	type stored struct {
		tmp  string
		size int64
		last bool
	}
	files := make([]stored, len(run.flights))
	for i, f := range run.flights {
		lo := int64(i) * size
		switch {
		case err != nil:
			f.err = err
			continue
		case lo < int64(len(data)):
			f.data = data[lo:min(lo+size, int64(len(data)))]
		case lo == 0 && run.first == 0: // an empty object: its only part is empty
			f.data = []byte{}
		default:
			continue // past the end
		}
		last := short && lo+size >= int64(len(data))
		if tmp, n, werr := writePartTemp(c.tmpDir, f.data, size, last); werr == nil {
			files[i] = stored{tmp, n, last}
		}
	}
	c.mu.Lock()
	for i, f := range run.flights {
		if files[i].tmp != "" {
			c.installLocked(obj, run.first+int64(i), files[i].last, files[i].tmp, files[i].size)
		}
		delete(c.flights, partKey{obj.name, run.first + int64(i)})
		obj.pending--
		close(f.done)
	}
	c.releaseLocked(obj)
	c.evictLocked()
	c.mu.Unlock()
}
