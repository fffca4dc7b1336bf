package compactor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/manifest"
	"github.com/stratakv/strata/wal"
)

// The garbage collector deletes objects that nothing can reach any more
// (DESIGN.md §2, §5, §7): SSTs no manifest in use references, WAL objects
// whose rows are all in SSTs, and old manifests. Every object is written
// once, so "unreachable" is a property of the latest manifest and of time;
// the rules below are about the second, because readers and writers act on
// manifests and ids they learned earlier.
//
// GC invariants:
//
//	G1. SSTs. sst/<ULID>.sst is deleted only if
//	    (a) neither the latest manifest loaded at the start of the pass nor
//	        the one re-loaded after listing the bucket references it;
//	    (b) its ULID time is at least MinAge before the pass started. This
//	        protects an SST that is uploaded but whose manifest update has
//	        not landed. REQUIRES: whoever writes an SST (memtable flush,
//	        compaction executor) publishes it within MinAge of its ULID
//	        time, or never;
//	    (c) this GC has seen it unreferenced, on every pass, for at least
//	        MinAge. This keeps reads that began before a compaction working:
//	        REQUIRES: nobody reads through a manifest for longer than MinAge
//	        after a newer one replaced it. The timer starts only once (b)
//	        holds, so it never starts before the SST was published; a
//	        restarted GC starts its timers again, which is only slower.
//	G2. WAL. wal/<id>.sst is deleted only if id <= ReplayAfterWALID of the
//	    re-loaded latest manifest: its rows are in SSTs and replay starts
//	    after it. Nothing above is ever deleted. A batch object is deleted
//	    then; a fence, or an object whose header does not decode, only once
//	    it is FenceRetention old by its LastModified (see collectWALObject
//	    for why).
//	G3. Manifests. The newest KeepManifests are kept, the latest always,
//	    and only a prefix of the oldest ids is deleted, so ids stay dense
//	    above it. Manifest d also waits until its successor has been listed
//	    for MinAge: a process whose newest known manifest is older than d+1
//	    finds newer ones by probing id+1, id+2 … (manifest.Store.Refresh).
//	    Deleting the id it probes would make it believe it is up to date,
//	    and its next Update would create that id again, on top of a lost
//	    history. REQUIRES: every process refreshes its manifest at least
//	    once per MinAge.
//	G4. Names that do not parse are never touched. A delete that finds the
//	    object already gone is success. An error on one object is logged and
//	    counted and the pass goes on; the next pass retries. A pass stops
//	    between batches when its ctx ends.

// GCOptions configure the garbage collector. The zero value is valid after
// EnsureDefaults.
type GCOptions struct {
	// MinAge is how long an SST must exist and then stay unreferenced before
	// it is deleted, and how long a manifest's successor must be known
	// before it is (G1, G3). It must exceed the life of any read and the
	// time to publish an SST. Default 10 min.
	MinAge time.Duration
	// KeepManifests is how many of the newest manifests are never deleted.
	// Default 10.
	KeepManifests int
	// FenceRetention is how long a WAL fence object is kept after it was
	// written, even when its id is at or below ReplayAfterWALID: far longer
	// than a fenced writer can stay alive with a PUT in flight. Default 24 h.
	FenceRetention time.Duration
	// DeleteConcurrency is how many deletes (and WAL header reads) one batch
	// runs at once; a pass works batch by batch. Default 8.
	DeleteConcurrency int
	// Pacer, if set, makes a pass rest after each batch as long as the
	// batch took while the server it runs in is busy with clients (see
	// sst.Pacer). On a local disk a pass is CPU work: a minute of WAL
	// objects under 50 durable clients, 16-17k of them, took 1.3-1.9 s of
	// the server's one processor, and its clients' rate fell to
	// 0.09-0.36x of before while it ran; resting, the pass took 5-7 s and
	// the clients kept 0.66-1.01x. With an object store the rest halves a
	// busy server's pace of deletions, which stays well above the rate WAL
	// objects are written at (one per flush). Compactor.Open sets the
	// compactor's own Pacer here if this is nil.
	Pacer *sst.Pacer
	// sleep rests a pass; tests watch it. Default: a sleep ctx cuts short.
	sleep func(ctx context.Context, d time.Duration)
	// Now is the GC's clock; tests inject one. Default time.Now.
	Now func() time.Time
	// Logger receives the GC's logs. Default: discard.
	Logger *slog.Logger
}

