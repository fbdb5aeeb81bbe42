//go:build unix

package blob

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestDirModes: blobs are 0600 in 0700 directories by default (crashes
// hold personal data), 0640 in 0750 with GroupReadable, even under a
// permissive umask.
func TestDirModes(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	for _, tc := range []struct {
		o         DirOptions
		file, dir fs.FileMode
	}{{DirOptions{}, 0o600, 0o700}, {DirOptions{GroupReadable: true}, 0o640, 0o750}} {
		root := filepath.Join(t.TempDir(), "data")
		d, err := OpenDirWith(root, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := d.Put(ctx, "v1/raw_crash/20260101/x", []byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := d.PutLazy(ctx, "v1/processed_crash/x", []byte("x")); err != nil {
			t.Fatal(err)
		}
		d.Close()
		for _, p := range []string{"", "v1", "v1/raw_crash", "v1/raw_crash/20260101", "v1/processed_crash"} {
			st, err := os.Stat(filepath.Join(root, p))
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != tc.dir {
				t.Errorf("%+v: directory %q: %v, want %v", tc.o, p, st.Mode().Perm(), tc.dir)
			}
		}
		for _, p := range []string{"v1/raw_crash/20260101/x", "v1/processed_crash/x"} {
			st, err := os.Stat(filepath.Join(root, p))
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != tc.file {
				t.Errorf("%+v: file %q: %v, want %v", tc.o, p, st.Mode().Perm(), tc.file)
			}
		}
	}
}

// TestRemoveTemp: the temporary files a killed process left (older than
// the cut-off) are removed, a newer one (a Put running now) and the blobs
// are kept.
func TestRemoveTemp(t *testing.T) {
	root := t.TempDir()
	d, err := OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	if err := d.Put(ctx, "v1/a/b", []byte("x")); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{".tmp-0001", "v1/.tmp-0002", "v1/a/.tmp-0003"} {
		full := filepath.Join(root, p)
		if err := os.WriteFile(full, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(full, old, old); err != nil {
			t.Fatal(err)
		}
	}
	fresh := filepath.Join(root, "v1/a/.tmp-0004")
	if err := os.WriteFile(fresh, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := d.RemoveTemp(ctx, time.Now().Add(-time.Minute))
	if err != nil || n != 3 {
		t.Fatalf("RemoveTemp = %d, %v; want 3", n, err)
	}
	for _, p := range []string{".tmp-0001", "v1/.tmp-0002", "v1/a/.tmp-0003"} {
		if _, err := os.Stat(filepath.Join(root, p)); err == nil {
			t.Errorf("%s left", p)
		}
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a temporary file newer than the cut-off was removed: %v", err)
	}
	if b, err := d.Get(ctx, "v1/a/b"); err != nil || string(b) != "x" {
		t.Errorf("blob: %q %v", b, err)
	}
}
