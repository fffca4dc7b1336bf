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

	// The functions handed to RawConn, made once: a closure made per call
	// escapes through the interface, an allocation per read and per write.
	// Their arguments and results are these fields, the reader's and the
	// writer's apart (one goroutine reads, writes are serialized).
	readFn  func(fd uintptr) bool
	rbuf    []byte
	rn      int
	rerrno  syscall.Errno
	writeFn func(fd uintptr) bool
	tryFn   func(fd uintptr) bool
	wbuf    []byte
	wdone   int
	werrno  syscall.Errno
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
	s := &sockIO{rc: rc, net: nc.LocalAddr().Network(), la: nc.LocalAddr(), ra: nc.RemoteAddr()}
	s.readFn, s.writeFn, s.tryFn = s.readSome, s.writeAll, s.writeNow
	return s
}

func (s *sockIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.rbuf, s.rn, s.rerrno = p, 0, 0
	err := s.rc.Read(s.readFn)
	n, errno := s.rn, s.rerrno
	s.rbuf = nil
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

// readSome reads into s.rbuf; it reports false (wait for readiness) on
// EAGAIN.
func (s *sockIO) readSome(fd uintptr) bool {
	p := s.rbuf
	for {
		r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			s.rn, s.rerrno = 0, e
		} else {
			s.rn, s.rerrno = int(r), 0
		}
		return e != syscall.EAGAIN
	}
}

// Write writes all of p, waiting for the socket to drain when it is full.
func (s *sockIO) Write(p []byte) (int, error) { return s.write(p, s.writeFn) }

// tryWrite writes as much of p as the socket takes now, without waiting:
// n < len(p) with a nil error means the socket's buffer is full.
func (s *sockIO) tryWrite(p []byte) (int, error) { return s.write(p, s.tryFn) }

func (s *sockIO) write(p []byte, fn func(fd uintptr) bool) (int, error) {
	s.wbuf, s.wdone, s.werrno = p, 0, 0
	err := s.rc.Write(fn)
	done, errno := s.wdone, s.werrno
	s.wbuf = nil
	switch {
	case err != nil:
		return done, s.opError("write", err)
	case errno != 0:
		return done, s.opError("write", os.NewSyscallError("write", errno))
	}
	return done, nil
}

// writeNow is writeAll without the wait: done on EAGAIN too.
func (s *sockIO) writeNow(fd uintptr) bool {
	s.writeAll(fd)
	return true
}

// writeAll writes what is left of s.wbuf; it reports false (wait for
// readiness) on EAGAIN.
func (s *sockIO) writeAll(fd uintptr) bool {
	p := s.wbuf
	for s.wdone < len(p) {
		r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[s.wdone])), uintptr(len(p)-s.wdone))
		switch e {
		case 0:
			s.wdone += int(r)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			s.werrno = e
			return true
		}
	}
	return true
}

func (s *sockIO) opError(op string, err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) {
		err = oe.Err // RawConn's own, with op raw-read or raw-write
	}
	return &net.OpError{Op: op, Net: s.net, Source: s.la, Addr: s.ra, Err: err}
}
