//go:build unix && !linux

package scaletest

import "syscall"

// ProcAttr puts a server in its own process group.
func ProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
