package mmap

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	want := bytes.Repeat([]byte("0123456789abcdef"), 3000) // several pages
	full := filepath.Join(dir, "full")
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(full, want, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, advice := range []Advice{Normal, Sequential, Random} {
		data, unmap, err := Open(full, advice)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, want) {
			t.Errorf("advice %d: mapped data differs from the file", advice)
		}
		Release(data[100:])
		if !bytes.Equal(data, want) {
			t.Errorf("advice %d: data differs after Release", advice)
		}
		if err := unmap(); err != nil {
			t.Error(err)
		}
	}
	data, unmap, err := Open(empty, Normal)
	if err != nil || len(data) != 0 {
		t.Errorf("empty file: %d bytes, %v", len(data), err)
	} else if err := unmap(); err != nil {
		t.Error(err)
	}
	if _, _, err := Open(filepath.Join(dir, "missing"), Normal); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
	if _, _, err := Open(dir, Normal); Supported && (err == nil || !strings.HasPrefix(err.Error(), dir+": ")) {
		t.Errorf("directory: %v, want an error naming it", err)
	}
}
