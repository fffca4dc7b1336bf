package manifest

import (
	"errors"
	"fmt"
)

// ErrFenced means a newer writer or compactor has claimed the manifest: the
// caller must stop (doc.go, invariant 6).
var ErrFenced = errors.New("manifest: fenced")

// CheckWriter returns an error wrapping ErrFenced if a writer newer than the
// one holding epoch has claimed m. Call it first inside every writer apply
// function, so a change is never re-applied on top of a newer writer's
// manifest.
func CheckWriter(m *Manifest, epoch uint64) error {
	if m.WriterEpoch > epoch {
		return fmt.Errorf("%w: writer epoch %d superseded by %d in manifest %d", ErrFenced, epoch, m.WriterEpoch, m.ID)
	}
	return nil
}

// CheckCompactor is CheckWriter for the compactor's epoch.
func CheckCompactor(m *Manifest, epoch uint64) error {
	if m.CompactorEpoch > epoch {
		return fmt.Errorf("%w: compactor epoch %d superseded by %d in manifest %d", ErrFenced, epoch, m.CompactorEpoch, m.ID)
	}
	return nil
}

// ClaimWriter bumps m's writer epoch and returns the new epoch, which fences
// every older writer once m is stored. Use it inside an Update apply
// function; if Update retries, the epoch claimed is the one of the manifest
// finally written, so take the value from the last call.
func ClaimWriter(m *Manifest) uint64 {
	m.WriterEpoch++
	return m.WriterEpoch
}

// ClaimCompactor is ClaimWriter for the compactor's epoch.
func ClaimCompactor(m *Manifest) uint64 {
	m.CompactorEpoch++
	return m.CompactorEpoch
}
