//go:build unix

package tempdir

import (
	"os"
	"syscall"
)

// resume delivers sig again, its default action restored: the process
// dies of it.
func resume(sig os.Signal) {
	if s, ok := sig.(syscall.Signal); ok {
		syscall.Kill(os.Getpid(), s)
	}
	select {} // until the signal arrives
}