// EnsureDefaults fills unset fields with their defaults.
func (o *GCOptions) EnsureDefaults() {
	if o.MinAge == 0 {
		o.MinAge = 10 * time.Minute
	}
	if o.KeepManifests == 0 {
		o.KeepManifests = 10
	}
	if o.FenceRetention == 0 {
		o.FenceRetention = 24 * time.Hour
	}
	if o.DeleteConcurrency == 0 {
		o.DeleteConcurrency = 8
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.sleep == nil {
		o.sleep = sleepCtx
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Validate reports the first unusable setting.
func (o *GCOptions) Validate() error {
	switch {
	case o.MinAge < 0:
		return fmt.Errorf("compactor: gc MinAge %v is negative", o.MinAge)
	case o.KeepManifests < 1:
		return fmt.Errorf("compactor: gc KeepManifests %d is below 1: the latest manifest is always kept", o.KeepManifests)
	case o.FenceRetention < 0:
		return fmt.Errorf("compactor: gc FenceRetention %v is negative", o.FenceRetention)
	case o.DeleteConcurrency < 1 || o.DeleteConcurrency > 1024:
		return fmt.Errorf("compactor: gc DeleteConcurrency %d outside [1, 1024]", o.DeleteConcurrency)
	case o.Now == nil || o.Logger == nil || o.sleep == nil:
		return errors.New("compactor: gc options without Now, Logger or sleep: call EnsureDefaults")
	}
	return nil
}

// GCStats count what garbage collection did: one pass from Run, or a sum.
type GCStats struct {
	Passes           uint64
	SSTsDeleted      uint64
	WALDeleted       uint64 // batch objects and expired fences
	ManifestsDeleted uint64
	SSTsReferenced   uint64 // listed SSTs a latest manifest references
	SSTsPending      uint64 // unreferenced SSTs kept until MinAge has passed (G1)
	WALKept          uint64 // WAL objects above ReplayAfterWALID, needed for replay
	FencesKept       uint64 // fences at or below ReplayAfterWALID kept for FenceRetention
	ManifestsKept    uint64
	Errors           uint64 // failed listings, stats, header reads and deletes; retried next pass
}

// addGCStats returns the field-wise sum of a and b.
func addGCStats(a, b GCStats) GCStats {
	return GCStats{
		Passes:           a.Passes + b.Passes,
		SSTsDeleted:      a.SSTsDeleted + b.SSTsDeleted,
		WALDeleted:       a.WALDeleted + b.WALDeleted,
		ManifestsDeleted: a.ManifestsDeleted + b.ManifestsDeleted,
		SSTsReferenced:   a.SSTsReferenced + b.SSTsReferenced,
		SSTsPending:      a.SSTsPending + b.SSTsPending,
		WALKept:          a.WALKept + b.WALKept,
		FencesKept:       a.FencesKept + b.FencesKept,
		ManifestsKept:    a.ManifestsKept + b.ManifestsKept,
		Errors:           a.Errors + b.Errors,
	}
}

// GC is the garbage collector of one bucket. Run passes one at a time
// (concurrent calls wait); between passes it remembers since when it has
// seen each SST unreferenced and each manifest listed.
type GC struct {
	bkt   objstore.Bucket
	store *manifest.Store
	opts  GCOptions

	// epoch, when set, is the compactor epoch this GC works for: a pass
	// whose manifest shows a newer compactor deletes nothing.
	epoch uint64

	mu                sync.Mutex // held by a pass; guards what follows
	unreferencedSince map[ulid.ULID]time.Time
	manifestSeen      map[uint64]time.Time
}

// NewGC returns a garbage collector of bkt, whose manifests store reads. o is
// completed with EnsureDefaults; Run reports it if it is invalid.
func NewGC(bkt objstore.Bucket, store *manifest.Store, o GCOptions) *GC {
	o.EnsureDefaults()
	return &GC{
		bkt:               bkt,
		store:             store,
		opts:              o,
		unreferencedSince: make(map[ulid.ULID]time.Time),
		manifestSeen:      make(map[uint64]time.Time),
	}
}

// Run makes one pass over the bucket. It returns an error if the latest
// manifest cannot be loaded (then it deletes nothing), if ctx ended
// (ctx.Err()), or if some objects failed (counted in Errors; the rest of the
// pass went on). The stats are valid in every case.
func (g *GC) Run(ctx context.Context) (GCStats, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.opts.Validate(); err != nil {
		return GCStats{}, err
	}
	p := &gcPass{g: g, start: g.opts.Now(), st: GCStats{Passes: 1}}
	first, err := g.store.Latest(ctx)
	if err != nil {
		return p.st, fmt.Errorf("compactor: gc: load latest manifest: %w", err)
	}
	ssts, sstsOK := p.list(ctx, blob.SSTDir)
	wals, walsOK := p.list(ctx, blob.WALDir)
	mans, mansOK := p.list(ctx, blob.ManifestDir)
	// Re-check after listing: anything published meanwhile is spared too.
	latest, err := g.store.Refresh(ctx, first)
	if err != nil {
		return p.st, fmt.Errorf("compactor: gc: reload latest manifest: %w", err)
	}
	// A fenced compactor's GC must stop: the newer compactor's outputs of
	// a long job are unreferenced until it publishes, and only the GC of
	// the compactor that writes them knows not to wait on them.
	if g.epoch != 0 {
		if err := manifest.CheckCompactor(latest, g.epoch); err != nil {
			return p.st, fmt.Errorf("%w: gc: %w", ErrFenced, err)
		}
	}
	// Observations made from here on are true at least as of now: timers
	// started at now never start before what they time.
	p.now = g.opts.Now()
	if sstsOK {
		p.collectSSTs(ctx, ssts, first, latest)
	}
	if walsOK {
		p.collectWAL(ctx, wals, latest)
	}
	if mansOK {
		p.collectManifests(ctx, mans, first)
	}
	return p.finish(ctx, latest)
}

// gcPass is the state of one Run.
type gcPass struct {
	g     *GC
	start time.Time // before anything was read: ages of objects are taken at start
	now   time.Time // after the manifest re-check: timers start and end at now

	mu       sync.Mutex // guards what follows against a batch's goroutines
	st       GCStats
	firstErr error
}

// list lists the names in dir. It reports false if the listing failed: a
// partial listing must not be taken for the whole (G1's timers would be
// dropped).
func (p *gcPass) list(ctx context.Context, dir string) ([]string, bool) {
	var names []string
	err := p.g.bkt.Iter(ctx, dir, func(name string) error {
		names = append(names, name)
		return nil
	})
	if err != nil {
		p.fail(ctx, "list", dir, err)
		return nil, false
	}
	return names, true
}

// collectSSTs deletes the SSTs G1 allows.
func (p *gcPass) collectSSTs(ctx context.Context, listed []string, first, latest *manifest.Manifest) {
	g := p.g
	referenced := make(map[ulid.ULID]bool)
	for _, m := range []*manifest.Manifest{first, latest} {
		for _, t := range m.AllSSTs() {
			referenced[t.ID] = true
		}
	}
	seen := make(map[ulid.ULID]bool, len(listed))
	var doomed []string
	for _, name := range listed {
		id, ok := blob.ParseSSTName(name)
		if !ok {
			continue
		}
		seen[id] = true
		switch {
		case referenced[id]:
			delete(g.unreferencedSince, id)
			p.st.SSTsReferenced++
		case p.start.Sub(ulid.Time(id.Time())) < g.opts.MinAge:
			p.st.SSTsPending++ // (b): its manifest update may still be on its way
		default:
			since, ok := g.unreferencedSince[id]
			if !ok {
				since = p.now
				g.unreferencedSince[id] = since
			}
			if p.now.Sub(since) < g.opts.MinAge {
				p.st.SSTsPending++ // (c): a reader may still hold a manifest with it
				continue
			}
			doomed = append(doomed, name)
		}
	}
	for id := range g.unreferencedSince {
		if !seen[id] {
			delete(g.unreferencedSince, id) // gone: deleted, by us or anyone
		}
	}
	gone := p.deleteAll(ctx, doomed, &p.st.SSTsDeleted)
	for i, name := range doomed {
		if id, _ := blob.ParseSSTName(name); gone[i] {
			delete(g.unreferencedSince, id)
		}
	}
}

// collectWAL deletes the WAL objects G2 allows, oldest first.
func (p *gcPass) collectWAL(ctx context.Context, listed []string, latest *manifest.Manifest) {
	type walObject struct {
		name string
		id   uint64
	}
	var candidates []walObject
	for _, name := range listed {
		id, ok := blob.ParseWALName(name)
		if !ok {
			continue
		}
		if id > latest.ReplayAfterWALID {
			p.st.WALKept++ // not yet in an SST: replay needs it
			continue
		}
		candidates = append(candidates, walObject{name, id})
	}
	slices.SortFunc(candidates, func(a, b walObject) int { return cmp.Compare(a.id, b.id) })
	forEachBatch(ctx, &p.g.opts, candidates, func(o walObject) { p.collectWALObject(ctx, o.name) })
}

// collectWALObject deletes a WAL object at or below ReplayAfterWALID, unless
// it is a fence younger than FenceRetention.
//
// Why fences wait: a writer fenced by a newer one may still be alive, with a
// WAL PUT in flight (a slow request, a retry loop, a paused process) to an id
// the new writer claimed with a fence. The fence is what makes that PUT fail:
// create-if-absent finds the id taken, and the old writer stops before
// acknowledging anything more. Once the new writer has flushed past the
// fence, ReplayAfterWALID is above it; deleting the fence then would free
// the id, the old writer's late PUT would succeed, and, its lower ids being
// stored, it would acknowledge a write that is in no SST and that no replay
// will ever read (replay starts after ReplayAfterWALID). Keeping fences for
// FenceRetention, far longer than any PUT lives and than an old writer takes
// to see the higher epoch in the manifest, closes that window. Batch objects
// need no such care: a writer stores each id once, so a batch object stored
// again after its deletion (a retried PUT) holds rows already in SSTs, below
// ReplayAfterWALID, and is collected by the next pass.
//
// A fence is exactly a WAL header long (wal.MayBeFence), so an object of
// any other size is deleted on its size alone; only one of a fence's size
// has its header read. On a local disk that is a stat instead of an open, a
// read and a close for almost every object a pass deletes.
func (p *gcPass) collectWALObject(ctx context.Context, name string) {
	bkt := p.g.bkt
	attrs, err := bkt.Attributes(ctx, name)
	switch {
	case err != nil && bkt.IsObjNotFoundErr(err):
		return // already gone
	case err != nil:
		p.fail(ctx, "stat", name, err)
		return
	case !wal.MayBeFence(attrs.Size):
		p.deleteOne(ctx, name, &p.st.WALDeleted)
		return
	}
	h, err := wal.ReadHeader(ctx, bkt, name)
	switch {
	case err == nil && !h.Fence:
		p.deleteOne(ctx, name, &p.st.WALDeleted)
		return
	case err != nil && bkt.IsObjNotFoundErr(err):
		return // already gone
	case err != nil && !errors.Is(err, sst.ErrCorruption):
		p.fail(ctx, "read header of", name, err)
		return
	case err != nil:
		// Not provably not a fence: keep it as long as one.
		p.g.opts.Logger.Warn("gc: wal object of a fence's size does not decode; kept like a fence", "object", name, "err", err)
	}
	modified := attrs.LastModified
	if modified.IsZero() || p.start.Sub(modified) < p.g.opts.FenceRetention {
		p.mu.Lock()
		p.st.FencesKept++
		p.mu.Unlock()
		return
	}
	p.deleteOne(ctx, name, &p.st.WALDeleted)
}

// collectManifests deletes the oldest manifests G3 allows.
func (p *gcPass) collectManifests(ctx context.Context, listed []string, first *manifest.Manifest) {
	g := p.g
	var ids []uint64
	for _, name := range listed {
		if id, ok := blob.ParseManifestName(name); ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	seen := make(map[uint64]time.Time, len(ids))
	for _, id := range ids {
		t, ok := g.manifestSeen[id]
		if !ok {
			t = p.now
		}
		seen[id] = t
	}
	g.manifestSeen = seen // drops ids no longer listed
	var doomed []string
	for i := 0; i < len(ids)-g.opts.KeepManifests; i++ {
		// ids[i+1] exists: at least KeepManifests >= 1 ids follow ids[i].
		if ids[i] >= first.ID || p.now.Sub(seen[ids[i+1]]) < g.opts.MinAge {
			break // only a prefix, so ids stay dense above what is deleted
		}
		doomed = append(doomed, blob.ManifestName(ids[i]))
	}
	p.st.ManifestsKept += uint64(len(ids) - len(doomed))
	p.deleteAll(ctx, doomed, &p.st.ManifestsDeleted)
}

// deleteAll deletes names in order, batch by batch, adding to *counter. It
// reports which names are gone.
func (p *gcPass) deleteAll(ctx context.Context, names []string, counter *uint64) []bool {
	gone := make([]bool, len(names))
	idx := make([]int, len(names))
	for i := range idx {
		idx[i] = i
	}
	forEachBatch(ctx, &p.g.opts, idx, func(i int) { gone[i] = p.deleteOne(ctx, names[i], counter) })
	return gone
}

// deleteOne deletes name and, if it is gone afterwards, adds one to
// *counter (under p.mu) and reports true.
func (p *gcPass) deleteOne(ctx context.Context, name string, counter *uint64) bool {
	err := p.g.bkt.Delete(ctx, name)
	if err != nil && !p.g.bkt.IsObjNotFoundErr(err) {
		p.fail(ctx, "delete", name, err)
		return false
	}
	p.mu.Lock()
	*counter++
	p.mu.Unlock()
	p.g.opts.Logger.Debug("gc: deleted", "object", name)
	return true
}

// forEachBatch calls fn on items in batches of o.DeleteConcurrency, the
// calls of one batch concurrently, rests after a batch as o.Pacer says, and
// stops between batches once ctx has ended.
func forEachBatch[T any](ctx context.Context, o *GCOptions, items []T, fn func(T)) {
	for len(items) > 0 && ctx.Err() == nil {
		n := min(o.DeleteConcurrency, len(items))
		start := time.Now()
		var wg sync.WaitGroup
		for _, it := range items[:n] {
			wg.Go(func() { fn(it) })
		}
		wg.Wait()
		items = items[n:]
		if now := time.Now(); len(items) > 0 && o.Pacer.Busy(now) {
			o.sleep(ctx, now.Sub(start))
		}
	}
}

// sleepCtx sleeps for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// fail records an error on one object. An error caused by ctx ending is not
// the object's fault and is not counted.
func (p *gcPass) fail(ctx context.Context, op, name string, err error) {
	if ctx.Err() != nil {
		return
	}
	p.g.opts.Logger.Warn("gc: "+op+" failed", "object", name, "err", err)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.st.Errors++
	if p.firstErr == nil {
		p.firstErr = fmt.Errorf("%s %s: %w", op, name, err)
	}
}

// finish logs the pass and returns its outcome.
func (p *gcPass) finish(ctx context.Context, latest *manifest.Manifest) (GCStats, error) {
	st := p.st
	level := slog.LevelDebug
	if st.SSTsDeleted+st.WALDeleted+st.ManifestsDeleted+st.Errors > 0 {
		level = slog.LevelInfo
	}
	p.g.opts.Logger.Log(ctx, level, "gc pass", "manifest", latest.ID,
		"replay_after_wal_id", latest.ReplayAfterWALID, "ssts_deleted", st.SSTsDeleted,
		"wal_deleted", st.WALDeleted, "manifests_deleted", st.ManifestsDeleted,
		"ssts_pending", st.SSTsPending, "fences_kept", st.FencesKept, "errors", st.Errors,
		"took", p.g.opts.Now().Sub(p.start))
	if err := ctx.Err(); err != nil {
		return st, err
	}
	if p.firstErr != nil {
		return st, fmt.Errorf("compactor: gc: %d operations failed, the first: %w", st.Errors, p.firstErr)
	}
	return st, nil
}
