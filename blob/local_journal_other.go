//go:build !linux

package blob

import (
	"errors"
	"os"
)

// journalSupported is false off Linux: a LocalBucket makes every upload
// durable by itself (fsync of the file and of its directory).
const journalSupported = false

var errNoJournal = errors.New("blob: no local journal on this platform")

func fdatasync(f *os.File) error           { return f.Sync() }
func renameNoReplace(string, string) error { return errNoRenameNoReplace }
func syncFS(*os.File) error                { return errNoJournal }
func lockFile(*os.File, bool) error        { return errNoJournal }
