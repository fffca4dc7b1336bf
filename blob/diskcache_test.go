package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/thanos-io/objstore"
)

const testPart = 1 << 10

// partTrailerLen is a test part file's bytes beyond its payload: test
// parts are one checksum chunk long.
const partTrailerLen = 4 + partFixedLen

// testBody is n deterministic bytes that differ at every offset a test
// reads, so a part served at the wrong offset shows.
func testBody(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

func newTestCache(t *testing.T, inner objstore.Bucket, dir string, maxBytes int64) *DiskCache {
	t.Helper()
	c, err := NewDiskCache(inner, DiskCacheOptions{Dir: dir, MaxBytes: maxBytes, PartSize: testPart})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustPut(t *testing.T, b objstore.Bucket, name string, body []byte) {
	t.Helper()
	if err := b.Upload(context.Background(), name, bytes.NewReader(body)); err != nil {
		t.Fatalf("upload %s: %v", name, err)
	}
}

func mustRead(t *testing.T, c *DiskCache, name string, body []byte, off, length int64) {
	t.Helper()
	got, err := c.ReadRange(context.Background(), name, off, length)
	if err != nil {
		t.Fatalf("read %d+%d: %v", off, length, err)
	}
	lo, hi := min(off, int64(len(body))), min(off+length, int64(len(body)))
	if !bytes.Equal(got, body[lo:hi]) {
		t.Fatalf("read %d+%d: got %d bytes, want %d (or different bytes)", off, length, len(got), hi-lo)
	}
}

func reads(b *CountingBucket) uint64 { n := b.Counts(); return n.Get + n.GetRange }

// partFiles lists the part files in dir.
func partFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if _, _, _, ok := parsePartFileName(e.Name()); ok {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestDiskCachePartBoundaries(t *testing.T) {
	for _, size := range []int{0, 1, testPart - 1, testPart, 2 * testPart, 2*testPart + testPart/2} {
		body := testBody(size)
		name := SSTName(NewSSTID())
		ranges := [][2]int64{
			{0, 1}, {0, testPart}, {0, testPart + 1}, {testPart - 3, 6}, {testPart, testPart},
			{testPart / 2, 2 * testPart}, {0, 3 * testPart}, {2*testPart + 10, 100},
			{int64(size) - 1, 1}, {int64(size) - 1, 50}, {int64(size), 10}, {int64(size) + 5, 10},
			{2 * testPart, testPart / 2}, {testPart + 1, 100 * testPart},
		}
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			inner := NewMemBucket()
			mustPut(t, inner, name, body)
			for _, warm := range []bool{false, true} {
				c := newTestCache(t, inner, t.TempDir(), 1<<20)
				if warm { // the same reads served by a cache the whole object is in
					mustRead(t, c, name, body, 0, int64(size)+testPart)
				}
				for _, r := range ranges {
					if r[0] < 0 {
						continue
					}
					mustRead(t, c, name, body, r[0], r[1])
					mustRead(t, c, name, body, r[0], r[1]) // again, from the parts just stored
				}
				rc, err := c.GetRange(context.Background(), name, 1, 2*testPart)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(rc)
				if want := body[min(1, size):min(1+2*testPart, size)]; !bytes.Equal(got, want) {
					t.Errorf("GetRange: %d bytes, want %d", len(got), len(want))
				}
			}
		})
	}
}

func TestDiskCacheOneGetPerMissingRun(t *testing.T) {
	inner := NewCountingBucket(NewMemBucket())
	body := testBody(10 * testPart)
	name := SSTName(NewSSTID())
	mustPut(t, inner, name, body)
	c := newTestCache(t, inner, t.TempDir(), 1<<20)
	steps := []struct {
		off, length int64
		gets        uint64
	}{
		{2*testPart + 5, 2 * testPart, 1}, // parts 2-4, cold: one read
		{2 * testPart, 3 * testPart, 0},   // warm
		{0, 7 * testPart, 2},              // 0-1 and 5-6 missing: two runs
		{0, 10 * testPart, 1},             // 7-9
		{0, 10 * testPart, 0},
		{9*testPart + 3, 1, 0},
	}
	for i, s := range steps {
		before := reads(inner)
		mustRead(t, c, name, body, s.off, s.length)
		if got := reads(inner) - before; got != s.gets {
			t.Errorf("step %d (%d+%d): %d bucket reads, want %d", i, s.off, s.length, got, s.gets)
		}
	}
	st := c.Stats()
	if st.Misses != 10 || st.Fetches != 4 || st.FetchedBytes != uint64(len(body)) || st.Files != 10 {
		t.Errorf("stats %+v: want 10 misses, 4 fetches, %d bytes fetched, 10 files", st, len(body))
	}
	if st.Hits == 0 {
		t.Errorf("no hits counted: %+v", st)
	}
}

func TestDiskCachePassesThroughOtherNames(t *testing.T) {
	inner := NewCountingBucket(NewMemBucket())
	dir := t.TempDir()
	c := newTestCache(t, inner, dir, 1<<20)
	for _, name := range []string{WALName(3), ManifestName(4), "sst/not-a-ulid.sst"} {
		body := testBody(3 * testPart)
		mustPut(t, c, name, body)
		before := reads(inner)
		mustRead(t, c, name, body, 0, 100)
		mustRead(t, c, name, body, 0, 100)
		if got := reads(inner) - before; got != 2 {
			t.Errorf("%s: %d bucket reads for two reads, want 2 (not cached)", name, got)
		}
	}
	if files := partFiles(t, dir); len(files) != 0 {
		t.Errorf("part files of uncacheable names: %v", files)
	}
}

func TestDiskCacheWritesThroughOnUpload(t *testing.T) {
	for _, size := range []int{0, 100, testPart, 3 * testPart, 3*testPart + 7} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			inner := NewCountingBucket(NewMemBucket())
			dir := t.TempDir()
			c := newTestCache(t, inner, dir, 1<<20)
			body := testBody(size)
			name := SSTName(NewSSTID())
			mustPut(t, c, name, body)
			if got := mustGetBytes(t, inner, name); !bytes.Equal(got, body) {
				t.Fatalf("bucket holds %d bytes, want %d", len(got), len(body))
			}
			before := reads(inner)
			for off := int64(0); off <= int64(size)+testPart; off += testPart / 3 {
				mustRead(t, c, name, body, off, testPart)
			}
			mustRead(t, c, name, body, 0, int64(size)+1)
			if got := reads(inner) - before; got != 0 {
				t.Errorf("%d bucket reads after a write-through upload, want 0", got)
			}
			wantParts := max((size+testPart-1)/testPart, 1)
			if st := c.Stats(); st.WrittenParts != uint64(wantParts) || st.Files != int64(wantParts) {
				t.Errorf("stats %+v, want %d parts written and held", st, wantParts)
			}
		})
	}
}

