package blob

import (
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// journalSupported reports whether LocalBucket can keep a journal here: it
// needs fdatasync, syncfs and flock.
const journalSupported = true

// fdatasync flushes f's data, and its metadata only where reading the data
// back needs it: on a preallocated, already written file, one data write and
// a cache flush.
func fdatasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if err != unix.EINTR {
			return err
		}
	}
}

// noRenameNoReplace is set once a file system refused RENAME_NOREPLACE:
// publishIfAbsent links from then on.
var noRenameNoReplace atomic.Bool

// renameNoReplace renames from to to unless to exists (fs.ErrExist), in
// one atomic step; errNoRenameNoReplace if the file system cannot.
func renameNoReplace(from, to string) error {
	if noRenameNoReplace.Load() {
		return errNoRenameNoReplace
	}
	for {
		err := renameat2(from, to, unix.RENAME_NOREPLACE) // raw: sysfile_linux.go
		switch err {
		case nil:
			return nil
		case unix.EINTR:
			continue
		case unix.EINVAL, unix.ENOSYS, unix.ENOTSUP:
			noRenameNoReplace.Store(true)
			return errNoRenameNoReplace
		}
		return &os.LinkError{Op: "renameat2", Old: from, New: to, Err: err}
	}
}

// syncFS flushes the whole file system holding f: every written file, name
// and directory on it.
func syncFS(f *os.File) error { return unix.Syncfs(int(f.Fd())) }

// lockFile takes an exclusive flock on f: blocking, or failing with
// errLocked if wait is false and another open file holds it.
func lockFile(f *os.File, wait bool) error {
	how := unix.LOCK_EX
	if !wait {
		how |= unix.LOCK_NB
	}
	for {
		err := unix.Flock(int(f.Fd()), how)
		switch err {
		case unix.EINTR:
			continue
		case unix.EWOULDBLOCK:
			return errLocked
		}
		return err
	}
}
