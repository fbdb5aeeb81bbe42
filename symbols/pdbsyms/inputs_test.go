package pdbsyms

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

func write(t *testing.T, data []byte, elems ...string) string {
	t.Helper()
	p := filepath.Join(elems...)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStoreFile(t *testing.T) {
	root := t.TempDir()
	plain := write(t, []byte("pdb"), root, "a.pdb", "ID1", "a.pdb")
	packed := write(t, []byte("cab"), root, "b.pdb", "ID2", "b.pd_")
	write(t, []byte("cab"), root, "a.pdb", "ID1", "a.pd_") // the file itself wins
	for _, c := range []struct {
		name, id string
		want     string
		packed   bool
	}{
		{"a.pdb", "ID1", plain, false},
		{"b.pdb", "ID2", packed, true},
		{"b.pdb", "ID1", "", false},
		{"..", "ID1", "", false},
		{"a.pdb", "..", "", false},
		{"a.pdb/../a.pdb", "ID1", "", false},
		{"a.pdb", "ID1/../ID1", "", false},
	} {
		if p, pk := StoreFile(root, c.name, c.id); p != c.want || pk != c.packed {
			t.Errorf("StoreFile(%q, %q) = %q, %v; want %q, %v", c.name, c.id, p, pk, c.want, c.packed)
		}
	}
}

// TestInputsUnpack: a cabinet given directly is extracted under the name
// of the file it holds (or, when that is not a file name, the cabinet's
// unpacked name), other files are returned as they are, Close removes
// what was extracted.
func TestInputsUnpack(t *testing.T) {
	cabData, err := os.ReadFile(filepath.Join(corpus.Dir(t), "windows", "mozilla", "basic32.pd_"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := &Inputs{MaxRatio: 32}
	defer in.Close()
	other := write(t, []byte("MZ..."), dir, "x.dll")
	if p, err := in.Unpack(other); err != nil || p != other {
		t.Errorf("Unpack(a PE) = %q, %v", p, err)
	}
	if p, err := in.Unpack(filepath.Join(dir, "missing")); err != nil || p != filepath.Join(dir, "missing") {
		t.Errorf("Unpack(a missing file) = %q, %v", p, err)
	}
	p, err := in.Unpack(write(t, cabData, dir, "renamed.pd_"))
	if err != nil || filepath.Base(p) != "basic32.pdb" || !IsPDB(p) {
		t.Fatalf("Unpack(basic32.pd_) = %q, %v", p, err)
	}
	i := bytes.Index(cabData, []byte("basic32.pdb\x00"))
	if i < 0 {
		t.Fatal("no stored name in basic32.pd_")
	}
	evil := append([]byte(nil), cabData...)
	copy(evil[i:], "..\x00")
	if p, err := in.Unpack(write(t, evil, dir, "evil.pd_")); err != nil || filepath.Base(p) != "evil.pdb" || !strings.HasPrefix(p, in.tmp) {
		t.Errorf("Unpack(a cabinet storing \"..\") = %q, %v", p, err)
	}
	if p, err := (&Inputs{MaxRatio: 0}).Unpack(filepath.Join(dir, "renamed.pd_")); err != nil {
		t.Errorf("MaxRatio 0 (64 MiB at least): %q, %v", p, err)
	}
	tmp := in.tmp
	in.Close()
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("Close left %s: %v", tmp, err)
	}
}

// TestCompanionPE: a PDB's PE beside it, plain before packed, a file that
// is not a PE skipped.
func TestCompanionPE(t *testing.T) {
	dir := t.TempDir()
	in := &Inputs{}
	defer in.Close()
	if p := in.CompanionPE(dir, "app"); p != "" {
		t.Errorf("no PE: %q", p)
	}
	write(t, []byte("not a PE"), dir, "app.exe")
	if p := in.CompanionPE(dir, "app"); p != "" {
		t.Errorf("a file that is not a PE: %q", p)
	}
	dll := write(t, []byte("MZ"), dir, "app.dll")
	if p := in.CompanionPE(dir, "app"); p != dll {
		t.Errorf("CompanionPE = %q, want %q", p, dll)
	}
}
