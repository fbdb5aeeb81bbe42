package symfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gobreakpad/gobreakpad/symstore"
)

// A Store finds symbol files in one or more symbol directories laid out as
// Breakpad's SimpleSymbolSupplier and dump_syms' users expect:
//
//	ROOT/<debug file>/<debug id>/<debug file without ".pdb">.sym
//
// where the debug file is the base name of the module's debug file as the
// minidump records it (Windows and Unix directory parts both stripped), and
// ".sym" is appended after removing a ".pdb" extension (in any case). Roots
// are searched in order and the first existing file is used, whether or not
// it then parses cleanly, as Breakpad does.
type Store struct {
	Roots []string
}

// NewStore returns a Store searching roots in order.
func NewStore(roots ...string) *Store { return &Store{Roots: roots} }

// Status is the outcome of looking a module's symbols up in a [Store], kept
// apart as Breakpad and rust-minidump report them per module.
type Status uint8

const (
	// NotFound: no root holds a symbol file for the module (or the module's
	// names cannot name a file in a root).
	NotFound Status = iota
	// Found: the symbol file was found and parsed without error.
	Found
	// Corrupt: a symbol file was found but is malformed in places (the Table
	// is still usable, as Breakpad uses it) or could not be read at all (no
	// Table).
	Corrupt
)

// String returns the status' name.
func (s Status) String() string {
	switch s {
	case NotFound:
		return "not found"
	case Found:
		return "found"
	case Corrupt:
		return "corrupt"
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// ErrBadName is returned (wrapped) for a debug file name or identifier that
// cannot name a file inside a symbol root: empty, ".", "..", or holding a
// separator or a NUL byte. It is symstore.ErrBadName.
var ErrBadName = symstore.ErrBadName

// Find returns the path of the first existing symbol file for the module in
// the store's roots. It returns an error wrapping [fs.ErrNotExist] when there
// is none, or [ErrBadName] when the names are unusable.
func (s *Store) Find(debugFile, debugID string) (string, error) {
	elems, err := symstore.BreakpadPath(debugFile, debugID, ".sym")
	if err != nil {
		return "", err
	}
	rel := filepath.Join(elems...)
	for _, root := range s.Roots {
		p := filepath.Join(root, rel)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("symbol file %s: %w", rel, fs.ErrNotExist)
}

// Load finds and opens the symbol file for a module. It returns:
//   - NotFound with a nil Table when no root has the file, the error saying why;
//   - Found with the Table when it parsed cleanly;
//   - Corrupt with the Table and an error describing the first malformed line
//     when parts of it are malformed, or with a nil Table and the error when
//     the file exists but cannot be read.
//
// The caller must Close the Table.
func (s *Store) Load(debugFile, debugID string) (*Table, Status, error) {
	p, err := s.Find(debugFile, debugID)
	if err != nil {
		return nil, NotFound, err
	}
	t, err := Open(p)
	if err != nil {
		return nil, Corrupt, err
	}
	if t.Corrupt() {
		return t, Corrupt, fmt.Errorf("%s: %d malformed lines, first at %w", p, t.NumErrors(), t.Errors()[0])
	}
	return t, Found, nil
}
