package manifest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/oklog/ulid/v2"
	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
)

func upload(t *testing.T, bkt objstore.Bucket, name string, data []byte) {
	t.Helper()
	if err := bkt.Upload(context.Background(), name, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
}

func TestLatestNone(t *testing.T) {
	ctx := context.Background()
	bkt := objstore.NewInMemBucket()
	upload(t, bkt, blob.ManifestDir+"notes.txt", []byte("not a manifest"))
	upload(t, bkt, blob.WALName(1), []byte("wal"))
	s := NewStore(bkt)
	if _, err := s.Latest(ctx); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Latest = %v, want ErrNotFound", err)
	}
	if _, err := s.Update(ctx, nil, func(*Manifest) error { return nil }); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Update(nil) = %v, want ErrNotFound", err)
	}
	if _, err := s.Load(ctx, 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Load = %v, want ErrNotFound", err)
	}
}

func TestCreateAndLatest(t *testing.T) {
	ctx := context.Background()
	bkt := objstore.NewInMemBucket()
	s := NewStore(bkt)
	for _, id := range []uint64{3, 1, 12, 2} {
		if err := s.Create(ctx, &Manifest{ID: id, LastSeq: id}); err != nil {
			t.Fatal(err)
		}
	}
	// A fresh store knows nothing and must list.
	got, err := NewStore(bkt).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != 12 || got.LastSeq != 12 {
		t.Fatalf("Latest = manifest %d, want 12", got.ID)
	}
	err = s.Create(ctx, &Manifest{ID: 3, LastSeq: 99})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("Create over an existing id = %v, want ErrConflict", err)
	}
	if m, _ := s.Load(ctx, 3); m.LastSeq != 3 {
		t.Fatal("a conflicting Create overwrote the manifest")
	}
}

func TestCreateInvalid(t *testing.T) {
	bkt := objstore.NewInMemBucket()
	bad := &Manifest{ID: 1, L0: []SST{{Stats: sst.Stats{MaxSeq: 5}}}} // max seq above last seq
	if err := NewStore(bkt).Create(context.Background(), bad); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Create = %v, want ErrInvalid", err)
	}
	if len(bkt.Objects()) != 0 {
		t.Fatal("an invalid manifest was written")
	}
}

