//go:build !linux

package blob

import (
	"os"
	"syscall"
)

// Off Linux these are the ordinary system calls (see sysfile_linux.go).

func openRaw(path string, flags int, perm uint32) (int, error) {
	fd, err := syscall.Open(path, flags|syscall.O_CLOEXEC, perm)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return fd, nil
}

func writeFull(fd int, p []byte, off int64) error {
	for len(p) > 0 {
		var n int
		var err error
		if off < 0 {
			n, err = syscall.Write(fd, p)
		} else {
			n, err = syscall.Pwrite(fd, p, off)
		}
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		p = p[n:]
		if off >= 0 {
			off += int64(n)
		}
	}
	return nil
}

func writeFull2(fd int, a, b []byte, off int64) error {
	if err := writeFull(fd, a, off); err != nil {
		return err
	}
	return writeFull(fd, b, off+int64(len(a)))
}

func closeFd(fd int) error { return syscall.Close(fd) }

func truncateFd(fd int, n int64) error { return syscall.Ftruncate(fd, n) }

// fsBlockSize assumes 4 KiB blocks: a smaller real block only makes a
// recycled file's truncation free a few blocks (local_temps.go).
func fsBlockSize(string) int64 { return 4096 }
