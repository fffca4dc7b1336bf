package blob

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A syncRing runs fdatasync through an io_uring, so that the goroutine
// waiting for it parks in the network poller instead of blocking its thread
// in a system call.
//
// Why: a goroutine blocked in fdatasync keeps its thread, and the Go
// runtime's sysmon thread takes its processor away after 20 µs and hands it
// to another thread; with hundreds of group commits a second, each waiting
// ~0.5-1 ms, sysmon never backs off from its 20 µs polling and every sync
// costs a processor handoff. Through the ring, the kernel's io-wq worker does
// the fdatasync, and its completion signals an eventfd that the poller
// watches: the waiting goroutine is parked like one waiting on a socket.
//
// A ring holds one request at a time (callers serialize on mu); the journal
// keeps one ring per journal file, whose syncs its group commit already
// serializes. Where io_uring is missing or forbidden (old kernels, seccomp,
// io_uring_disabled), newSyncRing fails and callers use fdatasync(2).
type syncRing struct {
	mu   sync.Mutex
	fd   int
	ring []byte // SQ and CQ rings, one mapping (IORING_FEAT_SINGLE_MMAP)
	sqes []byte
	ev   *os.File // eventfd registered with the ring, nonblocking: polled
	// evConn reads ev raw (sysfile_linux.go); evRead, made once, is the
	// read it runs, with its result in evErr.
	evConn syscall.RawConn
	evRead func(fd uintptr) bool
	evBuf  [8]byte
	evErr  syscall.Errno

	sqTail, sqMask, cqHead, cqTail, cqMask *uint32
	sqArray                                unsafe.Pointer
	cqes                                   unsafe.Pointer
	seq                                    uint64        // user_data of the request in flight
	broken                                 bool          // the ring failed: plain fdatasync from then on
	wait                                   time.Duration // longest wait for a completion (ringWait)
}

// ringWait bounds a sync's wait for its ring's completion. Once, in a CI
// run, 15 syncs through new rings waited 24 minutes for completions that
// never came, and the test holding them timed out. Past this wait the ring
// is given up and the file synced by the system call, which makes it
// durable whatever became of the ring's request; a sync this slow is
// pathological anyway.
const ringWait = 10 * time.Second

// errRingStalled is a ring whose completion did not come within its wait.
var errRingStalled = errors.New("blob: io_uring completion overdue")

// io_uring ABI (include/uapi/linux/io_uring.h).
const (
	ioringOffSQRing        = 0
	ioringOffSQEs          = 0x10000000
	ioringFeatSingleMmap   = 1 << 0
	ioringOpFsync          = 3
	ioringFsyncDatasync    = 1 << 0
	ioringRegisterEventfd  = 4
	ioringSQESize          = 64
	ioringCQESize          = 16
	ioringParamsSize       = 120
	ioringSQOffHead        = 40 // offsets of struct io_uring_params fields
	ioringCQOffHead        = 80
	ioringParamsFeaturesAt = 20
)

var errNoRing = errors.New("blob: io_uring unavailable")

// noRing is set once io_uring setup failed: later files do not try again.
var noRing atomic.Bool

func newSyncRing() (*syncRing, error) {
	if noRing.Load() {
		return nil, errNoRing
	}
	r, err := setupSyncRing()
	if err != nil {
		noRing.Store(true)
		return nil, err
	}
	return r, nil
}

func setupSyncRing() (*syncRing, error) {
	var p [ioringParamsSize]byte
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 2, uintptr(unsafe.Pointer(&p[0])), 0)
	if errno != 0 {
		return nil, errno
	}
	r := &syncRing{fd: int(fd), wait: ringWait}
	u32 := func(off int) uint32 { return *(*uint32)(unsafe.Pointer(&p[off])) }
	sqEntries, cqEntries := u32(0), u32(4)
	if u32(ioringParamsFeaturesAt)&ioringFeatSingleMmap == 0 {
		r.close()
		return nil, errNoRing
	}
	// struct io_sqring_offsets: head, tail, ring_mask, ring_entries, flags,
	// dropped, array; struct io_cqring_offsets: head, tail, ring_mask,
	// ring_entries, overflow, cqes.
	sq := func(i int) uint32 { return u32(ioringSQOffHead + 4*i) }
	cq := func(i int) uint32 { return u32(ioringCQOffHead + 4*i) }
	size := max(int(sq(6))+int(sqEntries)*4, int(cq(5))+int(cqEntries)*ioringCQESize)
	ring, err := unix.Mmap(r.fd, ioringOffSQRing, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		r.close()
		return nil, err
	}
	r.ring = ring
	sqes, err := unix.Mmap(r.fd, ioringOffSQEs, int(sqEntries)*ioringSQESize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		r.close()
		return nil, err
	}
	r.sqes = sqes
	at := func(off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&ring[off])) }
	r.sqTail, r.sqMask, r.sqArray = at(sq(1)), at(sq(2)), unsafe.Pointer(&ring[sq(6)])
	r.cqHead, r.cqTail, r.cqMask, r.cqes = at(cq(0)), at(cq(1)), at(cq(2)), unsafe.Pointer(&ring[cq(5)])

	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		r.close()
		return nil, err
	}
	r.ev = os.NewFile(uintptr(efd), "io_uring eventfd")
	if r.evConn, err = r.ev.SyscallConn(); err != nil {
		r.close()
		return nil, err
	}
	r.evRead = r.readEvent
	e := int32(efd)
	if _, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), ioringRegisterEventfd, uintptr(unsafe.Pointer(&e)), 1, 0, 0); errno != 0 {
		r.close()
		return nil, errno
	}
	return r, nil
}

