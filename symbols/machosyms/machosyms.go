// Package machosyms gives symbols from native macOS files: Dirs is a
// symbols.Source over folders holding Mach-O binaries and dSYM bundles
// (a build's products, Xcode's archives, a folder of dSYMs), found by the
// module's debug identifier (its LC_UUID and age 0, as Breakpad's and
// Crashpad's minidumps give it), converted with dumpsyms/macho into the
// cache as macho/ID/exact.sym so that the next walk reads it directly.
// A module whose binary and dSYM are both found gets the dSYM's DWARF and
// the binary's unwind information (compact unwind included).
package machosyms

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dsmacho "github.com/gobreakpad/gobreakpad/dumpsyms/macho"
	"github.com/gobreakpad/gobreakpad/symbols"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symbols/cache"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// ConvertedName is the name of converted symbols in a module's cache
// directory (macho/ID/exact.sym: the STACK CFI of dump_syms --cfi-style
// exact; caches of earlier versions, which wrote breakpad.sym with the
// encoding's rules, are not read).
const ConvertedName = "exact.sym"

// MaxFiles bounds the files a Dirs looks at in its roots: a folder of
// dSYMs holds thousands, not millions.
const MaxFiles = 200000

// Dirs is a symbols.Source over folders of Mach-O files and dSYM bundles,
// searched whole (every file's slices identified once, on the first Load).
type Dirs struct {
	Roots []string
	Cache *cache.Cache
	// Warn, when set, receives dumpsyms's warnings.
	Warn func(format string, args ...any)

	once  sync.Once
	index map[string]files // by debug identifier
	files symbreakpad.Files
	conv  symbols.Once
}

// files are the files of one module found in the roots.
type files struct {
	arch      string
	bin, dsym string
}

// NewDirs returns the source over roots, converting into c.
func NewDirs(c *cache.Cache, roots ...string) *Dirs { return &Dirs{Roots: roots, Cache: c} }

// DebugID returns the module's debug identifier in the form Mach-O modules
// have (33 upper-case hexadecimal digits: the UUID and age 0), or "" for
// modules that are not Mach-O: a PDB's, and an ELF module's, whose code
// identifier is its build ID (a Mach-O module's is "id", Breakpad's
// placeholder, or its UUID), so that walks of Linux dumps never search the
// folders for Mach-O files.
func DebugID(m symbols.Module) string {
	id := strings.ToUpper(m.DebugID)
	if len(id) != 33 || strings.HasSuffix(strings.ToLower(m.DebugFile), ".pdb") {
		return ""
	}
	if c := strings.ToUpper(m.CodeID); len(c) >= 16 && c != id[:32] {
		return ""
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('0' <= c && c <= '9' || 'A' <= c && c <= 'F') {
			return ""
		}
	}
	return id
}

// Load implements symbols.Source.
func (d *Dirs) Load(m symbols.Module) (*symbols.Symbols, error) {
	id := DebugID(m)
	if id == "" {
		return nil, fmt.Errorf("%w: %s: not a Mach-O debug identifier", symbols.ErrNotFound, m.DebugID)
	}
	d.once.Do(d.scan)
	f, ok := d.index[id]
	if !ok {
		return nil, fmt.Errorf("%w: no Mach-O file or dSYM with UUID %s in %s", symbols.ErrNotFound, id[:32], strings.Join(d.Roots, ", "))
	}
	p, err := d.conv.Do(id, func() (string, error) {
		if p, ok := d.Cache.Lookup("macho", id, ConvertedName); ok {
			return p, nil
		}
		return Convert(d.Cache, id, moduleName(m), f.arch, f.bin, f.dsym, d.Warn)
	})
	if err != nil {
		return nil, err
	}
	return d.files.Open(p)
}

// Convert makes the Breakpad symbols of the Mach-O module with debug
// identifier id from its binary and its dSYM (either may be empty; arch
// selects their slice) and stores them in c as macho/ID/exact.sym (STACK CFI right at every
// instruction: dumpsyms/macho's Exact),
// returning that path.
func Convert(c *cache.Cache, id, name, arch, bin, dsym string, warn func(string, ...any)) (string, error) {
	opts := dsmacho.Options{Options: dumpsyms.Options{Inlines: true, Warn: warn, Name: name}, Arch: arch, Exact: true}
	path := dsym
	if bin != "" {
		path, opts.DSYM = bin, dsym
	}
	syms, err := dsmacho.Dump(path, opts)
	if err != nil {
		return "", fmt.Errorf("converting %s: %w", path, err)
	}
	if syms.Module.ID != id {
		return "", fmt.Errorf("converting %s: its identifier is %s, not %s", path, syms.Module.ID, id)
	}
	return c.WriteFunc(func(w io.Writer) error { return syms.Write(w) }, "macho", id, ConvertedName)
}

// moduleName is the name a module's converted symbols carry: its code
// file's base name, else its debug file's.
func moduleName(m symbols.Module) string {
	if n := symstore.BaseName(m.CodeFile); n != "" {
		return n
	}
	return symstore.BaseName(m.DebugFile)
}

// scan identifies the Mach-O files of the roots: the files of dSYM bundles
// as dSYMs, the others with DWARF too (a dSYM's file given alone), the rest
// as binaries.
func (d *Dirs) scan() {
	d.index = map[string]files{}
	n := 0
	for _, root := range d.Roots {
		filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil || !e.Type().IsRegular() {
				return nil
			}
			if n++; n > MaxFiles {
				return filepath.SkipAll
			}
			if !isMachO(p) {
				return nil
			}
			ids, err := dsmacho.Identify(p)
			if err != nil {
				if d.Warn != nil {
					d.Warn("%v", err)
				}
				return nil
			}
			for _, id := range ids {
				if id.DebugID == "" {
					continue
				}
				f := d.index[id.DebugID]
				f.arch = id.Arch
				if id.DWARF && f.dsym == "" {
					f.dsym = p
				} else if !id.DWARF && f.bin == "" {
					f.bin = p
				}
				d.index[id.DebugID] = f
			}
			return nil
		})
	}
}

func isMachO(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var h [8]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return false
	}
	return dsmacho.IsMachO(h[:])
}

// Close releases the symbol files mapped by Load.
func (d *Dirs) Close() error { return d.files.Close() }
