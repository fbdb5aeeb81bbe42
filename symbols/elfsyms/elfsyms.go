// Package elfsyms gives symbols from native ELF files: Dirs is a
// symbols.Source over directories of debug files (.build-id/xx/rest.debug
// trees, as Debian and Fedora install them) and folders of binaries, and
// Convert turns a binary and its separate debug file into a Breakpad .sym
// file with dumpsyms/elf, kept in the symbol cache as
// buildid/BUILDID/breakpad.sym so that the next walk reads it directly.
// symbols/remote's debuginfod source converts its downloads with it.
package elfsyms

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dself "github.com/gobreakpad/gobreakpad/dumpsyms/elf"
	"github.com/gobreakpad/gobreakpad/moduleid"
	"github.com/gobreakpad/gobreakpad/symbols"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symbols/cache"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// BuildID returns the module's ELF build ID in lower-case hex, or "" when
// its code identifier cannot be one (PE code identifiers and PDB modules are
// skipped).
func BuildID(m symbols.Module) string {
	id := strings.ToLower(m.CodeID)
	if len(id) < 16 || len(id)%2 != 0 || len(id) > 128 || strings.HasSuffix(strings.ToLower(m.DebugFile), ".pdb") {
		return ""
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return ""
		}
	}
	return id
}

// ConvertedName is the name of converted symbols in a build ID's cache
// directory (buildid/BUILDID/breakpad.sym).
const ConvertedName = "breakpad.sym"

// Convert makes the Breakpad symbols of the ELF module with build ID id from
// its binary exe and separate debug file dbg (either may be empty) and
// stores them in c as buildid/ID/breakpad.sym, returning that path. name is
// the module name of the MODULE record.
func Convert(c *cache.Cache, id, name, exe, dbg string, warn func(string, ...any)) (string, error) {
	opts := dumpsyms.Options{Inlines: true, Warn: warn, Name: name}
	path := dbg
	if exe != "" {
		path = exe
		if dbg != "" {
			// dumpsyms finds a debug file by build ID in a debug
			// directory: lay one out for it.
			tmp, err := os.MkdirTemp("", "gobreakpad-debugdir-")
			if err != nil {
				return "", err
			}
			defer os.RemoveAll(tmp)
			link := filepath.Join(tmp, ".build-id", id[:2], id[2:]+".debug")
			if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
				return "", err
			}
			abs, err := filepath.Abs(dbg)
			if err != nil {
				return "", err
			}
			if err := os.Symlink(abs, link); err != nil {
				return "", err
			}
			opts.DebugDirs = []string{tmp}
		}
	}
	syms, err := dself.Dump(path, opts)
	if err != nil {
		return "", fmt.Errorf("converting %s: %w", path, err)
	}
	return c.WriteFunc(func(w io.Writer) error { return syms.Write(w) }, "buildid", id, ConvertedName)
}

// ModuleName is the name a module's converted symbols carry: its code
// file's base name, else its debug file's.
func ModuleName(m symbols.Module) string {
	if n := symstore.BaseName(m.CodeFile); n != "" {
		return n
	}
	return symstore.BaseName(m.DebugFile)
}

// Dirs is a symbols.Source over directories of native ELF files. For a
// module with build ID BUILDID (ab cdef...), each directory is searched for
//
//	DIR/.build-id/ab/cdef....debug  its separate debug file
//	DIR/.build-id/ab/cdef...        its binary (Fedora's symbolic links)
//	DIR/NAME                        a binary named as the module, with that build ID
//
// and what is found is converted (Convert) into Cache.
type Dirs struct {
	Roots []string
	Cache *cache.Cache
	// Warn, when set, receives dumpsyms's warnings.
	Warn func(format string, args ...any)

	files symbreakpad.Files
	conv  symbols.Once
}

// NewDirs returns the source over roots, converting into c.
func NewDirs(c *cache.Cache, roots ...string) *Dirs { return &Dirs{Roots: roots, Cache: c} }

// Load implements symbols.Source.
func (d *Dirs) Load(m symbols.Module) (*symbols.Symbols, error) {
	id := BuildID(m)
	if id == "" {
		return nil, fmt.Errorf("%w: %s: no ELF build ID", symbols.ErrNotFound, m.DebugFile)
	}
	p, err := d.conv.Do(id, func() (string, error) {
		exe, dbg := d.find(m, id)
		if exe == "" && dbg == "" {
			return "", fmt.Errorf("%w: no ELF file with build ID %s in %s", symbols.ErrNotFound, id, strings.Join(d.Roots, ", "))
		}
		// A converted form in the cache is used only for files found
		// here: the cache may hold another source's conversion, which
		// is the same module.
		if p, ok := d.Cache.Lookup("buildid", id, ConvertedName); ok {
			return p, nil
		}
		return Convert(d.Cache, id, ModuleName(m), exe, dbg, d.Warn)
	})
	if err != nil {
		return nil, err
	}
	return d.files.Open(p)
}

// find returns the binary and debug file of the module among the roots.
func (d *Dirs) find(m symbols.Module, id string) (exe, dbg string) {
	isFile := func(p string) bool {
		st, err := os.Stat(p)
		return err == nil && st.Mode().IsRegular()
	}
	name := symstore.BaseName(m.CodeFile)
	for _, root := range d.Roots {
		bid := filepath.Join(root, ".build-id", id[:2], id[2:])
		if dbg == "" && isFile(bid+".debug") {
			dbg = bid + ".debug"
		}
		if exe == "" && isFile(bid) {
			exe = bid
		}
		if exe == "" && symstore.CheckName(name) == nil {
			p := filepath.Join(root, name)
			if isFile(p) && hasBuildID(p, id) {
				exe = p
			}
		}
	}
	return exe, dbg
}

// hasBuildID reports whether the ELF file at p has build ID id.
func hasBuildID(p, id string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	b, err := moduleid.BuildID(f)
	if err != nil || errors.Is(err, fs.ErrNotExist) {
		return false
	}
	return fmt.Sprintf("%x", b) == id
}

// Close releases the symbol files mapped by Load.
func (d *Dirs) Close() error { return d.files.Close() }