// fdatasync makes f's data durable, as fdatasync(2), through the ring. If
// the ring itself fails (not the fdatasync it ran), it is not used again:
// this call and later ones make the system call. A ring whose completion
// is overdue also stops new rings being made: a kernel that lost one may
// lose more.
func (r *syncRing) fdatasync(f *os.File) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.broken {
		res, err := r.run(f)
		if err == nil {
			if res < 0 {
				return unix.Errno(-res)
			}
			return nil
		}
		r.broken = true
		if errors.Is(err, errRingStalled) {
			noRing.Store(true)
		}
	}
	return fdatasync(f)
}

// run submits one IORING_OP_FSYNC (datasync) of f and waits, parked in the
// poller, for its completion; res is the kernel's result (0 or -errno).
func (r *syncRing) run(f *os.File) (res int32, err error) {
	r.seq++
	tail := atomic.LoadUint32(r.sqTail)
	i := tail & *r.sqMask
	sqe := r.sqes[i*ioringSQESize : (i+1)*ioringSQESize]
	clear(sqe)
	sqe[0] = ioringOpFsync
	*(*int32)(unsafe.Pointer(&sqe[4])) = int32(f.Fd())
	*(*uint32)(unsafe.Pointer(&sqe[28])) = ioringFsyncDatasync
	*(*uint64)(unsafe.Pointer(&sqe[32])) = r.seq
	*(*uint32)(unsafe.Add(r.sqArray, 4*uintptr(i))) = i
	atomic.StoreUint32(r.sqTail, tail+1)
	for {
		// Raw (sysfile_linux.go): the submission does not wait, since an
		// fsync request always goes to an io-wq worker.
		n, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), 1, 0, 0, 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return 0, errno
		}
		if n != 1 {
			return 0, errNoRing
		}
		break
	}
	return r.await()
}

// await waits, parked in the poller, for the completion of the request in
// flight (user_data r.seq), at most r.wait.
func (r *syncRing) await() (res int32, err error) {
	switch err := r.ev.SetReadDeadline(time.Now().Add(r.wait)); {
	case errors.Is(err, os.ErrNoDeadline): // not in the poller: wait unbounded
	case err != nil:
		return 0, err
	}
	for {
		head := atomic.LoadUint32(r.cqHead)
		if head != atomic.LoadUint32(r.cqTail) {
			c := unsafe.Add(r.cqes, uintptr(head&*r.cqMask)*ioringCQESize)
			data, res := *(*uint64)(c), *(*int32)(unsafe.Add(c, 8))
			atomic.StoreUint32(r.cqHead, head+1)
			if data == r.seq {
				return res, nil
			}
			continue // not ours: cannot happen, one request at a time
		}
		// The eventfd counts completions; it may still count one already
		// reaped, and then the loop reads again.
		r.evErr = 0
		if err := r.evConn.Read(r.evRead); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return 0, errRingStalled
			}
			return 0, err
		}
		if r.evErr != 0 {
			return 0, os.NewSyscallError("read", r.evErr)
		}
	}
}

// readEvent reads the eventfd's count, raw; false (wait in the poller)
// while it is zero.
func (r *syncRing) readEvent(fd uintptr) bool {
	for {
		_, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&r.evBuf[0])), uintptr(len(r.evBuf)))
		switch e {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		r.evErr = e
		return true
	}
}

func (r *syncRing) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ev != nil {
		r.ev.Close()
	}
	if r.sqes != nil {
		unix.Munmap(r.sqes)
	}
	if r.ring != nil {
		unix.Munmap(r.ring)
	}
	unix.Close(r.fd)
}
