package pe

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/pdb"
)

// TestFileShortenedWhileRead: a PDB cut short after pdb.Open mapped it
// gives an error, not a crash of the process, where the platform maps
// files (elsewhere the cut streams read as errors anyway).
func TestFileShortenedWhileRead(t *testing.T) {
	b, err := os.ReadFile("testdata/thunks/thunks.pdb")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "thunks.pdb")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := pdb.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Truncate(p, 4096); err != nil {
		t.Skipf("an open file cannot be cut short here: %v", err)
	}
	if _, err := dumpMapped(f, "thunks.pdb", dumpsyms.Options{Inlines: true}); err == nil {
		t.Error("a PDB cut short while read: no error")
	} else {
		t.Log(err)
	}
}
