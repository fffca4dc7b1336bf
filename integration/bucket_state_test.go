package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/manifest"
	"github.com/stratakv/strata/wal"
)

// maxHeaderReads bounds the WAL headers inspectBucket reads to tell fences
// from batch objects; with more objects below the replay point than this,
// garbage collection is plainly not done.
const maxHeaderReads = 64

// bucketState is what a bucket holds, measured against its latest manifest.
type bucketState struct {
	manifestID, compactorEpoch uint64
	replayAfter                uint64 // the manifest's ReplayAfterWALID

	manifests    int
	ssts         int // objects under sst/
	referenced   int // SSTs the latest manifest lists
	unreferenced int // objects under sst/ it does not list
	missing      int // SSTs it lists that do not exist

	wal      int // objects under wal/
	walBelow int // of them with id <= replayAfter: collectable unless fences
	fences   int // of walBelow, fences (kept for a day); -1: not read
}

// settled reports whether garbage collection has done all it can: no
// unreferenced SST, no batch WAL object at or below the replay point, no
// more manifests than the GC keeps.
func (b bucketState) settled() bool {
	return b.unreferenced == 0 && b.missing == 0 && b.fences == b.walBelow && b.manifests <= keepManifests
}

func (b bucketState) String() string {
	fences := fmt.Sprint(b.fences)
	if b.fences < 0 {
		fences = "not read"
	}
	return fmt.Sprintf("manifest %d (compactor epoch %d), %d manifests; sst/: %d objects, %d referenced, "+
		"%d unreferenced, %d referenced but missing; wal/: %d objects, %d at or below replay_after_wal_id %d (fences: %s)",
		b.manifestID, b.compactorEpoch, b.manifests, b.ssts, b.referenced, b.unreferenced, b.missing,
		b.wal, b.walBelow, b.replayAfter, fences)
}

// inspectBucket measures the bucket, failing the test on errors.
func inspectBucket(t *testing.T, bkt objstore.Bucket) bucketState {
	t.Helper()
	b, err := measure(t.Context(), bkt)
	if err != nil {
		t.Fatalf("inspecting the bucket: %v", err)
	}
	return b
}

func measure(ctx context.Context, bkt objstore.Bucket) (bucketState, error) {
	latest, err := manifest.NewStore(bkt).Latest(ctx)
	if err != nil {
		return bucketState{}, err
	}
	b := bucketState{manifestID: latest.ID, compactorEpoch: latest.CompactorEpoch, replayAfter: latest.ReplayAfterWALID}
	refs := make(map[ulid.ULID]bool)
	for _, s := range latest.AllSSTs() {
		refs[s.ID] = true
		ok, err := bkt.Exists(ctx, blob.SSTName(s.ID))
		if err != nil {
			return b, err
		}
		if !ok {
			b.missing++
		}
	}
	b.referenced = len(refs)
	err = bkt.Iter(ctx, blob.SSTDir, func(name string) error {
		if id, ok := blob.ParseSSTName(name); ok {
			b.ssts++
			if !refs[id] {
				b.unreferenced++
			}
		}
		return nil
	})
	if err != nil {
		return b, err
	}
	err = bkt.Iter(ctx, blob.ManifestDir, func(name string) error {
		if _, ok := blob.ParseManifestName(name); ok {
			b.manifests++
		}
		return nil
	})
	if err != nil {
		return b, err
	}
	return b, countWAL(ctx, bkt, &b)
}

// countWAL counts the WAL objects, and the fences among those at or below
// the replay point.
func countWAL(ctx context.Context, bkt objstore.Bucket, b *bucketState) error {
	ids, err := wal.ListIDs(ctx, bkt)
	if err != nil {
		return err
	}
	b.wal = len(ids)
	var below []uint64
	for _, id := range ids {
		if id <= b.replayAfter {
			below = append(below, id)
		}
	}
	b.walBelow = len(below)
	if len(below) > maxHeaderReads {
		b.fences = -1
		return nil
	}
	for _, id := range below {
		h, err := wal.ReadHeader(ctx, bkt, blob.WALName(id))
		if bkt.IsObjNotFoundErr(err) {
			b.walBelow-- // collected since the listing
			continue
		}
		if err != nil {
			return err
		}
		if h.Fence {
			b.fences++
		}
	}
	return nil
}

// waitForGC waits, the writes having stopped at loadEnd, until the
// compactor's garbage collection has deleted all it may, and returns the
// bucket then.
func waitForGC(t *testing.T, bkt objstore.Bucket, comp *child, loadEnd time.Time) bucketState {
	t.Helper()
	for {
		b := inspectBucket(t, bkt)
		if b.missing > 0 {
			t.Errorf("the latest manifest references %d SSTs that are not in the bucket: %s", b.missing, b)
		}
		if b.settled() || b.missing > 0 {
			return b
		}
		if !comp.running() {
			t.Errorf("the compactor exited (%v) before the bucket settled: %s", comp.cmd.ProcessState, b)
			return b
		}
		if time.Since(loadEnd) > gcSettle {
			why := ""
			if strings.Contains(comp.out.String(), "too close to the GC minimum age") {
				why = "\n(the compactor keeps dropping a job that takes longer than half --gc-min-age " +
					"and retrying it; each attempt leaves its outputs behind as garbage)"
			}
			t.Errorf("garbage collection did not settle within %v of the load's end: %s%s", gcSettle, b, why)
			return b
		}
		time.Sleep(500 * time.Millisecond)
	}
}
