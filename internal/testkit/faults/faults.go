// Package faults gates the long fault tests (a server killed -9 and
// waited for while it comes back) out of the default `go test`, whose time
// .ci/run must keep under 15 minutes on 2 busy cores: they run with
// GOBREAKPAD_FAULT_TESTS=1, and tools/scale/run.sh exercises the same
// faults end to end.
package faults

import (
	"os"
	"testing"
)

// Env is the environment variable that turns the long fault tests on.
const Env = "GOBREAKPAD_FAULT_TESTS"

// On reports whether the long fault tests run.
func On() bool { return os.Getenv(Env) != "" }

// Long skips tb, saying how to run it, unless the long fault tests run.
func Long(tb testing.TB, what string) {
	tb.Helper()
	if !On() {
		tb.Skipf("%s: a long fault test, run with %s=1", what, Env)
	}
}
