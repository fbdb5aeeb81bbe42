// Package tempdir makes temporary directories that do not outlive the
// process when it is stopped by a signal: a program killed (SIGTERM,
// SIGINT, SIGHUP) while it extracts a cabinet into one must not leave the
// extracted file behind (issue 31: dump_syms left /tmp/dump_syms-cab-*,
// 6.5 MB, on SIGTERM).
//
// Make registers the directory; on one of those signals every registered
// directory is removed and the signal's default action resumed (the
// process dies of the same signal, with the same exit status as before).
// Remove removes a directory and forgets it.
//
// It is for the command-line programs only: the first Make takes over the
// default action of those signals (signal.Notify), so a process with its
// own shutdown on SIGTERM (a server: crashd) must not use it, nor a library
// package call it (symbols/cache's temporary files are removed by their
// writers instead).
package tempdir

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

var (
	mu      sync.Mutex
	dirs    = map[string]bool{}
	watched bool
)

// signals are the signals that clean up.
var signals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP}

// Make creates a new temporary directory as os.MkdirTemp("", pattern)
// does, removed on SIGTERM, SIGINT and SIGHUP until Remove is called.
func Make(pattern string) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return "", err
	}
	mu.Lock()
	defer mu.Unlock()
	dirs[dir] = true
	if !watched {
		watched = true
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, signals...)
		go func() {
			sig := <-ch
			mu.Lock()
			for d := range dirs {
				os.RemoveAll(d)
			}
			// Held: no directory is made or removed any more.
			signal.Reset(signals...)
			resume(sig)
		}()
	}
	return dir, nil
}

// Remove removes dir and everything in it, and forgets it.
func Remove(dir string) error {
	mu.Lock()
	delete(dirs, dir)
	mu.Unlock()
	return os.RemoveAll(dir)
}
