package manifest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
)

var (
	// ErrConflict means another process created the manifest id first.
	ErrConflict = errors.New("manifest: conflict")
	// ErrNotFound means the manifest (or any manifest at all) does not exist.
	ErrNotFound = errors.New("manifest: not found")
)

const (
	// maxUpdateAttempts bounds Update's conflict retries. Conflicts come from
	// the one writer and the one compactor racing, so a handful is normal and
	// dozens mean something is wrong.
	maxUpdateAttempts = 64
	// maxUpdateBackoff caps the jittered sleep between conflicting attempts,
	// which keeps contenders from colliding in lockstep.
	maxUpdateBackoff = 50 * time.Millisecond
)

// Store reads and writes manifests in a bucket. It is safe for concurrent
// use; it remembers the newest manifest it has seen, so a stale caller's
// Update starts from there instead of losing a race it could have avoided.
type Store struct {
	bkt         objstore.Bucket
	maxAttempts int // Update's bound; a field so tests can lower it

	mu     sync.Mutex
	newest *Manifest // private copy, never handed out; nil until one is seen
}

// NewStore returns a Store over bkt, which must support create-if-absent
// uploads (objstore.WithIfNotExists).
func NewStore(bkt objstore.Bucket) *Store {
	return &Store{bkt: bkt, maxAttempts: maxUpdateAttempts}
}

// Latest lists the manifest directory and loads the manifest with the
// highest id. If that manifest is corrupt, Latest returns the corruption
// error rather than falling back to an older one: older manifests may
// reference SSTs that garbage collection has since deleted. With no manifest
// in the bucket it returns an error wrapping ErrNotFound.
func (s *Store) Latest(ctx context.Context) (*Manifest, error) {
	var (
		highest uint64
		found   bool
	)
	err := s.bkt.Iter(ctx, blob.ManifestDir, func(name string) error {
		if id, ok := blob.ParseManifestName(name); ok && (!found || id > highest) {
			highest, found = id, true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("manifest: list %s: %w", blob.ManifestDir, err)
	}
	if !found {
		return nil, fmt.Errorf("%w: no manifest in %s", ErrNotFound, blob.ManifestDir)
	}
	return s.Load(ctx, highest)
}

// Load loads manifest id. It returns an error wrapping ErrNotFound if there is
// no such object, and one wrapping sst.ErrCorruption if the object does not
// decode or carries another id than its name.
func (s *Store) Load(ctx context.Context, id uint64) (*Manifest, error) {
	name := blob.ManifestName(id)
	rc, err := s.bkt.Get(ctx, name)
	if err != nil {
		if s.bkt.IsObjNotFoundErr(err) {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
		}
		return nil, fmt.Errorf("manifest: get %s: %w", name, err)
	}
	data, err := io.ReadAll(rc)
	if cerr := rc.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("manifest: read %s: %w", name, err)
	}
	m, err := Decode(data, name)
	if err != nil {
		return nil, err
	}
	if m.ID != id {
		// A manifest copied or renamed to another id would make Refresh and
		// Update reason about the wrong history.
		return nil, corruptf(name, headerLen, "manifest id %d does not match its name", m.ID)
	}
	s.observe(m)
	return m, nil
}

// Refresh returns the newest manifest with id >= cur.ID, found by probing
// cur.ID+1, cur.ID+2, … until one is missing: ids are dense, so no listing
// is needed. It starts from the newest manifest this Store has seen if that
// is newer than cur, and returns cur itself when nothing newer exists. A nil
// cur means Latest.
func (s *Store) Refresh(ctx context.Context, cur *Manifest) (*Manifest, error) {
	if cur == nil {
		return s.Latest(ctx)
	}
	best := s.newestKnown(cur)
	for {
		next, err := s.Load(ctx, best.ID+1)
		if errors.Is(err, ErrNotFound) {
			return best, nil
		}
		if err != nil {
			return nil, err
		}
		best = next
	}
}

// Create stores m at its id if no manifest has that id yet. It returns an
// error wrapping ErrConflict if one does, and one wrapping ErrInvalid,
// without writing, if m breaks an invariant.
func (s *Store) Create(ctx context.Context, m *Manifest) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("manifest: refusing to write manifest %d: %w", m.ID, err)
	}
	name := blob.ManifestName(m.ID)
	data := m.AppendEncoded(nil)
	err := s.bkt.Upload(ctx, name, bytes.NewReader(data), objstore.WithIfNotExists())
	if err != nil {
		if s.bkt.IsConditionNotMetErr(err) {
			return fmt.Errorf("%w: %s already exists", ErrConflict, name)
		}
		return fmt.Errorf("manifest: upload %s: %w", name, err)
	}
	s.observe(m)
	return nil
}

// Update writes the successor of the newest manifest known (cur, or a newer
// one this Store has seen; nil cur means Latest): it clones that manifest,
// calls apply on the clone, and creates it at id+1. If another process wins
// that id, Update refreshes and calls apply again on a clone of the newer
// manifest, up to a bounded number of attempts. apply must therefore derive
// its change from the manifest it is given (checking its epoch first, see
// CheckWriter) and touch only the fields its caller owns (doc.go, invariant
// 3). An error from apply aborts Update and is returned as is. Update returns
// the manifest it wrote. After any other error the write may or may not have
// taken effect; Refresh tells which.
func (s *Store) Update(ctx context.Context, cur *Manifest, apply func(*Manifest) error) (*Manifest, error) {
	base := s.newestKnown(cur)
	if base == nil {
		var err error
		if base, err = s.Latest(ctx); err != nil {
			return nil, err
		}
	}
	// The first attempt costs no read: probing for newer manifests is only
	// worth it once a conflict has shown there is one.
	for attempt := 0; attempt < s.maxAttempts; attempt++ {
		if attempt > 0 {
			if err := backoff(ctx, attempt); err != nil {
				return nil, err
			}
			var err error
			if base, err = s.Refresh(ctx, base); err != nil {
				return nil, err
			}
		}
		next := base.Clone()
		if err := apply(next); err != nil {
			return nil, err
		}
		next.ID = base.ID + 1
		if err := validateSuccessor(base, next); err != nil {
			return nil, err
		}
		err := s.Create(ctx, next)
		if err == nil {
			return next, nil
		}
		if !errors.Is(err, ErrConflict) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("manifest: update gave up after %d attempts: %w", s.maxAttempts, ErrConflict)
}

// backoff sleeps before retry attempt (1-based): not at all after the first
// conflict, which is the common and cheap case, then a jittered, growing
// delay.
func backoff(ctx context.Context, attempt int) error {
	if attempt < 2 {
		return ctx.Err()
	}
	limit := min(time.Millisecond<<min(attempt-2, 10), maxUpdateBackoff)
	t := time.NewTimer(rand.N(limit) + 1)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// observe remembers m if it is the newest manifest seen so far.
func (s *Store) observe(m *Manifest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.newest == nil || m.ID > s.newest.ID {
		s.newest = m.Clone()
	}
}

// newestKnown returns cur, or a copy of the newest manifest this Store has
// seen if that is newer. It is nil only if both are.
func (s *Store) newestKnown(cur *Manifest) *Manifest {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.newest != nil && (cur == nil || s.newest.ID > cur.ID) {
		return s.newest.Clone()
	}
	return cur
}
