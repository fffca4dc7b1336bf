package integration

import "syscall"

// sysProcAttr puts a child in its own process group, and makes the kernel
// kill it when the test process dies without cleaning up (a panic, a
// -timeout, a SIGKILL).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
