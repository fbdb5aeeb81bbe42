// Package cmdtest builds a program under test and runs it, for the tests of
// the cmd/... packages: exit status, stdout and stderr, as a user sees them.
package cmdtest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	mu    sync.Mutex
	dir   string
	built = map[string]string{}
)

// Main runs the tests of a package that uses Build and removes the built
// programs afterwards; call it from TestMain. The after functions run
// once the tests have run (to stop servers the package's tests share).
func Main(m *testing.M, after ...func()) {
	code := m.Run()
	for _, f := range after {
		f()
	}
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// Build builds the Go package pkg ("." for the package under test) once per
// test process and returns the program's path.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[pkg]; ok {
		return p
	}
	if dir == "" {
		d, err := os.MkdirTemp("", "cmdtest")
		if err != nil {
			t.Fatal(err)
		}
		dir = d
	}
	out := filepath.Join(dir, filepath.Base(pkg)+"-"+string(rune('a'+len(built))))
	if pkg == "." {
		wd, _ := os.Getwd()
		out = filepath.Join(dir, filepath.Base(wd))
	}
	if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	built[pkg] = out
	return out
}

// Result is what a run of a program gave.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Run runs the program with args and returns its outputs and exit status.
func Run(t testing.TB, prog string, args ...string) Result {
	t.Helper()
	return run(t, exec.Command(prog, args...))
}

// RunClean runs the program as Run does, in the caller's environment less
// the symbol server variables ($DEBUGINFOD_URLS, $_NT_SYMBOL_PATH), so that
// the machine's configuration stays out of the test, plus env ("NAME=value"
// entries).
func RunClean(t testing.TB, prog string, env []string, args ...string) Result {
	t.Helper()
	cmd := exec.Command(prog, args...)
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "DEBUGINFOD_URLS=") && !strings.HasPrefix(e, "_NT_SYMBOL_PATH=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	return run(t, cmd)
}

func run(t testing.TB, cmd *exec.Cmd) Result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", cmd.Path, err)
	}
	return Result{out.String(), errb.String(), code}
}
