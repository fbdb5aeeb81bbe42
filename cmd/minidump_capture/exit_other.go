//go:build !linux

package main

import (
	"os"
	"syscall"
)

// exitLike exits with the program's exit code, or 128 plus the signal that
// killed it, as a shell reports it.
func exitLike(ws syscall.WaitStatus) {
	if ws.Signaled() {
		os.Exit(128 + int(ws.Signal()))
	}
	os.Exit(ws.ExitStatus())
}

// forwardSignals forwards nothing: capture.Run does not run programs here.
func forwardSignals() func(pid int) { return func(int) {} }
