//go:build unix && !linux

package integration

import "syscall"

// sysProcAttr puts a child in its own process group, which cleanup kills.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
