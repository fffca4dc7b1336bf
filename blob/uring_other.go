//go:build !linux

package blob

import (
	"errors"
	"os"
)

// syncRing exists on Linux only; elsewhere journal files use fdatasync.
type syncRing struct{}

var errNoRing = errors.New("blob: io_uring unavailable")

func newSyncRing() (*syncRing, error)        { return nil, errNoRing }
func (*syncRing) fdatasync(f *os.File) error { return fdatasync(f) }
func (*syncRing) close()                     {}
