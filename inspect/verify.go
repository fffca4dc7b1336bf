package inspect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/manifest"
	"github.com/stratakv/strata/wal"
)

// VerifyOptions configure Verify.
type VerifyOptions struct {
	// Concurrency is how many objects are read at once. Default 8.
	Concurrency int
	// Progress, if set, is called once before the first object is read and
	// after each one, never concurrently.
	Progress func(Progress)
}

// Progress is how far Verify has got.
type Progress struct {
	Done, Total int   // objects
	Bytes       int64 // read so far
}

// Problem is an object that is missing, corrupt, or disagrees with the
// manifest.
type Problem struct {
	Object string
	Err    error
}

func (p Problem) String() string { return p.Object + ": " + p.Err.Error() }

// VerifyReport is what Verify found.
type VerifyReport struct {
	ManifestID uint64 // 0 if the latest manifest did not load
	SSTs, WALs int    // objects checked, besides the manifest
	Bytes      int64  // read in all
	Rows       uint64 // decoded in all
	Problems   []Problem
	// Torn are damaged WAL objects that make a torn tail (wal.Replay): the
	// last objects a writer stored before a power loss, never acknowledged,
	// which a server's replay skips. They are not Problems.
	Torn []Problem
}

// OK reports whether every object verified.
func (r *VerifyReport) OK() bool { return len(r.Problems) == 0 }

// Verify reads every object the latest manifest needs and checks it whole:
// the manifest itself, every SST it references (every block checksum, the
// row order, the size and stats the manifest records) and every WAL object
// not yet replayed into SSTs (above replay_after_wal_id). A problem with one
// object is recorded and the others are still checked. Verify returns an
// error only if there is no manifest or the bucket cannot be listed.
func Verify(ctx context.Context, bkt objstore.Bucket, o VerifyOptions) (*VerifyReport, error) {
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	rep := &VerifyReport{}
	ids, err := manifestIDs(ctx, bkt)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w: no manifest in %s", manifest.ErrNotFound, blob.ManifestDir)
	}
	// The newest manifest is the one a server would open: no falling back to
	// an older one if it is damaged (manifest.Store.Latest does not either).
	latest := ids[len(ids)-1]
	m, err := manifest.NewStore(bkt).Load(ctx, latest)
	if err != nil {
		if errors.Is(err, sst.ErrCorruption) {
			rep.Problems = append(rep.Problems, Problem{Object: blob.ManifestName(latest), Err: err})
			return rep, nil
		}
		return nil, err
	}
	rep.ManifestID = m.ID
	walIDs, err := wal.ListIDs(ctx, bkt)
	if err != nil {
		return nil, err
	}
	var jobs []func() (int64, uint64, error)
	var names []string
	for _, s := range m.AllSSTs() {
		names = append(names, blob.SSTName(s.ID))
		jobs = append(jobs, func() (int64, uint64, error) { return verifySST(ctx, bkt, s) })
		rep.SSTs++
	}
	var unreplayed []uint64
	for _, id := range walIDs {
		if id <= m.ReplayAfterWALID {
			continue
		}
		unreplayed = append(unreplayed, id)
		names = append(names, blob.WALName(id))
		jobs = append(jobs, func() (int64, uint64, error) { return verifyWAL(ctx, bkt, id) })
		rep.WALs++
	}
	rep.runJobs(names, jobs, o)
	rep.sortTorn(ctx, bkt, unreplayed)
	return rep, ctx.Err()
}

// sortTorn moves the damaged WAL objects that a replay of ids would skip as
// a torn tail from Problems to Torn. The replay reads the unreplayed WAL
// again, only when one of its objects is damaged; it stops at the first
// damage that is no torn tail (a Problem already).
func (rep *VerifyReport) sortTorn(ctx context.Context, bkt objstore.Bucket, ids []uint64) {
	damagedWAL := false
	for _, p := range rep.Problems {
		if _, ok := blob.ParseWALName(p.Object); ok && errors.Is(p.Err, sst.ErrCorruption) {
			damagedWAL = true
		}
	}
	if !damagedWAL {
		return
	}
	torn := map[string]bool{}
	_ = wal.ReplayTorn(ctx, bkt, ids, func(wal.Object) error { return nil }, func(skipped []uint64) {
		for _, id := range skipped {
			torn[blob.WALName(id)] = true
		}
	})
	kept := rep.Problems[:0]
	for _, p := range rep.Problems {
		if torn[p.Object] && errors.Is(p.Err, sst.ErrCorruption) {
			rep.Torn = append(rep.Torn, p)
		} else {
			kept = append(kept, p)
		}
	}
	rep.Problems = kept
}

// runJobs runs the object checks on o.Concurrency workers, recording
// problems in object order.
func (rep *VerifyReport) runJobs(names []string, jobs []func() (int64, uint64, error), o VerifyOptions) {
	var (
		mu   sync.Mutex
		errs = make([]error, len(jobs))
		prog = Progress{Total: len(jobs) + 1, Done: 1} // the manifest is read
		next = make(chan int)
		wg   sync.WaitGroup
	)
	report := func() {
		if o.Progress != nil {
			o.Progress(prog)
		}
	}
	report()
	for range min(o.Concurrency, len(jobs)) {
		wg.Go(func() {
			for i := range next {
				n, rows, err := jobs[i]()
				mu.Lock()
				errs[i] = err
				prog.Done++
				prog.Bytes += n
				rep.Bytes += n
				rep.Rows += rows
				report()
				mu.Unlock()
			}
		})
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			rep.Problems = append(rep.Problems, Problem{Object: names[i], Err: err})
		}
	}
}

// verifySST reads one SST whole and checks it against the manifest's
// record of it. It returns the bytes read and rows decoded.
func verifySST(ctx context.Context, bkt objstore.Bucket, s manifest.SST) (int64, uint64, error) {
	name := blob.SSTName(s.ID)
	data, err := readObject(ctx, bkt, name)
	if err != nil {
		return 0, 0, err
	}
	n := int64(len(data))
	if uint64(n) != s.Size {
		return n, 0, fmt.Errorf("%w: %s is %d bytes, the manifest says %d", sst.ErrCorruption, name, n, s.Size)
	}
	rows, st, err := sst.DecodeAll(data, name)
	if err != nil {
		return n, 0, err
	}
	want := s.Stats
	if st.Entries != want.Entries || st.MinSeq != want.MinSeq || st.MaxSeq != want.MaxSeq ||
		!bytes.Equal(st.Smallest, want.Smallest) || !bytes.Equal(st.Largest, want.Largest) {
		return n, uint64(len(rows)), fmt.Errorf("%w: %s: stats disagree with the manifest's record", sst.ErrCorruption, name)
	}
	return n, uint64(len(rows)), nil
}

// verifyWAL reads one WAL object whole and decodes it.
func verifyWAL(ctx context.Context, bkt objstore.Bucket, id uint64) (int64, uint64, error) {
	name := blob.WALName(id)
	data, err := readObject(ctx, bkt, name)
	if err != nil {
		return 0, 0, err
	}
	_, _, rows, _, err := wal.DecodeObject(data, name)
	return int64(len(data)), uint64(len(rows)), err
}
