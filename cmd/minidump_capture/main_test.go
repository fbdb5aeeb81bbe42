//go:build linux

package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
)

// The test binary doubles as the command: run with this variable set, it
// runs main instead of the tests.
const beCommand = "MINIDUMP_CAPTURE_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(beCommand) != "" {
		os.Args = append([]string{"minidump_capture"}, os.Args[1:]...)
		main()
		return
	}
	os.Exit(m.Run())
}

// runCommand runs this command with args and returns its wait status and
// standard error.
func runCommand(t *testing.T, args ...string) (syscall.WaitStatus, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), beCommand+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.Sys().(syscall.WaitStatus), stderr.String()
}

func crasher(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found: skipping")
	}
	out := filepath.Join(t.TempDir(), "crasher")
	src := filepath.Join(corpus.Root(), "testdata", "capture", "crasher.c")
	if b, err := exec.Command("gcc", "-O1", "-g", "-pthread", "-o", out, src).CombinedOutput(); err != nil {
		t.Skipf("cannot compile crasher.c: %v\n%s", err, b)
	}
	return out
}

// TestExitStatus checks that the command ends as the program did and writes
// a dump only for a crash.
func TestExitStatus(t *testing.T) {
	prog := crasher(t)
	if ws, stderr := runCommand(t, "-o", t.TempDir(), "--", "/bin/true"); !ws.Exited() || ws.ExitStatus() != 0 {
		t.Skipf("cannot trace programs here: status %#x: %s", uint32(ws), stderr)
	}
	for _, c := range []struct {
		args   []string
		signal syscall.Signal
		exit   int
		dumps  int
	}{
		{[]string{"segv"}, syscall.SIGSEGV, 0, 1},
		{[]string{"abort"}, syscall.SIGABRT, 0, 1},
		{[]string{"exit", "7"}, 0, 7, 0},
		{[]string{"handled"}, 0, 3, 0},
	} {
		t.Run(c.args[0], func(t *testing.T) {
			dir := t.TempDir()
			ws, stderr := runCommand(t, append([]string{"-o", dir, "--", prog}, c.args...)...)
			if c.signal != 0 && (!ws.Signaled() || ws.Signal() != c.signal) {
				t.Errorf("status %#x, want death by %v; stderr:\n%s", uint32(ws), c.signal, stderr)
			}
			if c.signal == 0 && (!ws.Exited() || ws.ExitStatus() != c.exit) {
				t.Errorf("status %#x, want exit %d; stderr:\n%s", uint32(ws), c.exit, stderr)
			}
			dumps, _ := filepath.Glob(filepath.Join(dir, "*.dmp"))
			if len(dumps) != c.dumps {
				t.Fatalf("%d dumps, want %d; stderr:\n%s", len(dumps), c.dumps, stderr)
			}
			for _, d := range dumps {
				if !strings.HasPrefix(filepath.Base(d), "crasher.") || !strings.Contains(stderr, d) {
					t.Errorf("dump %s not named after the program or not reported:\n%s", d, stderr)
				}
				f, err := minidump.Open(d)
				if err != nil {
					t.Fatal(err)
				}
				exc, err := f.Exception()
				f.Close()
				if err != nil || exc.ExceptionRecord.ExceptionCode != uint32(c.signal) {
					t.Errorf("exception %+v, %v; want signal %d", exc, err, c.signal)
				}
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{}, 2, "minidump_capture: missing program to run (see --help)\n"},
		{[]string{"-x"}, 2, "minidump_capture: flag provided but not defined: -x (see --help)\n"},
		{[]string{"-o", t.TempDir(), "--", "/nonexistent/program"}, 1, "minidump_capture: "},
	} {
		ws, stderr := runCommand(t, c.args...)
		if !ws.Exited() || ws.ExitStatus() != c.code || !strings.HasPrefix(stderr, c.stderr) {
			t.Errorf("%q: status %#x, stderr %q; want exit %d with %q", c.args, uint32(ws), stderr, c.code, c.stderr)
		}
	}
}

// TestSignalForwarding: SIGINT to this command alone does not end it; a
// SIGTERM is passed to the program, which dies of it, and so does the command.
func TestSignalForwarding(t *testing.T) {
	if _, err := os.Stat("/bin/sleep"); err != nil {
		t.Skip("no /bin/sleep")
	}
	cmd := exec.Command(os.Args[0], "-o", t.TempDir(), "--", "/bin/sh", "-c", "echo ready; exec /bin/sleep 30")
	cmd.Env = append(os.Environ(), beCommand+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Once the program prints, the command has its handlers in place.
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatalf("the program did not start: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-done:
		t.Fatalf("SIGINT ended the command: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("SIGTERM did not end the program and the command")
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("status %#x, want death by SIGTERM", uint32(ws))
	}
}

// TestNewDir: a dump directory that does not exist yet is created (with
// its parents), and the crash's dump lands in it.
func TestNewDir(t *testing.T) {
	prog := crasher(t)
	if ws, stderr := runCommand(t, "-o", t.TempDir(), "--", "/bin/true"); !ws.Exited() || ws.ExitStatus() != 0 {
		t.Skipf("cannot trace programs here: status %#x: %s", uint32(ws), stderr)
	}
	dir := filepath.Join(t.TempDir(), "new", "dumps")
	ws, stderr := runCommand(t, "-o", dir, "--", prog, "segv")
	if !ws.Signaled() || ws.Signal() != syscall.SIGSEGV {
		t.Errorf("status %#x, want death by SIGSEGV", uint32(ws))
	}
	dumps, _ := filepath.Glob(filepath.Join(dir, "crasher.*.dmp"))
	if len(dumps) != 1 || !strings.Contains(stderr, dumps[0]) {
		t.Errorf("dumps %q in %s; stderr:\n%s", dumps, dir, stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".minidump_capture-check-*")); len(left) != 0 {
		t.Errorf("the writability check left %q", left)
	}
}

// TestUnwritableDir: when the dump directory cannot be made or written, the
// program is not started: one line on stderr, exit 1.
func TestUnwritableDir(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(tmp, "started")
	ws, stderr := runCommand(t, "-o", filepath.Join(file, "dumps"), "--", "/bin/sh", "-c", "touch "+marker)
	if !ws.Exited() || ws.ExitStatus() != 1 {
		t.Errorf("status %#x, want exit 1", uint32(ws))
	}
	if !strings.HasPrefix(stderr, "minidump_capture: dump directory: ") || !strings.HasSuffix(stderr, "not starting the program\n") ||
		strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr %q", stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the program was started")
	}
	if os.Getuid() != 0 { // root writes into read-only directories
		ro := filepath.Join(tmp, "ro")
		os.Mkdir(ro, 0o555)
		ws, stderr := runCommand(t, "-o", ro, "--", "/bin/sh", "-c", "touch "+marker)
		if !ws.Exited() || ws.ExitStatus() != 1 || !strings.Contains(stderr, "is not writable") {
			t.Errorf("read-only directory: status %#x, stderr %q", uint32(ws), stderr)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Error("the program was started")
		}
	}
}
