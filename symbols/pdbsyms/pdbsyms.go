// Package pdbsyms gives symbols from native Windows debug files: Converter
// turns a module's PDB (or, without one, its PE) into a Breakpad .sym file
// with dumpsyms/pe, kept in the symbol cache as NAME.pdb/GUIDAGE/NAME.sym
// beside the PDB (a Breakpad store layout, so Breakpad's own tools read the
// cache too); Dirs is a symbols.Source over local Windows symbol-store trees
// and plain folders of PDBs and PEs. symbols/remote's Microsoft symbol
// server source hands its downloads to a Converter (symbols/symsrc wires
// it).
package pdbsyms

import (
	"debug/pe"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gobreakpad/gobreakpad/cab"
	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dspe "github.com/gobreakpad/gobreakpad/dumpsyms/pe"
	"github.com/gobreakpad/gobreakpad/dumpsyms/peexports"
	"github.com/gobreakpad/gobreakpad/pe/unwindinfo"
	"github.com/gobreakpad/gobreakpad/symbols"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symbols/cache"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// A Converter turns PDBs and PEs into symbols, once per module into Cache,
// and serves the converted files (each mapped once).
type Converter struct {
	Cache *cache.Cache
	// Warn, when set, receives dumpsyms's warnings.
	Warn func(format string, args ...any)

	conv  symbols.Once
	files symbreakpad.Files
}

// Convert returns the symbols of module m made from its PDB at pdbPath or,
// when that is empty, its PE at pePath: read from the cache's
// NAME.pdb/GUIDAGE/NAME.sym when already converted (by this process or
// another), else converted with dumpsyms/pe and written there first.
//
// A module without a debug file and identifier (a PE without a CodeView
// record: Wine's DLLs) is converted from its PE alone, kept as
// NAME.dll/TIMESTAMPSIZE/NAME.dll.sym (its code file and identifier) and
// named so in its MODULE record (peexports.Options.ByCodeID).
func (c *Converter) Convert(m symbols.Module, pdbPath, pePath string) (*symbols.Symbols, error) {
	debugFile, debugID := symstore.BaseName(m.DebugFile), m.DebugID
	byCode := debugFile == "" && debugID == ""
	if byCode {
		if pdbPath != "" || !IsPECodeID(m.CodeID) {
			return nil, fmt.Errorf("%w: %s: no debug file, and no PE code identifier", symbols.ErrNotFound, m.CodeFile)
		}
		debugFile, debugID = symstore.BaseName(m.CodeFile), m.CodeID
	}
	elems, err := symstore.BreakpadPath(debugFile, debugID, ".sym")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", symbols.ErrNotFound, err)
	}
	p, err := c.conv.Do(debugFile+"/"+debugID, func() (string, error) {
		if p, ok := c.Cache.Lookup(elems...); ok {
			return p, nil
		}
		in := pdbPath
		if in == "" {
			in = pePath
		}
		if in == "" {
			return "", fmt.Errorf("%w: %s %s: no PDB or PE", symbols.ErrNotFound, m.DebugFile, m.DebugID)
		}
		if pdbPath != "" && pePath != "" {
			// dumpsyms/pe takes x64 STACK CFI from the PE beside the
			// PDB: lay the two side by side, as a build directory has them.
			tmp, err := os.MkdirTemp("", "gobreakpad-pdb-")
			if err != nil {
				return "", err
			}
			defer os.RemoveAll(tmp)
			exe := strings.TrimSuffix(debugFile, filepath.Ext(debugFile)) + strings.ToLower(filepath.Ext(symstore.BaseName(m.CodeFile)))
			if os.Symlink(pdbPath, filepath.Join(tmp, debugFile)) == nil && os.Symlink(pePath, filepath.Join(tmp, exe)) == nil {
				in = filepath.Join(tmp, debugFile)
			}
		}
		s, err := dumpFile(in, pdbPath == "", byCode, c.Warn)
		if err != nil {
			return "", fmt.Errorf("converting %s: %w", in, err)
		}
		return c.Cache.WriteFunc(func(w io.Writer) error { return s.Write(w) }, elems...)
	})
	if err != nil {
		return nil, err
	}
	return c.files.Open(p)
}

// dumpFile converts a PDB, or a PE (isPE): with its PDB when one is found
// beside it or at the path its CodeView record names, else its exports and
// x64 unwind information alone, as Breakpad's dump_syms does for a PE
// without a PDB.
//
// x64 STACK CFI is in the exact style (rules at every prolog and epilog
// instruction, docs/dump_syms.md): no reference tool reads these
// conversions, and a walk stopped inside a prolog or epilog is only right
// with them.
//
// byCode (a module without a debug file) converts the PE alone, named by
// its code identifier when it has no CodeView record.
func dumpFile(path string, isPE, byCode bool, warn func(string, ...any)) (*dumpsyms.Model, error) {
	var s *dumpsyms.Model
	err := errors.New("no PDB to read")
	if !byCode {
		s, err = dspe.DumpWith(path, dspe.Options{Options: dumpsyms.Options{Inlines: true, Warn: warn}, CFIStyle: unwindinfo.StyleExact})
	}
	if err == nil || !isPE {
		return s, err
	}
	f, perr := pe.Open(path)
	if perr != nil {
		return nil, err
	}
	defer f.Close()
	return peexports.Dump(f, path, peexports.Options{Options: dumpsyms.Options{Warn: warn}, Style: unwindinfo.StyleExact, ByCodeID: byCode})
}

// Close releases the converted files' mappings.
func (c *Converter) Close() error { return c.files.Close() }

// MaxInflateRatio bounds what [Extract] takes out of a cabinet: at most this
// many times the cabinet's size (and at least 64 MiB). Real PDBs compress 3
// to 10 times; a small hostile cabinet must not fill the disk.
const MaxInflateRatio = 64

// InflateLimit is how many bytes the file of a cabinet of size bytes may
// hold: ratio times the cabinet's size, and at least 64 MiB.
func InflateLimit(size, ratio int64) int64 { return max(64<<20, ratio*size) }

// Extract stores the one file of the CAB archive at path (a symbol store's
// compressed NAM_ form) in c as elems, reading at most limit bytes of it,
// and at most MaxInflateRatio times the cabinet's size. The cabinet is read
// through the file, block by block, not into memory.
func Extract(c *cache.Cache, path string, limit int64, elems ...string) (string, error) {
	cf, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer cf.Close()
	st, err := cf.Stat()
	if err != nil {
		return "", err
	}
	size := st.Size()
	limit = min(limit, InflateLimit(size, MaxInflateRatio))
	r, err := cab.NewReader(cf, size)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", symbols.ErrNotFound, path, err)
	}
	file, err := cabinetFile(r, path, "")
	if err != nil {
		return "", fmt.Errorf("%w: %v", symbols.ErrNotFound, err)
	}
	if size := int64(file.Size); size > limit {
		return "", fmt.Errorf("%w: %s: %s declares %d bytes, over the limit of %d", symbols.ErrNotFound, path, file.Name, size, limit)
	}
	f, err := file.Open()
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", symbols.ErrNotFound, path, err)
	}
	p, err := c.Write(f, limit, elems...)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", symbols.ErrNotFound, path, err)
	}
	return p, nil
}

// IsPECodeID reports whether id has the form of a PE's code identifier:
// the time stamp in 8 hex digits, then the image size in 1 to 8 (an ELF
// build ID or a Mach-O UUID is longer).
func IsPECodeID(id string) bool {
	if len(id) < 9 || len(id) > 16 {
		return false
	}
	for _, c := range id {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