func mustGetBytes(t *testing.T, b objstore.Bucket, name string) []byte {
	t.Helper()
	return []byte(mustGet(t, b, name))
}

// failingReader returns n bytes of body and then an error.
type failingReader struct {
	r io.Reader
	n int
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errors.New("reader broke")
	}
	p = p[:min(len(p), f.n)]
	n, err := f.r.Read(p)
	f.n -= n
	return n, err
}

func TestDiskCacheFailedUploadLeavesNoParts(t *testing.T) {
	inner := NewCountingBucket(NewMemBucket())
	dir := t.TempDir()
	c := newTestCache(t, inner, dir, 1<<20)
	ctx := context.Background()
	name := SSTName(NewSSTID())
	body := testBody(5 * testPart)
	err := c.Upload(ctx, name, &failingReader{r: bytes.NewReader(body), n: 3*testPart + 10})
	if err == nil {
		t.Fatal("upload of a broken body succeeded")
	}
	mustPut(t, inner, name, body) // stored by someone else
	if err := c.Upload(ctx, name, bytes.NewReader(testBody(4*testPart)), objstore.WithIfNotExists()); !c.IsConditionNotMetErr(err) {
		t.Fatalf("create-if-absent over an existing name: %v", err)
	}
	if files := partFiles(t, dir); len(files) != 0 {
		t.Fatalf("failed uploads left part files: %v", files)
	}
	if tmps, _ := os.ReadDir(filepath.Join(dir, tmpDirName)); len(tmps) != 0 {
		t.Fatalf("failed uploads left %d temp files", len(tmps))
	}
	if st := c.Stats(); st.Files != 0 || st.Bytes != 0 || st.WrittenParts != 0 {
		t.Fatalf("stats after failed uploads: %+v", st)
	}
	mustRead(t, c, name, body, 0, int64(len(body))) // the bucket's bytes, not the failed body's
}

