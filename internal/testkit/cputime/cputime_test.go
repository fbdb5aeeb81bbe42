package cputime

import (
	"runtime"
	"testing"
	"time"
)

// TestUsedGrows: spinning adds CPU time on Unix (10 ms of it within 10 s
// of wall time, however loaded the machine).
func TestUsedGrows(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("not measured here")
	}
	t0 := Used()
	for deadline := time.Now().Add(10 * time.Second); Used()-t0 < 10*time.Millisecond; {
		if time.Now().After(deadline) {
			t.Fatalf("10 s of spinning added %v of CPU time", Used()-t0)
		}
	}
}
