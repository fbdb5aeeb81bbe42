package symsrc

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/dumpsyms/pe"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symbols/cache"
)

// pdbConverter turns the PDB (or, without one, the PE) a Microsoft symbol
// server gave into symbols: dump_syms's .sym, written once into the cache
// beside the file at NAME.pdb/ID/NAME.sym (a Breakpad store layout, so
// Breakpad's own tools read it too), and loaded through a Breakpad store over
// the cache, which maps each file once.
type pdbConverter struct {
	c    *cache.Cache
	warn func(string, ...any)

	once  sync.Once
	store *breakpad.Dirs
}

// symName is the converted file's name for a debug file name.
func symName(debugFile string) string {
	base := debugFile
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	if strings.HasSuffix(strings.ToLower(base), ".pdb") {
		base = base[:len(base)-4]
	}
	return base + ".sym"
}

// convert implements remote.SymSrv.Convert.
func (p *pdbConverter) convert(m symbols.Module, pdbPath, pePath string) (*symbols.Symbols, error) {
	p.once.Do(func() { p.store = breakpad.NewDirs(p.c.Dir) })
	debugFile := m.DebugFile
	if i := strings.LastIndexAny(debugFile, `/\`); i >= 0 {
		debugFile = debugFile[i+1:]
	}
	if _, ok := p.c.Lookup(debugFile, m.DebugID, symName(debugFile)); !ok {
		in := pdbPath
		if in == "" {
			in = pePath
		}
		if in == "" {
			return nil, fmt.Errorf("%w: %s %s: no PDB or PE", symbols.ErrNotFound, m.DebugFile, m.DebugID)
		}
		if pdbPath != "" && pePath != "" {
			// dumpsyms/pe takes x64 STACK CFI from the PE beside the
			// PDB: lay the two side by side, as a build directory has them.
			tmp, err := os.MkdirTemp("", "gobreakpad-pdb-")
			if err != nil {
				return nil, err
			}
			defer os.RemoveAll(tmp)
			in = filepath.Join(tmp, debugFile)
			exe := strings.TrimSuffix(debugFile, filepath.Ext(debugFile)) + strings.ToLower(filepath.Ext(baseName(m.CodeFile)))
			if os.Symlink(pdbPath, in) != nil || os.Symlink(pePath, filepath.Join(tmp, exe)) != nil {
				in = pdbPath
			}
		}
		s, err := pe.Dump(in, dumpsyms.Options{Inlines: true, Warn: p.warn})
		if err != nil {
			return nil, fmt.Errorf("converting %s: %w", in, err)
		}
		if _, err := p.c.WriteFunc(func(w io.Writer) error { return s.Write(w) }, debugFile, m.DebugID, symName(debugFile)); err != nil {
			return nil, err
		}
	}
	return p.store.Load(symbols.Module{CodeFile: m.CodeFile, CodeID: m.CodeID, DebugFile: debugFile, DebugID: m.DebugID})
}

// baseName is the last element of a Unix or Windows path.
func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// Close releases the converted files' mappings.
func (p *pdbConverter) Close() error {
	if p.store == nil {
		return nil
	}
	return p.store.Close()
}
