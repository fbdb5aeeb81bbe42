//go:build unix

package tempdir

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestMain lets the test binary be the child that is stopped.
func TestMain(m *testing.M) {
	if os.Getenv("TEMPDIR_CHILD") == "1" {
		dir, err := Make("tempdir-test-")
		if err != nil {
			os.Exit(3)
		}
		os.WriteFile(filepath.Join(dir, "extracted.pdb"), make([]byte, 1<<20), 0o644)
		os.Stdout.WriteString(dir + "\n")
		select {}
	}
	os.Exit(m.Run())
}

// TestSignalRemoves stops a child holding a directory with SIGTERM and
// SIGINT: the directory is gone and the child died of the signal.
func TestSignalRemoves(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "TEMPDIR_CHILD=1")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			cmd.Process.Kill()
			t.Fatal(err)
		}
		dir := strings.TrimSpace(line)
		cmd.Process.Signal(sig)
		err = cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%v: child: %v", sig, err)
		}
		if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != sig {
			t.Errorf("%v: child ended with %v, want killed by the signal", sig, ws)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			os.RemoveAll(dir)
			t.Errorf("%v: %s left behind (%v)", sig, dir, err)
		}
	}
}

func TestRemove(t *testing.T) {
	dir, err := Make("tempdir-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := Remove(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still there", dir)
	}
}
