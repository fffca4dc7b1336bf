package blobtest

import "syscall"

// Pdeathsig makes the kernel kill MinIO when the test process dies without
// running Cleanup (a panic, a -timeout, a SIGKILL).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
