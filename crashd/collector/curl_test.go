package collector

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestCurlClient posts with curl, whose form encoder (libcurl's) is the one
// Breakpad's Linux minidump_upload and sender use: text parts without a
// Content-Type, the dump as application/octet-stream, Expect: 100-continue
// for bodies over 1 MiB; and chunked, as Crashpad sends.
func TestCurlClient(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl not installed")
	}
	e := newEnv(t, Config{}, nil)
	dir := t.TempDir()
	small := filepath.Join(dir, "small.dmp")
	big := filepath.Join(dir, "big.dmp")
	os.WriteFile(small, []byte("MDMP small dump"), 0o644)
	bigData := make([]byte, 3<<20)
	copy(bigData, "MDMP")
	os.WriteFile(big, bigData, 0o644)
	for _, c := range []struct {
		name string
		args []string
		dump int
	}{
		{"form", []string{"-F", "prod=Test", "-F", "ver=1.0", "-F", "upload_file_minidump=@" + small}, 15},
		{"form, 3 MiB, Expect: 100-continue", []string{"-F", "ProductName=Test", "-F", "Version=1.0", "-F", "upload_file_minidump=@" + big}, 3 << 20},
		{"chunked", []string{"-H", "Transfer-Encoding: chunked", "-F", "ProductName=Test", "-F", "upload_file_minidump=@" + big}, 3 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			args := append([]string{"-sS", "--max-time", "20"}, c.args...)
			out, err := exec.CommandContext(ctx, curl, append(args, e.srv.URL+"/submit")...).Output()
			if err != nil {
				t.Fatalf("curl: %v", err)
			}
			id := answerID(t, string(out), "0")
			_, _, dumps := stored(t, e.store, id)
			if len(dumps["upload_file_minidump"]) != c.dump {
				t.Errorf("dump of %d bytes, want %d", len(dumps["upload_file_minidump"]), c.dump)
			}
		})
	}
}
