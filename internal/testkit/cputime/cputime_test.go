package cputime

import (
	"runtime"
	"testing"
	"time"
)

// TestUsedGrows: spinning for 50 ms of wall time adds CPU time on Unix.
func TestUsedGrows(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("not measured here")
	}
	t0 := Used()
	x := 0
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
		x++
	}
	if d := Used() - t0; d < 10*time.Millisecond {
		t.Errorf("50 ms of spinning (%d turns) added %v of CPU time", x, d)
	}
}