func TestLatestCorruptNewest(t *testing.T) {
	ctx := context.Background()
	bkt := objstore.NewInMemBucket()
	s := NewStore(bkt)
	for id := uint64(1); id <= 2; id++ {
		if err := s.Create(ctx, &Manifest{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	enc := (&Manifest{ID: 3}).AppendEncoded(nil)
	enc[len(enc)/2] ^= 1
	upload(t, bkt, blob.ManifestName(3), enc)
	_, err := NewStore(bkt).Latest(ctx)
	if !errors.Is(err, sst.ErrCorruption) || !strings.Contains(err.Error(), blob.ManifestName(3)) {
		t.Fatalf("Latest = %v, want corruption of manifest 3, no fallback", err)
	}
	m2, _ := s.Load(ctx, 2)
	if _, err := s.Refresh(ctx, m2); !errors.Is(err, sst.ErrCorruption) {
		t.Fatalf("Refresh = %v, want corruption", err)
	}
}

func TestLoadIDMismatch(t *testing.T) {
	bkt := objstore.NewInMemBucket()
	upload(t, bkt, blob.ManifestName(5), (&Manifest{ID: 4}).AppendEncoded(nil))
	_, err := NewStore(bkt).Latest(context.Background())
	if !errors.Is(err, sst.ErrCorruption) || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("Latest = %v, want id mismatch corruption", err)
	}
}

func TestRefresh(t *testing.T) {
	ctx := context.Background()
	bkt := &countingBucket{Bucket: objstore.NewInMemBucket()}
	w := NewStore(bkt)
	if err := w.Create(ctx, &Manifest{ID: 1}); err != nil {
		t.Fatal(err)
	}
	r := NewStore(bkt)
	m1, err := r.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cur := m1
	for i := range 4 {
		if cur, err = w.Update(ctx, cur, func(m *Manifest) error { m.LastSeq++; return nil }); err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
	}
	bkt.iters.Store(0)
	bkt.gets.Store(0)
	got, err := r.Refresh(ctx, m1)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != 5 || got.LastSeq != 4 {
		t.Fatalf("Refresh = manifest %d last seq %d, want 5 and 4", got.ID, got.LastSeq)
	}
	if bkt.iters.Load() != 0 || bkt.gets.Load() != 5 {
		t.Fatalf("Refresh made %d lists and %d gets, want 0 and 5 (4 hits, 1 miss)", bkt.iters.Load(), bkt.gets.Load())
	}
	again, err := r.Refresh(ctx, got)
	if err != nil || again != got {
		t.Fatalf("Refresh at the newest = %v, %v; want the same manifest back", again, err)
	}
	// The store remembers what it saw: a stale cur still refreshes to 5.
	if m, err := r.Refresh(ctx, m1); err != nil || m.ID != 5 {
		t.Fatalf("Refresh(stale) = %v, %v", m, err)
	}
	if m, err := r.Refresh(ctx, nil); err != nil || m.ID != 5 {
		t.Fatalf("Refresh(nil) = %v, %v", m, err)
	}
}

func TestUpdate(t *testing.T) {
	ctx := context.Background()
	bkt := &countingBucket{Bucket: objstore.NewInMemBucket()}
	s := NewStore(bkt)
	m1 := &Manifest{ID: 1, LastSeq: 10, NextRunID: 1}
	if err := s.Create(ctx, m1); err != nil {
		t.Fatal(err)
	}
	bkt.gets.Store(0)
	m2, err := s.Update(ctx, m1, func(m *Manifest) error {
		m.ID = 999 // ignored: Update picks the id
		m.LastSeq = 20
		m.L0 = append([]SST{{ID: ulid.ULID{1}, Stats: sst.Stats{MaxSeq: 20}}}, m.L0...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if bkt.gets.Load() != 0 {
		t.Fatalf("an uncontended Update made %d gets, want 0", bkt.gets.Load())
	}
	if m2.ID != 2 || m2.LastSeq != 20 || len(m2.L0) != 1 {
		t.Fatalf("Update returned %+v", m2)
	}
	if m1.LastSeq != 10 || m1.L0 != nil {
		t.Fatal("Update modified its input")
	}
	stored, err := NewStore(bkt).Latest(ctx)
	if err != nil || !reflect.DeepEqual(stored, m2) {
		t.Fatalf("stored %+v, %v; want %+v", stored, err, m2)
	}

	// A stale cur: the store starts from manifest 2 and does not conflict.
	bkt.uploads.Store(0)
	m3, err := s.Update(ctx, m1, func(m *Manifest) error { m.NextWALID = 5; return nil })
	if err != nil || m3.ID != 3 || m3.LastSeq != 20 || bkt.uploads.Load() != 1 {
		t.Fatalf("Update(stale) = %+v, %v after %d uploads", m3, err, bkt.uploads.Load())
	}
}

func TestUpdateAbortsAndRefuses(t *testing.T) {
	ctx := context.Background()
	bkt := objstore.NewInMemBucket()
	s := NewStore(bkt)
	m1 := &Manifest{ID: 1, WriterEpoch: 1, LastSeq: 10, ClockTick: 100}
	if err := s.Create(ctx, m1); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	if _, err := s.Update(ctx, m1, func(*Manifest) error { return stop }); err != stop {
		t.Fatalf("Update = %v, want apply's error as is", err)
	}
	backwards := []func(*Manifest){
		func(m *Manifest) { m.LastSeq = 9 },
		func(m *Manifest) { m.ClockTick = 99 },
		func(m *Manifest) { m.WriterEpoch--; m.CompactorEpoch++ },
	}
	for i, f := range backwards {
		_, err := s.Update(ctx, m1, func(m *Manifest) error { f(m); return nil })
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("backwards change %d: err = %v, want ErrInvalid", i, err)
		}
	}
	_, err := s.Update(ctx, m1, func(m *Manifest) error {
		m.L0 = []SST{{Stats: sst.Stats{MaxSeq: 11}}}
		return nil
	})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("invalid change: err = %v, want ErrInvalid", err)
	}
	if _, err := s.Load(ctx, 2); !errors.Is(err, ErrNotFound) {
		t.Fatalf("manifest 2 exists after refused updates: %v", err)
	}
}

func TestUpdateGivesUp(t *testing.T) {
	ctx := context.Background()
	bkt := &countingBucket{Bucket: objstore.NewInMemBucket()}
	s := NewStore(bkt)
	if err := s.Create(ctx, &Manifest{ID: 1}); err != nil {
		t.Fatal(err)
	}
	bkt.alwaysConflict = true
	bkt.uploads.Store(0)
	s.maxAttempts = 5
	calls := 0
	_, err := s.Update(ctx, nil, func(*Manifest) error { calls++; return nil })
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "gave up after 5 attempts") {
		t.Fatalf("Update = %v, want bounded ErrConflict", err)
	}
	if calls != 5 || bkt.uploads.Load() != 5 {
		t.Fatalf("apply called %d times, %d uploads; want 5 and 5", calls, bkt.uploads.Load())
	}

	cctx, cancel := context.WithCancel(ctx)
	s.maxAttempts = maxUpdateAttempts
	_, err = s.Update(cctx, nil, func(*Manifest) error {
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Update with a cancelled context = %v", err)
	}
}

// Eight processes (separate Stores over one bucket) each add distinct L0
// SSTs; every addition survives the races, and the ids are dense.
func TestConcurrentUpdate(t *testing.T) {
	ctx := context.Background()
	bkt := objstore.NewInMemBucket()
	if err := NewStore(bkt).Create(ctx, &Manifest{ID: 1}); err != nil {
		t.Fatal(err)
	}
	const workers, perWorker = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := NewStore(bkt)
			var cur *Manifest
			for i := range perWorker {
				id := ulid.ULID{byte(w), byte(i)}
				next, err := s.Update(ctx, cur, func(m *Manifest) error {
					// Derive from the manifest given, as re-application requires.
					m.LastSeq++
					m.L0 = append([]SST{{ID: id, Stats: sst.Stats{MinSeq: m.LastSeq, MaxSeq: m.LastSeq}}}, m.L0...)
					return nil
				})
				if err != nil {
					errs <- fmt.Errorf("worker %d update %d: %w", w, i, err)
					return
				}
				if next.L0[0].ID != id {
					errs <- fmt.Errorf("worker %d: returned manifest lacks its sst", w)
					return
				}
				cur = next
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	s := NewStore(bkt)
	final, err := s.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	total := workers * perWorker
	if final.ID != uint64(total)+1 || len(final.L0) != total || final.LastSeq != uint64(total) {
		t.Fatalf("final manifest %d has %d L0 SSTs, last seq %d; want %d, %d, %d",
			final.ID, len(final.L0), final.LastSeq, total+1, total, total)
	}
	ids := map[ulid.ULID]bool{}
	for _, x := range final.L0 {
		ids[x.ID] = true
	}
	for w := range workers {
		for i := range perWorker {
			if !ids[ulid.ULID{byte(w), byte(i)}] {
				t.Fatalf("sst of worker %d update %d lost", w, i)
			}
		}
	}
	// Dense ids: every manifest from 1 to the final one exists and grew by one SST.
	var n int
	err = bkt.Iter(ctx, blob.ManifestDir, func(string) error { n++; return nil })
	if err != nil || n != total+1 {
		t.Fatalf("%d manifest objects, %v; want %d", n, err, total+1)
	}
	for id := uint64(1); id <= final.ID; id++ {
		m, err := s.Load(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.L0) != int(id-1) {
			t.Fatalf("manifest %d has %d L0 SSTs, want %d", id, len(m.L0), id-1)
		}
	}
}

// Two processes start from the same manifest; the loser of the race for id 2
// re-applies its change on the winner's manifest, keeping both changes.
func TestUpdateConflictReapplies(t *testing.T) {
	ctx := context.Background()
	bkt := &countingBucket{Bucket: objstore.NewInMemBucket()}
	writer, compactor := NewStore(bkt), NewStore(bkt)
	m1 := &Manifest{ID: 1, LastSeq: 5, NextRunID: 1, L0: []SST{{ID: ulid.ULID{1}, Stats: sst.Stats{MaxSeq: 5}}}}
	if err := writer.Create(ctx, m1); err != nil {
		t.Fatal(err)
	}
	seen, err := compactor.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Update(ctx, m1, func(m *Manifest) error {
		m.LastSeq = 9
		m.L0 = append([]SST{{ID: ulid.ULID{2}, Stats: sst.Stats{MaxSeq: 9}}}, m.L0...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	bkt.uploads.Store(0)
	var applied []uint64
	got, err := compactor.Update(ctx, seen, func(m *Manifest) error {
		applied = append(applied, m.ID)
		// Move L0 SST 1 into a new run, leaving any newer L0 SSTs alone.
		m.L0 = slices.DeleteFunc(m.L0, func(s SST) bool { return s.ID == ulid.ULID{1} })
		m.Runs = append([]Run{{ID: m.NextRunID, SSTs: []SST{{ID: ulid.ULID{3}, Stats: sst.Stats{MaxSeq: 5}}}}}, m.Runs...)
		m.NextRunID++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(applied, []uint64{1, 2}) || bkt.uploads.Load() != 2 {
		t.Fatalf("apply saw manifests %v with %d uploads; want [1 2] and 2", applied, bkt.uploads.Load())
	}
	if got.ID != 3 || got.LastSeq != 9 || len(got.L0) != 1 || got.L0[0].ID != (ulid.ULID{2}) || len(got.Runs) != 1 {
		t.Fatalf("merged manifest %+v lost a change", got)
	}
}
