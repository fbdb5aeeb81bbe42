// Package cputime reads the CPU time the test process has used, for
// benchmarks that report CPU per operation: on a shared machine it is
// steadier than wall time.
package cputime

import "time"

// Used is the CPU time (user and system, every thread) the process has
// used so far; 0 where it is not measured (not a Unix system).
func Used() time.Duration { return used() }
