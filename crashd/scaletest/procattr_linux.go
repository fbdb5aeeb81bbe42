package scaletest

import "syscall"

// ProcAttr puts a server in its own process group and has the kernel kill
// it when the process that started it dies (a test that panics or times
// out leaves no server behind).
func ProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
