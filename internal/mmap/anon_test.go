package mmap

import (
	"runtime"
	"testing"
)

// TestAnon writes memory from Anon, discards its whole pages and frees it:
// on Linux the discarded pages read as zeros, the bytes of partial pages
// around them stay.
func TestAnon(t *testing.T) {
	if b, free, err := Anon(0); err != nil || b != nil {
		t.Errorf("Anon(0) = %d bytes, %v", len(b), err)
	} else {
		free()
	}
	const n = 5 << 16
	b, free, err := Anon(n)
	if err != nil {
		t.Fatal(err)
	}
	defer free()
	if len(b) != n {
		t.Fatalf("%d bytes, want %d", len(b), n)
	}
	for i := range b {
		if b[i] != 0 {
			t.Fatalf("byte %d = %d, want zeroed memory", i, b[i])
		}
		b[i] = 7
	}
	Discard(b[1 : n-1])
	if b[0] != 7 || b[n-1] != 7 {
		t.Errorf("bytes of partial pages changed: %d %d", b[0], b[n-1])
	}
	if runtime.GOOS == "linux" && b[n/2] != 0 {
		t.Errorf("a discarded page reads %d, want 0", b[n/2])
	}
}
