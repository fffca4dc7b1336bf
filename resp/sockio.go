package resp

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// sockIO reads and writes a client's socket with raw system calls, through
// the runtime's poller only when the socket is not ready.
//
// A Go syscall tells the scheduler it may block: if it lasts longer than a
// sysmon tick (20µs), as a loopback write that delivers the bytes to the
// reader in the same call often does, sysmon hands the goroutine's P to
// another thread, and the caller must find a P again when the call returns:
// futex wakeups and thread switches on every reply. A socket is
// non-blocking, so read and write never wait: they return EAGAIN, and only
// then is the goroutine parked, by the poller, as net.Conn would park it.
// Profiled under 50 unpipelined clients, sysmon and the handoffs it caused
// were a tenth of the server's CPU.
//
// Deadlines, Close and errors behave as net.Conn's: RawConn's Read and Write
// hold the descriptor, check deadlines and wait for readiness.
type sockIO struct {
	rc  syscall.RawConn
	net string
	la  net.Addr
	ra  net.Addr
}

// newSockIO returns raw socket I/O for nc, or nc itself if it is not a
// socket (TLS, pipes in tests).
func newSockIO(nc net.Conn) io.ReadWriter {
	sc, ok := nc.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return nc
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nc
	}
	return &sockIO{rc: rc, net: nc.LocalAddr().Network(), la: nc.LocalAddr(), ra: nc.RemoteAddr()}
}

func (s *sockIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := s.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			if e == syscall.EINTR {
				continue
			}
			if e != 0 {
				n, errno = 0, e
			} else {
				n, errno = int(r), 0
			}
			return e != syscall.EAGAIN
		}
	})
	switch {
	case err != nil:
		return 0, s.opError("read", err)
	case errno != 0:
		return 0, s.opError("read", os.NewSyscallError("read", errno))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write writes all of p, as net.Conn's Write does, unless an error stops it.
func (s *sockIO) Write(p []byte) (int, error) {
	done := 0
	var errno syscall.Errno
	err := s.rc.Write(func(fd uintptr) bool {
		for done < len(p) {
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[done])), uintptr(len(p)-done))
			switch e {
			case 0:
				done += int(r)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return done, s.opError("write", err)
	case errno != 0:
		return done, s.opError("write", os.NewSyscallError("write", errno))
	}
	return done, nil
}

func (s *sockIO) opError(op string, err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) {
		err = oe.Err // RawConn's own, with op raw-read or raw-write
	}
	return &net.OpError{Op: op, Net: s.net, Source: s.la, Addr: s.ra, Err: err}
}
