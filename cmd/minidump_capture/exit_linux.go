package main

import (
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// exitLike ends this process the way the program's status says it ended:
// with its exit code, or killed by its signal. For a signal, the default
// action is restored (the Go runtime handles SIGSEGV and friends itself) and
// the signal raised on this thread; core dumps are disabled first, since a
// core of this command would be no use.
func exitLike(ws syscall.WaitStatus) {
	if !ws.Signaled() {
		os.Exit(ws.ExitStatus())
	}
	sig := ws.Signal()
	runtime.LockOSThread()
	syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
	var sa struct {
		handler, flags, restorer uintptr
		mask                     uint64
	} // kernel struct sigaction, all zero: SIG_DFL
	syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&sa)), 0, unsafe.Sizeof(sa.mask), 0, 0)
	var set uint64 = 1 << (uint(sig) - 1)
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, 1 /* SIG_UNBLOCK */, uintptr(unsafe.Pointer(&set)), 0, 8, 0, 0)
	syscall.Tgkill(os.Getpid(), syscall.Gettid(), sig)
	time.Sleep(time.Second)
	os.Exit(128 + int(sig)) // the signal's default action was to ignore it
}

// forwardSignals passes SIGTERM and SIGHUP sent to this command on to the
// program, and keeps SIGINT and SIGQUIT from ending this command: the
// terminal sends those to the program as well, and this command must outlive
// it to report its status. The handlers are installed at once; the returned
// function starts forwarding to the program's pid.
func forwardSignals() func(pid int) {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGHUP)
	return func(pid int) {
		go func() {
			for sig := range ch {
				if sig == syscall.SIGTERM || sig == syscall.SIGHUP {
					syscall.Kill(pid, sig.(syscall.Signal))
				}
			}
		}()
	}
}
