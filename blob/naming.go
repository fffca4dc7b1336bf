package blob

import (
	"crypto/rand"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// All object names of a Strata bucket are made and parsed here, in pairs.
//
//	manifest/<20-digit id>.manifest   one per manifest version, never overwritten
//	wal/<20-digit id>.sst             one per WAL flush, ids dense and increasing
//	sst/<ULID>.sst                    L0 and sorted-run SSTs (the ULID time is used by GC)
const (
	ManifestDir = "manifest/"
	WALDir      = "wal/"
	SSTDir      = "sst/"

	manifestExt = ".manifest"
	sstExt      = ".sst"
)

// ManifestName returns the object name of manifest id.
func ManifestName(id uint64) string { return fmt.Sprintf("%s%020d%s", ManifestDir, id, manifestExt) }

// ParseManifestName parses a name made by ManifestName. It accepts the name
// with or without a leading bucket prefix, as Iter returns it.
func ParseManifestName(name string) (uint64, bool) { return parseID(name, ManifestDir, manifestExt) }

// WALName returns the object name of WAL object id.
func WALName(id uint64) string { return fmt.Sprintf("%s%020d%s", WALDir, id, sstExt) }

// ParseWALName parses a name made by WALName.
func ParseWALName(name string) (uint64, bool) { return parseID(name, WALDir, sstExt) }

// SSTName returns the object name of the SST with the given id.
func SSTName(id ulid.ULID) string { return SSTDir + id.String() + sstExt }

// ParseSSTName parses a name made by SSTName.
func ParseSSTName(name string) (ulid.ULID, bool) {
	base, ok := cut(name, SSTDir, sstExt)
	if !ok {
		return ulid.ULID{}, false
	}
	id, err := ulid.ParseStrict(base)
	// ULIDs parse case-insensitively; only SSTName's upper case is a name
	// of ours, so one id never has two objects.
	return id, err == nil && id.String() == base
}

var (
	sstIDMu      sync.Mutex
	sstIDEntropy = ulid.Monotonic(rand.Reader, 0)
)

// NewSSTID returns a new, unique, time-ordered SST id.
func NewSSTID() ulid.ULID {
	sstIDMu.Lock()
	defer sstIDMu.Unlock()
	return ulid.MustNew(ulid.Timestamp(time.Now()), sstIDEntropy)
}

func parseID(name, dir, ext string) (uint64, bool) {
	base, ok := cut(name, dir, ext)
	if !ok || len(base) != 20 {
		return 0, false
	}
	id, err := strconv.ParseUint(base, 10, 64)
	return id, err == nil
}

// cut returns the base of name between its directory and extension, allowing
// any bucket prefix before the directory.
func cut(name, dir, ext string) (string, bool) {
	i := strings.LastIndex(name, dir)
	if i < 0 || (i > 0 && name[i-1] != '/') || !strings.HasSuffix(name, ext) {
		return "", false
	}
	base := name[i+len(dir) : len(name)-len(ext)]
	if base == "" || strings.Contains(base, "/") {
		return "", false
	}
	return base, true
}
