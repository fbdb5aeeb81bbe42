package cmdtest

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Debuginfod runs elfutils' debuginfod (Debian package debuginfod) over the
// ELF files under dir, on a loopback port, until it serves the debug file of
// buildID (lower-case hex), and returns its URL; the server stops when the
// test ends. The test is skipped when debuginfod is not installed.
func Debuginfod(t testing.TB, dir, buildID string) string {
	t.Helper()
	bin, err := exec.LookPath("debuginfod")
	if err != nil {
		t.Skip("debuginfod not installed (apt-get install debuginfod)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	// -t 0 -g 0: one scan at start, no grooming; the database is the test's.
	cmd := exec.Command(bin, "-F", dir, "-p", fmt.Sprint(port), "-d", filepath.Join(t.TempDir(), "db.sqlite"), "-t", "0", "-g", "0")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get(base + "/buildid/" + buildID + "/debuginfo")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("debuginfod did not serve %s within 30s: %v\n%s", buildID, err, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