func TestDiskCacheEvictsToMaxBytes(t *testing.T) {
	inner := NewCountingBucket(NewMemBucket())
	dir := t.TempDir()
	const maxBytes = 3*(testPart+partTrailerLen) + 10
	c := newTestCache(t, inner, dir, maxBytes)
	body := testBody(10 * testPart)
	name := SSTName(NewSSTID())
	mustPut(t, inner, name, body)
	for i := range int64(10) {
		mustRead(t, c, name, body, i*testPart, testPart)
		st := c.Stats()
		var onDisk int64
		for _, f := range partFiles(t, dir) {
			info, err := os.Stat(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			onDisk += info.Size()
		}
		if st.Bytes > maxBytes || onDisk != st.Bytes {
			t.Fatalf("after part %d: %d bytes counted, %d on disk, limit %d", i, st.Bytes, onDisk, maxBytes)
		}
	}
	if st := c.Stats(); st.Evictions != 7 || st.Files != 3 {
		t.Errorf("stats %+v: want 7 evictions, 3 files", st)
	}
	before := reads(inner)
	mustRead(t, c, name, body, 7*testPart, 3*testPart) // the three most recent
	if got := reads(inner) - before; got != 0 {
		t.Errorf("recent parts: %d bucket reads, want 0", got)
	}
	mustRead(t, c, name, body, 0, 1) // evicted
	if got := reads(inner) - before; got != 1 {
		t.Errorf("evicted part: %d bucket reads, want 1", got)
	}
}

func TestDiskCacheServesWarmAfterRestart(t *testing.T) {
	mem := NewMemBucket()
	dir := t.TempDir()
	body := testBody(6*testPart + 100)
	name := SSTName(NewSSTID())
	mustPut(t, newTestCache(t, mem, dir, 1<<20), name, body)

	inner := NewCountingBucket(mem)
	c := newTestCache(t, inner, dir, 1<<20)
	if st := c.Stats(); st.Files != 7 || st.Bytes != int64(len(body))+7*partTrailerLen {
		t.Fatalf("reopened cache indexed %+v", st)
	}
	mustRead(t, c, name, body, 0, int64(len(body)))
	mustRead(t, c, name, body, int64(len(body))-5, 100) // past the end: the .end part says where it is
	mustRead(t, c, name, body, int64(len(body))+testPart, 100)
	if got := reads(inner); got != 0 {
		t.Errorf("%d bucket reads after restart, want 0", got)
	}

	// Reopening smaller evicts the least recently used parts, by mtime.
	old := time.Now().Add(-time.Hour)
	for _, f := range partFiles(t, dir) {
		if _, idx, _, _ := parsePartFileName(f); idx < 4 {
			if err := os.Chtimes(filepath.Join(dir, f), old, old.Add(time.Duration(idx)*time.Second)); err != nil {
				t.Fatal(err)
			}
		}
	}
	c = newTestCache(t, inner, dir, 2*(testPart+partTrailerLen)+100+partTrailerLen+50) // parts 4-6
	if st := c.Stats(); st.Files != 3 || st.Evictions != 4 {
		t.Fatalf("reopened with room for 3 parts: %+v", st)
	}
	mustRead(t, c, name, body, 4*testPart, 3*testPart)
	if got := reads(inner); got != 0 {
		t.Errorf("%d bucket reads of the parts kept, want 0", got)
	}
}

// TestDiskCacheNewPartSize: a cache reopened with another PartSize drops
// the old parts, whose indexes name other offsets.
func TestDiskCacheNewPartSize(t *testing.T) {
	inner := NewCountingBucket(NewMemBucket())
	dir := t.TempDir()
	body := testBody(10*testPart + 5)
	name := SSTName(NewSSTID())
	mustPut(t, newTestCache(t, inner, dir, 1<<20), name, body)
	c, err := NewDiskCache(inner, DiskCacheOptions{Dir: dir, MaxBytes: 1 << 20, PartSize: 4 * testPart})
	if err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Files != 0 || len(partFiles(t, dir)) != 0 {
		t.Fatalf("reopened with another part size, kept %d parts (%d files)", st.Files, len(partFiles(t, dir)))
	}
	mustRead(t, c, name, body, 0, int64(len(body)))
	mustRead(t, c, name, body, 9*testPart, 3*testPart)
	if c = newTestCache(t, inner, dir, 1<<20); c.Stats().Files != 0 {
		t.Fatal("back to the first part size, kept parts of the second")
	}
	mustRead(t, c, name, body, 3*testPart-1, 7*testPart)
}

func TestDiskCacheRefetchesBadParts(t *testing.T) {
	damage := map[string]func(b []byte) []byte{
		"flipped byte":    func(b []byte) []byte { b[len(b)/2] ^= 0x10; return b },
		"flipped trailer": func(b []byte) []byte { b[len(b)-6] ^= 1; return b },
		"truncated":       func(b []byte) []byte { return b[:len(b)-partTrailerLen-1] },
		"torn":            func(b []byte) []byte { return b[:3] },
		"trailer only":    func(b []byte) []byte { return b[len(b)-partTrailerLen:] },
		"empty":           func(b []byte) []byte { return nil },
		"zeroed":          func(b []byte) []byte { return make([]byte, len(b)) },
	}
	for what, fn := range damage {
		t.Run(what, func(t *testing.T) {
			inner := NewCountingBucket(NewMemBucket())
			dir := t.TempDir()
			c := newTestCache(t, inner, dir, 1<<20)
			body := testBody(2*testPart + 9)
			name := SSTName(NewSSTID())
			mustPut(t, c, name, body)
			for _, f := range partFiles(t, dir) {
				path := filepath.Join(dir, f)
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, fn(b), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, reopen := range []bool{false, true} {
				if reopen { // damage done while stopped is found by the restarted cache
					for _, f := range partFiles(t, dir) {
						path := filepath.Join(dir, f)
						b, _ := os.ReadFile(path)
						os.WriteFile(path, fn(b), 0o644)
					}
					c = newTestCache(t, inner, dir, 1<<20)
				}
				before := reads(inner)
				mustRead(t, c, name, body, 0, int64(len(body)))
				if got := reads(inner) - before; got != 1 {
					t.Errorf("reopen=%v: %d bucket reads, want 1 refetch of the bad parts", reopen, got)
				}
				before = reads(inner)
				mustRead(t, c, name, body, 0, int64(len(body)))
				if got := reads(inner) - before; got != 0 {
					t.Errorf("reopen=%v: %d bucket reads once refetched, want 0", reopen, got)
				}
			}
		})
	}
}

// gateBucket holds every ranged read until the gate opens.
type gateBucket struct {
	*CountingBucket
	gate chan struct{}
}

func (b gateBucket) GetRange(ctx context.Context, name string, off, length int64) (io.ReadCloser, error) {
	<-b.gate
	return b.CountingBucket.GetRange(ctx, name, off, length)
}

func (b gateBucket) ReadRange(ctx context.Context, name string, off, length int64) ([]byte, error) {
	select {
	case <-b.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return b.CountingBucket.ReadRange(ctx, name, off, length)
}

func TestDiskCacheConcurrentReadersShareOneFetch(t *testing.T) {
	counting := NewCountingBucket(NewMemBucket())
	body := testBody(4 * testPart)
	name := SSTName(NewSSTID())
	mustPut(t, counting, name, body)
	gate := make(chan struct{})
	c := newTestCache(t, gateBucket{counting, gate}, t.TempDir(), 1<<20)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			off := int64(testPart + i*20)
			got, err := c.ReadRange(context.Background(), name, off, 30)
			if err == nil && !bytes.Equal(got, body[off:off+30]) {
				err = fmt.Errorf("reader %d: wrong bytes", i)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	time.Sleep(100 * time.Millisecond) // every reader joins the first one's fetch
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := reads(counting); got != 1 {
		t.Errorf("16 concurrent readers of one part made %d bucket reads, want 1", got)
	}
}

// TestDiskCacheCanceledFetch: a reader whose context ends while others wait
// on its fetch fails alone; a waiter fetches the part itself.
func TestDiskCacheCanceledFetch(t *testing.T) {
	counting := NewCountingBucket(NewMemBucket())
	body := testBody(2 * testPart)
	name := SSTName(NewSSTID())
	mustPut(t, counting, name, body)
	gate := make(chan struct{})
	c := newTestCache(t, gateBucket{counting, gate}, t.TempDir(), 1<<20)
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { _, err := c.ReadRange(ctx, name, 0, 10); first <- err }()
	time.Sleep(50 * time.Millisecond) // the first reader owns the fetch
	second := make(chan error, 1)
	go func() {
		got, err := c.ReadRange(context.Background(), name, 5, 10)
		if err == nil && !bytes.Equal(got, body[5:15]) {
			err = errors.New("wrong bytes")
		}
		second <- err
	}()
	time.Sleep(50 * time.Millisecond) // the second waits on it
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Errorf("canceled reader: %v", err)
	}
	close(gate)
	if err := <-second; err != nil {
		t.Errorf("waiting reader: %v", err)
	}
	if st := c.Stats(); st.Files != 1 || reads(counting) != 1 {
		t.Errorf("stats %+v after %d bucket reads", st, reads(counting))
	}
}

// TestDiskCacheConcurrentStress reads random ranges of a few objects from
// many goroutines through a cache small enough to evict all the time, and
// checks every byte (run with -race).
func TestDiskCacheConcurrentStress(t *testing.T) {
	inner := NewMemBucket()
	c := newTestCache(t, inner, t.TempDir(), 5*testPart)
	bodies := map[string][]byte{}
	var names []string
	for i := range 3 {
		name := SSTName(NewSSTID())
		bodies[name] = testBody(8*testPart + i*333)
		mustPut(t, inner, name, bodies[name])
		names = append(names, name)
	}
	var wg sync.WaitGroup
	var failed sync.Once
	for g := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 300 {
				name := names[rng.IntN(len(names))]
				body := bodies[name]
				off, length := rng.Int64N(int64(len(body))+10), rng.Int64N(3*testPart)+1
				got, err := c.ReadRange(context.Background(), name, off, length)
				lo, hi := min(off, int64(len(body))), min(off+length, int64(len(body)))
				if err != nil || !bytes.Equal(got, body[lo:hi]) {
					failed.Do(func() { t.Errorf("read %s %d+%d: %v, %d bytes", name, off, length, err, len(got)) })
					return
				}
			}
		})
	}
	wg.Wait()
	if st := c.Stats(); st.Bytes > 5*testPart || st.Evictions == 0 || st.Hits == 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestDiskCacheDeleteDropsParts(t *testing.T) {
	inner := NewCountingBucket(NewMemBucket())
	dir := t.TempDir()
	c := newTestCache(t, inner, dir, 1<<20)
	keep, gone := SSTName(NewSSTID()), SSTName(NewSSTID())
	mustPut(t, c, keep, testBody(2*testPart))
	mustPut(t, c, gone, testBody(3*testPart))
	if err := c.Delete(context.Background(), gone); err != nil {
		t.Fatal(err)
	}
	files := partFiles(t, dir)
	if len(files) != 2 || !strings.HasPrefix(files[0], strings.ReplaceAll(keep, "/", "%2F")) {
		t.Errorf("part files after delete: %v", files)
	}
	if st := c.Stats(); st.Files != 2 || st.Bytes != 2*(testPart+partTrailerLen) {
		t.Errorf("stats after delete: %+v", st)
	}
	if _, err := c.ReadRange(context.Background(), gone, 0, 10); !c.IsObjNotFoundErr(err) {
		t.Errorf("read of a deleted object: %v, want not found", err)
	}
}

func TestDiskCacheOptions(t *testing.T) {
	for _, o := range []DiskCacheOptions{{}, {Dir: "x"}, {Dir: "x", MaxBytes: 1, PartSize: 10}} {
		if _, err := NewDiskCache(NewMemBucket(), o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	var o DiskCacheOptions
	o.EnsureDefaults()
	if !o.Cacheable(SSTName(NewSSTID())) || !o.Cacheable("tenant/"+SSTName(NewSSTID())) ||
		o.Cacheable(WALName(1)) || o.Cacheable(ManifestName(1)) {
		t.Error("default Cacheable is not SST objects only")
	}
	for _, name := range []string{"sst/a.sst", "a b/%x.y", ".z"} {
		for _, last := range []bool{false, true} {
			got, idx, gotLast, ok := parsePartFileName(partFileName(name, 12, last))
			if !ok || got != name || idx != 12 || gotLast != last {
				t.Errorf("part file name of %q round trip: %q %d %v %v", name, got, idx, gotLast, ok)
			}
		}
	}
}

// TestDiskCacheChecksOnlyTouchedChunks: a read inside one part checks the
// checksum chunks it touches, not the whole part. A damaged chunk elsewhere
// in the part does not stop a read of a sound one; a read that touches the
// damaged chunk is never served from it, and is fetched again.
func TestDiskCacheChecksOnlyTouchedChunks(t *testing.T) {
	mem := NewMemBucket()
	inner := NewCountingBucket(mem)
	dir := t.TempDir()
	const part = 4 * partChunk
	c, err := NewDiskCache(inner, DiskCacheOptions{Dir: dir, MaxBytes: 1 << 20, PartSize: part})
	if err != nil {
		t.Fatal(err)
	}
	name := SSTName(NewSSTID())
	body := testBody(part + 100) // one full part and a short last one
	mustPut(t, c, name, body)
	files := partFiles(t, dir)
	if len(files) != 2 {
		t.Fatalf("part files: %v", files)
	}
	full := filepath.Join(dir, files[0])
	if strings.HasSuffix(files[0], partEndExt) {
		full = filepath.Join(dir, files[1])
	}
	b, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	b[3*partChunk+5] ^= 1 // damage chunk 3 of part 0
	if err := os.WriteFile(full, b, 0o644); err != nil {
		t.Fatal(err)
	}
	before := inner.Counts().GetRange + inner.Counts().Get
	mustRead(t, c, name, body, 100, 4096)        // chunk 0
	mustRead(t, c, name, body, partChunk-10, 20) // chunks 0 and 1
	mustRead(t, c, name, body, part+10, 50)      // the last part
	if got := inner.Counts().GetRange + inner.Counts().Get - before; got != 0 {
		t.Fatalf("reads of sound chunks went to the bucket %d times", got)
	}
	mustRead(t, c, name, body, 3*partChunk, 4096) // the damaged chunk: fetched again
	if got := inner.Counts().GetRange + inner.Counts().Get - before; got != 1 {
		t.Fatalf("a read of the damaged chunk made %d bucket reads, want 1", got)
	}
	if st := c.Stats(); st.BadParts != 1 {
		t.Errorf("bad parts %d, want 1", st.BadParts)
	}
	mustRead(t, c, name, body, 3*partChunk, 4096) // and cached again
	if got := inner.Counts().GetRange + inner.Counts().Get - before; got != 1 {
		t.Fatalf("the refetched part was not cached: %d bucket reads", got)
	}
}
