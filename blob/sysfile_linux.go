package blob

import (
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The system calls of a journaled upload (local_journal.go) and of the temp
// files it takes are made raw: without telling the Go scheduler, as socket
// reads and writes are. A call the scheduler is told about (entersyscall)
// wakes sysmon if it sleeps, and sysmon then polls every 20 µs for the
// next millisecond or more, preempting the one processor each time it
// wakes. Under appendfsync always the processor idles during every WAL
// fdatasync, so sysmon went to sleep and was woken again by the next PUT's
// first call hundreds of times a second: 8-10% of the server's CPU under
// 50 unpipelined clients of durable SETs, with a handoff of the processor
// to another thread whenever a call outlasted a sysmon tick.
//
// The calls made raw are short: page-cache writes of a few KB, a rename and
// an open in a directory in constant use, a close. Each holds its
// processor until it returns, as a page fault would; a disk stall that
// blocked one would stall that processor's goroutines with it, where the
// scheduler would have handed the processor on. Large uploads (SSTs) keep
// the os.File path. A journaled upload can still be up to journalMaxBody
// (a WAL object under everysec holds a burst of writes): writeFull writes
// it rawWriteChunk at a time and yields the processor in between.

// openRaw opens path with flags (O_CLOEXEC added), raw.
func openRaw(path string, flags int, perm uint32) (int, error) {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: path, Err: err}
	}
	for {
		fd, _, e := unix.RawSyscall6(unix.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(p)), uintptr(flags|unix.O_CLOEXEC), uintptr(perm), 0, 0)
		switch e {
		case 0:
			return int(fd), nil
		case unix.EINTR:
			continue
		}
		return -1, &os.PathError{Op: "open", Path: path, Err: e}
	}
}

// atFDCWD is AT_FDCWD as a system call argument.
var atFDCWD = func() uintptr { v := unix.AT_FDCWD; return uintptr(v) }()

// rawWriteChunk is the most writeFull hands one raw write: 128 KB into the
// page cache takes 15-30 µs here, about a sysmon tick, where a 1 MB write
// took 0.13-0.57 ms (under load), all of it with the processor held and
// every client goroutine queued on it waiting.
const rawWriteChunk = 128 << 10

// writeFull writes all of p at off (pwrite), or at the file offset if off
// is negative (write), raw, yielding the processor between chunks of
// rawWriteChunk.
func writeFull(fd int, p []byte, off int64) error {
	for len(p) > 0 {
		var n int
		var err error
		k := uintptr(min(len(p), rawWriteChunk))
		if off < 0 {
			n, err = rawWriteCall(unix.SYS_WRITE, fd, unsafe.Pointer(&p[0]), k, 0)
		} else {
			n, err = rawWriteCall(unix.SYS_PWRITE64, fd, unsafe.Pointer(&p[0]), k, uintptr(off))
		}
		if err != nil {
			return err
		}
		p = p[n:]
		if off >= 0 {
			off += int64(n)
		}
		if len(p) > 0 {
			runtime.Gosched()
		}
	}
	return nil
}

// rawWriteCall makes write, pwrite64 or pwritev of fd, raw (p is the
// buffer, or the iovec array, whose length is n), retrying it when a
// signal interrupts it. A regular file takes what it is given or fails, so
// a call that writes nothing is an I/O error. p is passed as a pointer, not
// a uintptr, so that it stays valid (and alive) up to the system call.
func rawWriteCall(trap uintptr, fd int, p unsafe.Pointer, n, off uintptr) (int, error) {
	for {
		w, _, e := unix.RawSyscall6(trap, uintptr(fd), uintptr(p), n, off, 0, 0)
		switch e {
		case 0:
			if w == 0 {
				return 0, unix.EIO
			}
			return int(w), nil
		case unix.EINTR:
			continue
		}
		return 0, e
	}
}

// writeFull2 writes a and then b at off, which must not be negative: one
// pwritev(2), raw, where writeFull would make a call for each (a journal
// record's header and body). Parts over rawWriteChunk together, or a short
// write's rest, go through writeFull.
func writeFull2(fd int, a, b []byte, off int64) error {
	if len(a) == 0 || len(b) == 0 || len(a)+len(b) > rawWriteChunk {
		if err := writeFull(fd, a, off); err != nil {
			return err
		}
		return writeFull(fd, b, off+int64(len(a)))
	}
	iov := [2]unix.Iovec{{Base: &a[0]}, {Base: &b[0]}}
	iov[0].SetLen(len(a))
	iov[1].SetLen(len(b))
	// pwritev's offset is split into two words; on 64-bit Linux the first
	// holds all of it.
	n, err := rawWriteCall(unix.SYS_PWRITEV, fd, unsafe.Pointer(&iov[0]), 2, uintptr(off))
	if err != nil {
		return err
	}
	if n < len(a) {
		return writeFull2(fd, a[n:], b, off+int64(n))
	}
	return writeFull(fd, b[n-len(a):], off+int64(n))
}

// closeFd closes fd, raw. Linux releases the descriptor even when close
// reports an error, so it is never retried.
func closeFd(fd int) error {
	if _, _, e := unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0); e != 0 {
		return e
	}
	return nil
}

// renameat2 is renameat2(2) of absolute or working-directory-relative
// paths, raw.
func renameat2(from, to string, flags uint) error {
	fp, err := unix.BytePtrFromString(from)
	if err != nil {
		return err
	}
	tp, err := unix.BytePtrFromString(to)
	if err != nil {
		return err
	}
	_, _, e := unix.RawSyscall6(unix.SYS_RENAMEAT2, atFDCWD, uintptr(unsafe.Pointer(fp)), atFDCWD, uintptr(unsafe.Pointer(tp)), uintptr(flags), 0)
	if e != 0 {
		return e
	}
	return nil
}

// truncateFd is ftruncate(2) of fd to n bytes, raw: for a recycled file
// cut to a new object's size within the blocks it holds, which frees none
// (local_temps.go), so the call is short.
func truncateFd(fd int, n int64) error {
	for {
		_, _, e := unix.RawSyscall(unix.SYS_FTRUNCATE, uintptr(fd), uintptr(n), 0)
		switch e {
		case 0:
			return nil
		case unix.EINTR:
			continue
		}
		return e
	}
}

// fsBlockSize is the block size of the file system holding path; 4096 if
// statfs(2) fails.
func fsBlockSize(path string) int64 {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil || st.Bsize <= 0 {
		return 4096
	}
	return int64(st.Bsize)
}
