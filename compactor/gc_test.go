package compactor

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm"
	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/manifest"
	"github.com/stratakv/strata/wal"
)

// Test helpers are prefixed gc so they cannot collide with the tests of the
// rest of the package.

// gcClock is a fake clock for GCOptions.Now.
type gcClock struct {
	mu sync.Mutex
	t  time.Time
}

func newGCClock(t time.Time) *gcClock { return &gcClock{t: t} }

func (c *gcClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *gcClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// gcSSTID makes an SST id whose ULID time is t.
func gcSSTID(t time.Time) ulid.ULID { return ulid.MustNew(ulid.Timestamp(t), rand.Reader) }

func gcPut(t *testing.T, bkt objstore.Bucket, name string, data []byte) {
	t.Helper()
	if err := bkt.Upload(context.Background(), name, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
}

// gcPutSSTs stores a (fake) SST object for each id.
func gcPutSSTs(t *testing.T, bkt objstore.Bucket, ids ...ulid.ULID) {
	t.Helper()
	for _, id := range ids {
		gcPut(t, bkt, blob.SSTName(id), []byte("sst "+id.String()))
	}
}

// gcPublish writes the successor of the latest manifest (or manifest 1)
// with L0 set to ids and ReplayAfterWALID raised to replayAfter.
func gcPublish(t *testing.T, store *manifest.Store, replayAfter uint64, ids ...ulid.ULID) *manifest.Manifest {
	t.Helper()
	ctx := context.Background()
	l0 := make([]manifest.SST, len(ids))
	for i, id := range ids {
		l0[i] = manifest.SST{ID: id, Size: 1}
	}
	if _, err := store.Latest(ctx); errors.Is(err, manifest.ErrNotFound) {
		m := &manifest.Manifest{ID: 1, L0: l0, ReplayAfterWALID: replayAfter}
		if err := store.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	m, err := store.Update(ctx, nil, func(m *manifest.Manifest) error {
		m.L0 = l0
		m.ReplayAfterWALID = max(m.ReplayAfterWALID, replayAfter)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// gcNames lists the objects under dir.
func gcNames(t *testing.T, bkt objstore.Bucket, dir string) []string {
	t.Helper()
	var names []string
	if err := bkt.Iter(context.Background(), dir, func(n string) error {
		names = append(names, n)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return names
}

func gcExists(t *testing.T, bkt objstore.Bucket, name string) bool {
	t.Helper()
	ok, err := bkt.Exists(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func gcRun(t *testing.T, g *GC) GCStats {
	t.Helper()
	st, err := g.Run(context.Background())
	if err != nil {
		t.Fatalf("gc pass: %v (stats %+v)", err, st)
	}
	return st
}

// gcLogger sends the GC's logs to the test log.
func gcLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(gcTestWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type gcTestWriter struct{ t *testing.T }

func (w gcTestWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

func TestGCOptions(t *testing.T) {
	var o GCOptions
	o.EnsureDefaults()
	if o.MinAge != 10*time.Minute || o.KeepManifests != 10 || o.FenceRetention != 24*time.Hour ||
		o.DeleteConcurrency != 8 || o.Now == nil || o.Logger == nil {
		t.Fatalf("defaults: %+v", o)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*GCOptions){
		"negative MinAge":         func(o *GCOptions) { o.MinAge = -1 },
		"KeepManifests 0":         func(o *GCOptions) { o.KeepManifests = -1 },
		"negative FenceRetention": func(o *GCOptions) { o.FenceRetention = -time.Hour },
		"DeleteConcurrency":       func(o *GCOptions) { o.DeleteConcurrency = 5000 },
	} {
		bad := o
		mutate(&bad)
		if err := bad.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, bad)
		}
	}
	// Run refuses invalid options instead of collecting with them.
	g := NewGC(blob.NewMemBucket(), nil, GCOptions{KeepManifests: -3})
	if _, err := g.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "KeepManifests") {
		t.Fatalf("Run with invalid options: %v", err)
	}
}

// TestGCSSTs: an unreferenced SST is deleted only once it is MinAge old and
// has been seen unreferenced for MinAge; referenced SSTs never are.
func TestGCSSTs(t *testing.T) {
	bkt := blob.NewMemBucket()
	store := manifest.NewStore(bkt)
	t0 := time.Now()
	clock := newGCClock(t0)
	g := NewGC(bkt, store, GCOptions{Now: clock.Now, Logger: gcLogger(t)})

	referenced := gcSSTID(t0.Add(-time.Hour))
	orphan := gcSSTID(t0.Add(-time.Hour))      // old and unreferenced: an abandoned upload or a compacted input
	uploading := gcSSTID(t0.Add(-time.Minute)) // young: its manifest update may not have landed
	gcPutSSTs(t, bkt, referenced, orphan, uploading)
	gcPut(t, bkt, "sst/not-an-sst-name.sst", []byte("x"))
	gcPut(t, bkt, blob.SSTDir+"README", []byte("x"))
	gcPublish(t, store, 0, referenced)

	want := func(pass string, st GCStats, deleted, pending uint64, present, absent []ulid.ULID) {
		t.Helper()
		if st.SSTsDeleted != deleted || st.SSTsPending != pending {
			t.Errorf("%s: deleted %d pending %d, want %d and %d (%+v)", pass, st.SSTsDeleted, st.SSTsPending, deleted, pending, st)
		}
		for _, id := range present {
			if !gcExists(t, bkt, blob.SSTName(id)) {
				t.Errorf("%s: %s was deleted", pass, id)
			}
		}
		for _, id := range absent {
			if gcExists(t, bkt, blob.SSTName(id)) {
				t.Errorf("%s: %s was kept", pass, id)
			}
		}
	}
	st := gcRun(t, g)
	want("first pass", st, 0, 2, []ulid.ULID{referenced, orphan, uploading}, nil)
	if st.SSTsReferenced != 1 {
		t.Errorf("referenced %d, want 1", st.SSTsReferenced)
	}
	clock.Advance(5 * time.Minute)
	want("after 5m", gcRun(t, g), 0, 2, []ulid.ULID{referenced, orphan, uploading}, nil)
	// The orphan has now been seen unreferenced for MinAge. uploading is
	// 11 minutes old: only now does its timer start.
	clock.Advance(5 * time.Minute)
	want("after 10m", gcRun(t, g), 1, 1, []ulid.ULID{referenced, uploading}, []ulid.ULID{orphan})
	clock.Advance(9 * time.Minute)
	want("after 19m", gcRun(t, g), 0, 1, []ulid.ULID{referenced, uploading}, nil)
	clock.Advance(time.Minute)
	want("after 20m", gcRun(t, g), 1, 0, []ulid.ULID{referenced}, []ulid.ULID{uploading})

	// Compacted away: referenced is now unreferenced, and waits MinAge more
	// for the readers of the manifests that had it.
	out := gcSSTID(clock.Now().Add(-time.Hour))
	gcPutSSTs(t, bkt, out)
	gcPublish(t, store, 0, out)
	clock.Advance(time.Hour)
	want("compacted", gcRun(t, g), 0, 1, []ulid.ULID{referenced, out}, nil)
	clock.Advance(10 * time.Minute)
	want("compacted + 10m", gcRun(t, g), 1, 0, []ulid.ULID{out}, []ulid.ULID{referenced})
	for _, name := range []string{"sst/not-an-sst-name.sst", blob.SSTDir + "README"} {
		if !gcExists(t, bkt, name) {
			t.Errorf("%s does not parse as an SST name and was deleted", name)
		}
	}
	if n := len(g.unreferencedSince); n != 0 {
		t.Errorf("%d SST timers left after every unreferenced SST was deleted", n)
	}
}

// TestGCRestartStartsTimersAgain: a new GC has no memory of what it saw; it
// waits MinAge again, which is only slower.
func TestGCRestartStartsTimersAgain(t *testing.T) {
	bkt := blob.NewMemBucket()
	store := manifest.NewStore(bkt)
	clock := newGCClock(time.Now())
	orphan := gcSSTID(clock.Now().Add(-time.Hour))
	gcPutSSTs(t, bkt, orphan)
	gcPublish(t, store, 0)
	gcRun(t, NewGC(bkt, store, GCOptions{Now: clock.Now}))
	clock.Advance(10 * time.Minute)
	restarted := NewGC(bkt, store, GCOptions{Now: clock.Now})
	if st := gcRun(t, restarted); st.SSTsDeleted != 0 || !gcExists(t, bkt, blob.SSTName(orphan)) {
		t.Fatalf("restarted GC deleted at once: %+v", st)
	}
	clock.Advance(10 * time.Minute)
	if st := gcRun(t, restarted); st.SSTsDeleted != 1 {
		t.Fatalf("restarted GC after MinAge: %+v", st)
	}
}

// gcHookBucket calls onIter before listing a directory and can fail or
// disturb single operations.
type gcHookBucket struct {
	objstore.Bucket
	onIter      func(dir string)
	failDelete  map[string]bool // delete fails with an injected error
	goneFirst   map[string]bool // another process deletes the object just before us
	failIter    map[string]bool // listing dir fails
	afterDelete func(name string)
}

var errGCInjected = errors.New("injected")

func (b *gcHookBucket) Iter(ctx context.Context, dir string, f func(string) error, opts ...objstore.IterOption) error {
	if b.onIter != nil {
		b.onIter(dir)
	}
	if b.failIter[dir] {
		return errGCInjected
	}
	return b.Bucket.Iter(ctx, dir, f, opts...)
}

func (b *gcHookBucket) Delete(ctx context.Context, name string) error {
	if b.failDelete[name] {
		return fmt.Errorf("delete %s: %w", name, errGCInjected)
	}
	if b.goneFirst[name] {
		if err := b.Bucket.Delete(ctx, name); err != nil {
			return err
		}
	}
	err := b.Bucket.Delete(ctx, name)
	if b.afterDelete != nil {
		b.afterDelete(name)
	}
	return err
}

// TestGCRechecksLatestAfterListing: an SST that a manifest written while the
// pass listed the bucket references is kept, timer expired or not.
func TestGCRechecksLatestAfterListing(t *testing.T) {
	mem := blob.NewMemBucket()
	bkt := &gcHookBucket{Bucket: mem}
	store := manifest.NewStore(mem)
	clock := newGCClock(time.Now())
	late := gcSSTID(clock.Now().Add(-time.Hour))
	gcPutSSTs(t, mem, late)
	gcPublish(t, store, 0)
	g := NewGC(bkt, manifest.NewStore(bkt), GCOptions{Now: clock.Now})
	gcRun(t, g) // starts late's timer
	clock.Advance(time.Hour)
	bkt.onIter = func(dir string) {
		if dir == blob.SSTDir {
			gcPublish(t, store, 0, late) // lands between the pass's Latest and its listing
		}
	}
	st := gcRun(t, g)
	if st.SSTsDeleted != 0 || st.SSTsReferenced != 1 || !gcExists(t, mem, blob.SSTName(late)) {
		t.Fatalf("SST published during the pass: %+v", st)
	}
	if _, ok := g.unreferencedSince[late]; ok {
		t.Fatal("timer of a referenced SST kept")
	}
}

// gcWAL writes one batch object per key at ids first, first+1, … with epoch.
func gcWAL(t *testing.T, bkt objstore.Bucket, first, epoch uint64, keys ...string) {
	t.Helper()
	ctx := context.Background()
	w := wal.NewWriter(bkt, first, 0, nil, wal.Options{Epoch: epoch})
	for i, k := range keys {
		seq := uint64(i + 1)
		if err := w.Append([]sst.Row{{Key: []byte(k), Seq: seq, Kind: sst.KindPut, Value: []byte("v")}}, 1); err != nil {
			t.Fatal(err)
		}
		if err := w.WaitDurable(ctx, seq); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func gcWALIDs(t *testing.T, bkt objstore.Bucket) []uint64 {
	t.Helper()
	ids, err := wal.ListIDs(context.Background(), bkt)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func gcRange(lo, hi uint64) []uint64 {
	var ids []uint64
	for id := lo; id <= hi; id++ {
		ids = append(ids, id)
	}
	return ids
}

// TestGCWAL: batch objects at or below replay_after_wal_id are deleted,
// objects above it never, and fences only once FenceRetention old.
func TestGCWAL(t *testing.T) {
	mem := blob.NewMemBucket()
	bkt := &gcHookBucket{Bucket: mem}
	store := manifest.NewStore(mem)
	// Writer 1 stores ids 1..5; writer 2 fences at 6 (claiming 6..21)
	// and stores 22..24.
	gcWAL(t, mem, 1, 1, "a", "b", "c", "d", "e")
	f, err := wal.Fence(context.Background(), mem, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if f.Fence != 6 || f.FirstID != 22 {
		t.Fatalf("fenced at %d, first id %d; the test expects 6 and 22", f.Fence, f.FirstID)
	}
	gcWAL(t, mem, 22, 2, "f", "g", "h")
	if got := gcWALIDs(t, mem); !slices.Equal(got, gcRange(1, 24)) {
		t.Fatalf("wal ids %v", got)
	}
	clock := newGCClock(time.Now())
	g := NewGC(bkt, manifest.NewStore(bkt), GCOptions{Now: clock.Now, Logger: gcLogger(t)})

	gcPublish(t, store, 10)
	st := gcRun(t, g)
	if st.WALDeleted != 5 || st.FencesKept != 5 || st.WALKept != 14 {
		t.Errorf("replay after 10: %+v", st)
	}
	if got := gcWALIDs(t, mem); !slices.Equal(got, gcRange(6, 24)) {
		t.Errorf("replay after 10: left %v, want 6..24", got)
	}
	clock.Advance(23 * time.Hour)
	if st := gcRun(t, g); st.WALDeleted != 0 || st.FencesKept != 5 {
		t.Errorf("fences after 23h: %+v", st)
	}
	clock.Advance(time.Hour + time.Minute)
	st = gcRun(t, g)
	if st.WALDeleted != 5 || st.FencesKept != 0 || st.WALKept != 14 {
		t.Errorf("fences after 24h: %+v", st)
	}
	if got := gcWALIDs(t, mem); !slices.Equal(got, gcRange(11, 24)) {
		t.Errorf("fences after 24h: left %v, want 11..24", got)
	}

	// Replay after 23: the fences 11..21 are old already, 22 and 23
	// are batches, 24 is above.
	gcPublish(t, store, 23)
	st = gcRun(t, g)
	if st.WALDeleted != 13 || st.WALKept != 1 {
		t.Errorf("replay after 23: %+v", st)
	}
	if got := gcWALIDs(t, mem); !slices.Equal(got, []uint64{24}) {
		t.Errorf("replay after 23: left %v, want [24]", got)
	}
}

// TestGCWALKeepsUndecodableLikeFence: a WAL object below
// replay_after_wal_id of a fence's size whose header does not decode is
// kept as long as a fence; one of any other size cannot be a fence and is
// deleted whatever its bytes, without its header being read.
func TestGCWALKeepsUndecodableLikeFence(t *testing.T) {
	mem := blob.NewMemBucket()
	store := manifest.NewStore(mem)
	gcWAL(t, mem, 1, 1, "a", "b")
	gcPut(t, mem, blob.WALName(3), []byte(strings.Repeat("g", wal.HeaderLen)))
	gcPut(t, mem, blob.WALName(4), []byte("garbage, not a wal object"))
	gcPublish(t, store, 4)
	clock := newGCClock(time.Now())
	reads := &gcReadCounter{Bucket: mem}
	g := NewGC(reads, store, GCOptions{Now: clock.Now})
	if st := gcRun(t, g); st.WALDeleted != 3 || st.FencesKept != 1 {
		t.Fatalf("%+v; want 3 deleted, the fence-sized one kept", st)
	}
	if got := reads.ranges.Load(); got != 1 {
		t.Fatalf("%d header reads; want one, of the fence-sized object", got)
	}
	if ids := gcWALIDs(t, mem); !slices.Equal(ids, []uint64{3}) {
		t.Fatalf("left %v, want [3]", ids)
	}
	clock.Advance(25 * time.Hour)
	if st := gcRun(t, g); st.WALDeleted != 1 || len(gcWALIDs(t, mem)) != 0 {
		t.Fatalf("after FenceRetention: %+v", st)
	}
}

// gcReadCounter counts ranged reads (WAL header reads).
type gcReadCounter struct {
	objstore.Bucket
	ranges atomic.Int64
}

func (b *gcReadCounter) GetRange(ctx context.Context, name string, off, length int64) (io.ReadCloser, error) {
	b.ranges.Add(1)
	return b.Bucket.GetRange(ctx, name, off, length)
}

// TestGCManifests: the newest KeepManifests stay; older ones go, oldest
// first, once their successor has been known for MinAge.
func TestGCManifests(t *testing.T) {
	bkt := blob.NewMemBucket()
	store := manifest.NewStore(bkt)
	clock := newGCClock(time.Now())
	g := NewGC(bkt, store, GCOptions{Now: clock.Now, Logger: gcLogger(t)})
	for range 15 {
		gcPublish(t, store, 0)
	}
	manifestIDs := func() []uint64 {
		var ids []uint64
		for _, n := range gcNames(t, bkt, blob.ManifestDir) {
			id, _ := blob.ParseManifestName(n)
			ids = append(ids, id)
		}
		return ids
	}
	if st := gcRun(t, g); st.ManifestsDeleted != 0 || st.ManifestsKept != 15 {
		t.Errorf("first sight: %+v", st)
	}
	clock.Advance(10 * time.Minute)
	if st := gcRun(t, g); st.ManifestsDeleted != 5 || st.ManifestsKept != 10 {
		t.Errorf("after MinAge: %+v", st)
	}
	if got := manifestIDs(); !slices.Equal(got, gcRange(6, 15)) {
		t.Errorf("left %v, want 6..15", got)
	}
	for range 10 {
		gcPublish(t, store, 0)
	}
	// 6..14 have successors known for MinAge; 15's successor 16 is new.
	if st := gcRun(t, g); st.ManifestsDeleted != 9 {
		t.Errorf("10 more manifests: %+v", st)
	}
	if got := manifestIDs(); !slices.Equal(got, gcRange(15, 25)) {
		t.Errorf("left %v, want 15..25", got)
	}
	clock.Advance(10 * time.Minute)
	gcRun(t, g)
	if got := manifestIDs(); !slices.Equal(got, gcRange(16, 25)) {
		t.Errorf("left %v, want 16..25", got)
	}
	// What is left still works: latest, and refresh from the oldest.
	m, err := manifest.NewStore(bkt).Latest(context.Background())
	if err != nil || m.ID != 25 {
		t.Fatalf("latest after gc: %v, %v", m, err)
	}

	// KeepManifests 1 keeps just the latest.
	g1 := NewGC(bkt, store, GCOptions{Now: clock.Now, KeepManifests: 1})
	gcRun(t, g1)
	clock.Advance(10 * time.Minute)
	gcRun(t, g1)
	if got := manifestIDs(); !slices.Equal(got, []uint64{25}) {
		t.Errorf("KeepManifests 1: left %v", got)
	}
}

// TestGCErrorsAndGone: one failing object is counted and the pass goes on;
// objects another process already deleted are no error; a failed listing
// skips its kind of object.
func TestGCErrorsAndGone(t *testing.T) {
	mem := blob.NewMemBucket()
	store := manifest.NewStore(mem)
	clock := newGCClock(time.Now())
	old := clock.Now().Add(-time.Hour)
	a, b, c := gcSSTID(old), gcSSTID(old), gcSSTID(old)
	gcPutSSTs(t, mem, a, b, c)
	gcWAL(t, mem, 1, 1, "x", "y")
	gcPublish(t, store, 2)
	bkt := &gcHookBucket{
		Bucket:     mem,
		failDelete: map[string]bool{blob.SSTName(a): true},
		goneFirst:  map[string]bool{blob.SSTName(b): true},
		failIter:   map[string]bool{blob.WALDir: true},
	}
	g := NewGC(bkt, manifest.NewStore(bkt), GCOptions{Now: clock.Now, MinAge: time.Nanosecond})
	clock.Advance(time.Second)
	if _, err := g.Run(context.Background()); !errors.Is(err, errGCInjected) { // starts the timers
		t.Fatalf("first pass: %v, want the listing error", err)
	}
	clock.Advance(time.Second)
	st, err := g.Run(context.Background())
	if !errors.Is(err, errGCInjected) || st.Errors != 2 {
		t.Fatalf("got %+v, %v; want 2 errors (delete, list), the first wrapped", st, err)
	}
	if st.SSTsDeleted != 2 || !gcExists(t, mem, blob.SSTName(a)) || gcExists(t, mem, blob.SSTName(c)) {
		t.Fatalf("deleted %d: the failing SST must stay, the others go", st.SSTsDeleted)
	}
	if got := gcWALIDs(t, mem); len(got) != 2 {
		t.Fatalf("wal listing failed, yet wal objects changed: %v", got)
	}
	bkt.failDelete, bkt.failIter = nil, nil
	if st := gcRun(t, g); st.SSTsDeleted != 1 || st.WALDeleted != 2 || st.Errors != 0 {
		t.Fatalf("next pass: %+v", st)
	}
}

// TestGCCancel: a pass stops between batches when its ctx ends.
func TestGCCancel(t *testing.T) {
	mem := blob.NewMemBucket()
	store := manifest.NewStore(mem)
	clock := newGCClock(time.Now())
	var ids []ulid.ULID
	for range 20 {
		ids = append(ids, gcSSTID(clock.Now().Add(-time.Hour)))
	}
	gcPutSSTs(t, mem, ids...)
	gcPublish(t, store, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bkt := &gcHookBucket{Bucket: mem, afterDelete: func(string) { cancel() }}
	g := NewGC(bkt, manifest.NewStore(bkt), GCOptions{Now: clock.Now, MinAge: time.Nanosecond, DeleteConcurrency: 4})
	gcRun(t, g)
	clock.Advance(time.Second)
	st, err := g.Run(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if st.SSTsDeleted != 4 || st.Errors != 0 || len(gcNames(t, mem, blob.SSTDir)) != 16 {
		t.Fatalf("cancelled in the first batch of 4: %+v", st)
	}
}

// TestGCEndToEnd runs the engine, the compactor and the GC on one bucket:
// after the GC, only what the latest manifest needs is left, and the data
// reads back the same before and after reopening.
func TestGCEndToEnd(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	seed := mrand.Uint64()
	t.Logf("seed %d", seed)
	rnd := mrand.New(mrand.NewPCG(seed, 0))
	model := map[string]string{}
	lsmOpts := lsm.Options{MemtableSize: 64 << 10, ManifestPollInterval: 10 * time.Millisecond}
	db, err := lsm.Open(ctx, bkt, lsmOpts)
	if err != nil {
		t.Fatal(err)
	}
	write := func(db *lsm.DB, ops int) {
		t.Helper()
		for range ops {
			var b lsm.Batch
			k := fmt.Sprintf("key%04d", rnd.IntN(400))
			if rnd.IntN(8) == 0 {
				b.Delete([]byte(k))
				delete(model, k)
			} else {
				v := fmt.Sprintf("%s-%x-%s", k, rnd.Uint64(), strings.Repeat("v", rnd.IntN(200)))
				b.Put([]byte(k), []byte(v))
				model[k] = v
			}
			h, err := db.Write(ctx, &b)
			if err != nil {
				t.Fatal(err)
			}
			if rnd.IntN(50) == 0 {
				if err := h.Durable(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	check := func(db *lsm.DB, when string) {
		t.Helper()
		for i := range 400 {
			k := fmt.Sprintf("key%04d", i)
			got, err := db.Get(ctx, []byte(k))
			want, ok := model[k]
			switch {
			case !ok && !errors.Is(err, lsm.ErrNotFound):
				t.Fatalf("%s: %s: got %q, %v; want not found", when, k, got, err)
			case ok && (err != nil || string(got) != want):
				t.Fatalf("%s: %s: got %q, %v; want %q", when, k, got, err, want)
			}
		}
	}
	for range 6 {
		write(db, 700)
		if err := db.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	comp, err := Open(ctx, bkt, Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	compactAll := func() {
		t.Helper()
		for range 100 {
			did, err := comp.RunOnce(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !did {
				return
			}
		}
		t.Fatal("compactor still busy after 100 jobs")
	}
	compactAll()
	before := gcCounts(t, bkt)
	// A write and a flush make the engine adopt the compactor's manifests
	// before the GC removes the SSTs it no longer needs.
	write(db, 10)
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	store := manifest.NewStore(bkt)
	clock := newGCClock(time.Now())
	g := NewGC(bkt, store, GCOptions{Now: clock.Now, Logger: gcLogger(t)})
	// The first pass deletes WAL objects and manifests; the SSTs are young
	// (b), then wait out their timers (c).
	var st GCStats
	for range 3 {
		st = addGCStats(st, gcRun(t, g))
		clock.Advance(10 * time.Minute)
	}
	t.Logf("before gc %v, after %v; stats %+v", before, gcCounts(t, bkt), st)
	if st.SSTsDeleted == 0 || st.WALDeleted == 0 || st.ManifestsDeleted == 0 {
		t.Errorf("gc deleted too little: %+v", st)
	}
	gcCheckBucket(t, bkt, store, false)
	check(db, "open, after gc")
	write(db, 500)
	check(db, "open, after gc and more writes")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// Past FenceRetention only what the latest manifest needs is left.
	compactAll()
	clock.Advance(25 * time.Hour)
	for range 2 {
		gcRun(t, g)
		clock.Advance(10 * time.Minute)
	}
	gcCheckBucket(t, bkt, store, true)
	t.Logf("after fence retention: %v", gcCounts(t, bkt))

	db, err = lsm.Open(ctx, bkt, lsmOpts)
	if err != nil {
		t.Fatal(err)
	}
	check(db, "reopened")
	write(db, 1500)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	compactAll()
	clock.Advance(25 * time.Hour)
	for range 2 {
		gcRun(t, g)
		clock.Advance(10 * time.Minute)
	}
	gcCheckBucket(t, bkt, store, true)
	db, err = lsm.Open(ctx, bkt, lsmOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	check(db, "reopened twice")
}

// gcCounts counts the objects of each kind.
func gcCounts(t *testing.T, bkt objstore.Bucket) map[string]int {
	t.Helper()
	return map[string]int{
		"sst":      len(gcNames(t, bkt, blob.SSTDir)),
		"wal":      len(gcNames(t, bkt, blob.WALDir)),
		"manifest": len(gcNames(t, bkt, blob.ManifestDir)),
	}
}

// gcCheckBucket checks that every SST the latest manifest references
// exists, and that little else is left: no unreferenced SST, at most
// KeepManifests manifests and, once fences have expired (settled), no WAL
// object at or below replay_after_wal_id.
func gcCheckBucket(t *testing.T, bkt objstore.Bucket, store *manifest.Store, settled bool) {
	t.Helper()
	ctx := context.Background()
	m, err := store.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, s := range m.AllSSTs() {
		want[blob.SSTName(s.ID)] = true
		if !gcExists(t, bkt, blob.SSTName(s.ID)) {
			t.Errorf("manifest %d references %s, which is gone", m.ID, s.ID)
		}
	}
	for _, n := range gcNames(t, bkt, blob.SSTDir) {
		if !want[n] {
			t.Errorf("unreferenced SST %s left", n)
		}
	}
	if n := len(gcNames(t, bkt, blob.ManifestDir)); n > 10 {
		t.Errorf("%d manifests left, want at most 10", n)
	}
	var below []uint64
	for _, id := range gcWALIDs(t, bkt) {
		if id <= m.ReplayAfterWALID {
			below = append(below, id)
		}
	}
	// Before fences expire, what is left below replay_after is fences: at
	// most MaxInflight per writer open.
	if limit := map[bool]int{true: 0, false: 2 * wal.MaxInflight}[settled]; len(below) > limit {
		t.Errorf("%d wal objects at or below replay_after_wal_id %d left: %v", len(below), m.ReplayAfterWALID, below)
	}
}

// TestGCRestsWhileServerBusy: while the Pacer says the server is busy with
// clients, a pass rests after each batch (but the last) as long as the
// batch took; with the server idle, or no Pacer, it never rests. Every
// object is collected either way.
func TestGCRestsWhileServerBusy(t *testing.T) {
	for _, mode := range []string{"busy", "idle", "none"} {
		t.Run(mode, func(t *testing.T) {
			mem := blob.NewMemBucket()
			store := manifest.NewStore(mem)
			keys := make([]string, 20)
			for i := range keys {
				keys[i] = fmt.Sprint("k", i)
			}
			gcWAL(t, mem, 1, 1, keys...)
			gcPublish(t, store, 20)
			const deleteTime = 2 * time.Millisecond
			bkt := &gcHookBucket{Bucket: mem}
			bkt.afterDelete = func(string) { time.Sleep(deleteTime) }
			var pacer *sst.Pacer
			if mode != "none" {
				pacer = new(sst.Pacer)
			}
			var rests []time.Duration
			o := GCOptions{Logger: gcLogger(t), DeleteConcurrency: 8, Pacer: pacer}
			o.sleep = func(_ context.Context, d time.Duration) { rests = append(rests, d) }
			g := NewGC(bkt, manifest.NewStore(bkt), o)
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() { // clients keep arriving
				defer close(done)
				for {
					if mode == "busy" {
						pacer.MarkBusy(time.Now())
					}
					select {
					case <-stop:
						return
					case <-time.After(time.Millisecond):
					}
				}
			}()
			st := gcRun(t, g)
			close(stop)
			<-done
			if st.WALDeleted != 20 {
				t.Fatalf("%+v; want the 20 WAL objects deleted", st)
			}
			if mode != "busy" {
				if len(rests) != 0 {
					t.Fatalf("server %s: the pass rested %v", mode, rests)
				}
				return
			}
			// 20 objects in batches of 8: rests after the first two.
			if len(rests) != 2 {
				t.Fatalf("server busy: rests %v; want one after each batch but the last", rests)
			}
			for _, d := range rests {
				if d < deleteTime {
					t.Fatalf("server busy: rest of %v after a batch whose deletions took %v each", d, deleteTime)
				}
			}
		})
	}
}
