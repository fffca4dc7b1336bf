package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/oklog/ulid/v2"

	"github.com/stratakv/strata/lsm/sst"
)

// ErrInvalid is wrapped by Validate and by Store.Update when a manifest
// breaks an invariant; the Store refuses to write such a manifest.
var ErrInvalid = errors.New("manifest: invalid")

// SST is one SST object as the manifest lists it. Its object name is
// blob.SSTName(ID).
type SST struct {
	ID    ulid.ULID
	Size  uint64 // object size in bytes
	Stats sst.Stats
}

// Run is a sorted run: SSTs in key order whose key ranges do not overlap.
type Run struct {
	ID   uint64
	SSTs []SST
}

// Manifest is one version of the LSM's shape. A manifest loaded from or
// written to the Store is a value: never modify it in place; Clone it (Update
// does that for you).
type Manifest struct {
	ID             uint64 // equals the id in the object name
	WriterEpoch    uint64
	CompactorEpoch uint64

	ReplayAfterWALID uint64 // WAL objects with id <= this are entirely in SSTs
	NextWALID        uint64 // hint: where a writer starts looking for the next free WAL id
	LastSeq          uint64 // last seq contained in SSTs
	ClockTick        int64  // clock tick of the newest flushed row: the compaction clock
	NextRunID        uint64 // every run id is below this

	L0   []SST // newest first
	Runs []Run // newest first
}

// Clone returns a deep copy of m that shares no memory with it.
func (m *Manifest) Clone() *Manifest {
	c := *m
	c.L0 = cloneSSTs(m.L0)
	if m.Runs != nil {
		c.Runs = make([]Run, len(m.Runs))
		for i, r := range m.Runs {
			c.Runs[i] = Run{ID: r.ID, SSTs: cloneSSTs(r.SSTs)}
		}
	}
	return &c
}

func cloneSSTs(ssts []SST) []SST {
	c := slices.Clone(ssts)
	for i := range c {
		c[i].Stats.Smallest = bytes.Clone(c[i].Stats.Smallest)
		c[i].Stats.Largest = bytes.Clone(c[i].Stats.Largest)
	}
	return c
}

// AllSSTs returns every SST m references: L0 newest first, then each run's
// SSTs, runs newest first. The SSTs share memory with m.
func (m *Manifest) AllSSTs() []SST {
	n := len(m.L0)
	for _, r := range m.Runs {
		n += len(r.SSTs)
	}
	all := make([]SST, 0, n)
	all = append(all, m.L0...)
	for _, r := range m.Runs {
		all = append(all, r.SSTs...)
	}
	return all
}

// Validate checks the invariants every stored manifest keeps (doc.go,
// invariant 4). The error wraps ErrInvalid.
func (m *Manifest) Validate() error {
	seen := make(map[ulid.ULID]struct{}, len(m.L0))
	for i := range m.L0 {
		s := &m.L0[i]
		if err := m.validateSST(s, seen); err != nil {
			return fmt.Errorf("%w: l0[%d]: %v", ErrInvalid, i, err)
		}
		if i > 0 && m.L0[i-1].Stats.MaxSeq < s.Stats.MaxSeq {
			return fmt.Errorf("%w: l0 not newest first: l0[%d] max seq %d < l0[%d] max seq %d",
				ErrInvalid, i-1, m.L0[i-1].Stats.MaxSeq, i, s.Stats.MaxSeq)
		}
	}
	runIDs := make(map[uint64]struct{}, len(m.Runs))
	for i := range m.Runs {
		r := &m.Runs[i]
		if r.ID >= m.NextRunID {
			return fmt.Errorf("%w: run %d: id not below next run id %d", ErrInvalid, r.ID, m.NextRunID)
		}
		if _, dup := runIDs[r.ID]; dup {
			return fmt.Errorf("%w: run id %d listed twice", ErrInvalid, r.ID)
		}
		runIDs[r.ID] = struct{}{}
		for j := range r.SSTs {
			s := &r.SSTs[j]
			if err := m.validateSST(s, seen); err != nil {
				return fmt.Errorf("%w: run %d sst[%d]: %v", ErrInvalid, r.ID, j, err)
			}
			if j > 0 && bytes.Compare(r.SSTs[j-1].Stats.Largest, s.Stats.Smallest) >= 0 {
				return fmt.Errorf("%w: run %d: sst[%d] largest %q not below sst[%d] smallest %q",
					ErrInvalid, r.ID, j-1, r.SSTs[j-1].Stats.Largest, j, s.Stats.Smallest)
			}
		}
	}
	return nil
}

// validateSST checks one SST on its own and records its id in seen.
func (m *Manifest) validateSST(s *SST, seen map[ulid.ULID]struct{}) error {
	if _, dup := seen[s.ID]; dup {
		return fmt.Errorf("sst %s listed twice", s.ID)
	}
	seen[s.ID] = struct{}{}
	st := &s.Stats
	if bytes.Compare(st.Smallest, st.Largest) > 0 {
		return fmt.Errorf("sst %s: smallest %q > largest %q", s.ID, st.Smallest, st.Largest)
	}
	if st.MinSeq > st.MaxSeq {
		return fmt.Errorf("sst %s: min seq %d > max seq %d", s.ID, st.MinSeq, st.MaxSeq)
	}
	// A recovering writer continues numbering after LastSeq; an SST holding a
	// higher seq would let new writes hide behind older rows.
	if st.MaxSeq > m.LastSeq {
		return fmt.Errorf("sst %s: max seq %d > manifest last seq %d", s.ID, st.MaxSeq, m.LastSeq)
	}
	return nil
}

// validateSuccessor checks what may only grow from one manifest to the next
// (doc.go, invariant 5): a re-applied change computed from stale state would
// otherwise move the LSM backwards. The error wraps ErrInvalid.
func validateSuccessor(prev, next *Manifest) error {
	checks := []struct {
		name       string
		prev, next uint64
	}{
		{"writer epoch", prev.WriterEpoch, next.WriterEpoch},
		{"compactor epoch", prev.CompactorEpoch, next.CompactorEpoch},
		{"replay after wal id", prev.ReplayAfterWALID, next.ReplayAfterWALID},
		{"last seq", prev.LastSeq, next.LastSeq},
		{"next run id", prev.NextRunID, next.NextRunID},
	}
	for _, c := range checks {
		if c.next < c.prev {
			return fmt.Errorf("%w: manifest %d: %s went back from %d to %d", ErrInvalid, next.ID, c.name, c.prev, c.next)
		}
	}
	if next.ClockTick < prev.ClockTick {
		return fmt.Errorf("%w: manifest %d: clock tick went back from %d to %d", ErrInvalid, next.ID, prev.ClockTick, next.ClockTick)
	}
	return nil
}
