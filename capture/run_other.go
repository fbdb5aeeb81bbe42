//go:build !(linux && amd64)

package capture

import (
	"errors"
	"io"
	"runtime"
	"syscall"
)

// RunOptions configure [Run].
type RunOptions struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Env            []string
	OnCrash        func(*Process) error
	Started        func(pid int)
}

// Run is implemented for linux/amd64 only (which also traces 32-bit x86
// programs); elsewhere it reports that.
func Run(argv []string, opt RunOptions) (syscall.WaitStatus, error) {
	var none syscall.WaitStatus // an integer on Unix, a struct on Windows
	return none, errors.New("run: capturing live processes is supported on linux/amd64 only, not " + runtime.GOOS + "/" + runtime.GOARCH)
}
