package pe

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

func symText(t *testing.T, path string, opts Options) string {
	t.Helper()
	s, err := DumpWith(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestFindPDB: a PE alone asks Options.FindPDB for its PDB by the CodeView
// record's name and identifier, and the PDB it returns gives what the PDB
// beside the PE gives; an error leaves the PE's own records. DumpFiles
// reads a PDB with a PE elsewhere under another name.
func TestFindPDB(t *testing.T) {
	exe := corpus.File(t, "windows/symbolic/crash.exe")
	pdbPath := corpus.File(t, "windows/symbolic/crash.pdb")
	want := symText(t, exe, Options{})

	alone := filepath.Join(t.TempDir(), "crash.exe")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var asked []string
	opts := Options{FindPDB: func(name, id string) (string, error) {
		asked = append(asked, name, id)
		return pdbPath, nil
	}}
	if got := symText(t, alone, opts); got != want {
		t.Errorf("through FindPDB: %d bytes, want %d", len(got), len(want))
	}
	if len(asked) != 2 || asked[0] != "crash.pdb" || asked[1] != "3249D99D0C4049318610F4E4FB0B69361" {
		t.Errorf("FindPDB asked for %q", asked)
	}
	peOnly := symText(t, alone, Options{})
	opts.FindPDB = func(string, string) (string, error) { return "", errors.New("not there") }
	if got := symText(t, alone, opts); got != peOnly {
		t.Errorf("FindPDB failing: %d bytes, want the PE's own %d", len(got), len(peOnly))
	}

	other := filepath.Join(t.TempDir(), "renamed.exe")
	if err := os.WriteFile(other, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := DumpFiles(pdbPath, other, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Module.Name != "crash.pdb" || s.CodeID.File != "renamed.exe" {
		t.Errorf("DumpFiles: MODULE %s, CODE_ID %s", s.Module.Name, s.CodeID.File)
	}
}
