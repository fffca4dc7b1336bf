package wal

import (
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// shortTimerSys is a timerfd read by a goroutine parked in the runtime's
// poller, which forwards each expiry of the current arming to C.
//
// Its system calls are raw, as a socket's reads are: the writer arms and
// stops the timer around every PUT, and a call the scheduler is told about
// wakes its sysmon thread, which then polls every 20 µs for a millisecond
// or more (see blob/sysfile_linux.go): under appendfsync always that was
// several percent of the server's CPU.
type shortTimerSys struct {
	c    chan time.Time
	fd   int
	f    *os.File     // the timerfd, non-blocking: reads park in the poller
	due  atomic.Int64 // the current arming's expiry, ns since timerBase; 0: stopped
	done chan struct{}
	tm   *time.Timer // the fallback, when timerfd is unavailable or failed
}

// timerBase is the origin of the monotonic times shortTimers compare.
var timerBase = time.Now()

func (t *shortTimer) init() {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		t.tm = fallbackTimer()
		t.C = t.tm.C
		return
	}
	t.c = make(chan time.Time, 1)
	t.C = t.c
	t.fd, t.f = fd, os.NewFile(uintptr(fd), "timerfd")
	t.done = make(chan struct{})
	go t.forward()
}

// forward sends each expiry of the current arming to c, until the timerfd
// is closed. An expiry read after a Reset or Stop that followed it is
// dropped: its arming is not the current one, or the current one is not
// due yet.
func (t *shortTimer) forward() {
	defer close(t.done)
	var buf [8]byte
	rc, err := t.f.SyscallConn()
	if err != nil {
		return
	}
	var errno unix.Errno
	read := func(fd uintptr) bool {
		for {
			_, _, errno = unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
			if errno != unix.EINTR {
				return errno != unix.EAGAIN
			}
		}
	}
	for {
		if err := rc.Read(read); err != nil || errno != 0 {
			return // closed, or a read that fails would fail again
		}
		due := t.due.Load()
		if due == 0 || time.Since(timerBase) < time.Duration(due) {
			continue
		}
		select {
		case t.c <- time.Now():
		default:
		}
	}
}

// Reset arms the timer to fire once, d from now.
func (t *shortTimer) Reset(d time.Duration) {
	if t.tm != nil {
		t.tm.Reset(d)
		return
	}
	t.drain()
	d = max(d, time.Microsecond) // a zero it_value would disarm the timerfd
	t.due.Store(int64(time.Since(timerBase) + d))
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := timerfdSettime(t.fd, &spec); err != nil {
		// Never a wait without an end: the rest of this timer's life is
		// the runtime's timers.
		t.close()
		t.tm = fallbackTimer()
		t.C = t.tm.C
		t.tm.Reset(d)
	}
}

// timerfdSettime is timerfd_settime(2) with relative times, raw.
func timerfdSettime(fd int, spec *unix.ItimerSpec) error {
	_, _, e := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(fd), 0, uintptr(unsafe.Pointer(spec)), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// Stop disarms the timer and empties C.
func (t *shortTimer) Stop() {
	if t.tm != nil {
		t.tm.Stop()
		return
	}
	t.due.Store(0)
	var off unix.ItimerSpec
	_ = timerfdSettime(t.fd, &off) // a failure leaves an expiry forward drops
	t.drain()
}

func (t *shortTimer) drain() {
	select {
	case <-t.c:
	default:
	}
}

// Close stops the timer for good and releases its file and goroutine.
func (t *shortTimer) Close() {
	if t.tm != nil {
		t.tm.Stop()
	}
	t.close()
}

func (t *shortTimer) close() {
	if t.f != nil {
		t.due.Store(0)
		t.f.Close()
		<-t.done
		t.f = nil
	}
}
