package mmap

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestPageSpan(t *testing.T) {
	page := syscall.Getpagesize()
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, make([]byte, 3*page+10), 0o644); err != nil {
		t.Fatal(err)
	}
	data, unmap, err := Open(path, Normal)
	if err != nil {
		t.Fatal(err)
	}
	defer unmap()
	for _, c := range []struct {
		b      []byte
		lo, hi int
	}{
		{data, 0, 3 * page},
		{data[1:], page - 1, 3*page - 1},
		{data[1 : page+5], page - 1, page - 1},
		{data[:0], 0, 0},
	} {
		if lo, hi := pageSpan(c.b); lo != c.lo || hi != c.hi {
			t.Errorf("pageSpan of %d bytes at %d: %d, %d; want %d, %d", len(c.b), cap(data)-cap(c.b), lo, hi, c.lo, c.hi)
		}
	}
}
