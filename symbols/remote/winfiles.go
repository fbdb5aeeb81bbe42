package remote

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/cache"
	"github.com/gobreakpad/gobreakpad/symbols/pdbsyms"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// SymSrvUserAgent is the User-Agent Microsoft's symbol client sends, which
// Mozilla's dump_syms sends too (some servers answer only that client).
const SymSrvUserAgent = "Microsoft-Symbol-Server/6.3.0.0"

// WinFiles finds a Windows file by name and identifier along a symbol path
// (ParseSymbolPath; every server and plain URL is a Microsoft symbol
// server), as Mozilla's dump_syms fetches PDBs: its local store trees and
// the servers' caches first, then the servers, whose downloads are kept in
// their caches. Names become paths only through symstore.MicrosoftPath.
type WinFiles struct {
	// Path is the symbol path.
	Path []PathElem
	// CacheDir is the cache of servers naming none ("": cache.DefaultDir).
	CacheDir string
	// MissTTL is the caches' cache.Cache.MissTTL.
	MissTTL time.Duration
	// UserAgent is sent to the servers; Progress receives lines about slow
	// downloads.
	UserAgent string
	Progress  io.Writer
	// Inputs extracts the cabinets found (and warns).
	Inputs *pdbsyms.Inputs

	clients map[string]*Client
}

// client returns the HTTP client of a cache directory.
func (w *WinFiles) client(dir string) (*Client, error) {
	if dir == "" {
		dir = w.CacheDir
	}
	dir, err := cache.DirOr(dir)
	if err != nil {
		return nil, err
	}
	if c := w.clients[dir]; c != nil {
		return c, nil
	}
	if w.clients == nil {
		w.clients = map[string]*Client{}
	}
	c := &Client{Cache: &cache.Cache{Dir: dir, MissTTL: w.MissTTL}, Progress: w.Progress, UserAgent: w.UserAgent}
	w.clients[dir] = c
	return c, nil
}

func (w *WinFiles) warn(format string, args ...any) {
	if w.Inputs.Warn != nil {
		w.Inputs.Warn(format, args...)
	}
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// FetchByID returns the file named name (a path's base name is used) with
// identifier id (a PDB's debug identifier, or with code a PE's code
// identifier: Mozilla's --debug-id and --code-id), from the first element
// of the path that has it (a store tree's file or its cabinet, or a
// server's download into its cache), extracted when it is a cabinet.
func (w *WinFiles) FetchByID(name, id string, code bool) (string, error) {
	name = symstore.BaseName(name)
	if _, err := symstore.MicrosoftPath(name, id, symstore.Plain); err != nil {
		return "", err
	}
	var errs []error
	for _, e := range w.Path {
		switch e.Kind {
		case StoreDir, PlainDir:
			if p, _ := pdbsyms.StoreFile(e.Dir, name, id); p != "" {
				return w.Inputs.Unpack(p)
			}
			continue
		case CacheDir:
			continue
		}
		c, err := w.client(e.Cache)
		if err != nil {
			return "", err
		}
		ss := NewSymSrv(e.URL, c)
		var p string
		if code {
			p, err = ss.FetchPE(symbols.Module{CodeFile: name, CodeID: id})
		} else {
			p, err = ss.FetchPDB(symbols.Module{DebugFile: name, DebugID: id})
		}
		if err == nil {
			return w.Inputs.Unpack(p)
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return "", fmt.Errorf("%s %s: no symbol store to fetch it from (give --symbol-server)", name, id)
	}
	return "", fmt.Errorf("%s %s: %w", name, id, errors.Join(errs...))
}

// FindPDB returns the function finding the PDB of a PE in the directory
// dir (the PE's own, or the cabinet's it came from; pe.Options.FindPDB):
// a file or cabinet beside it (name.pd_), then the symbol path's local
// stores (their trees, then a plain DIR/name) and the servers' caches,
// then the servers, in order. A file found that is not a PDB is skipped
// (and a server's, answering 200 with something else, removed).
func (w *WinFiles) FindPDB(dir string) func(name, id string) (string, error) {
	return func(name, id string) (string, error) {
		if err := symstore.CheckName(name); err != nil {
			return "", fmt.Errorf("PDB name from the CodeView record: %w", err)
		}
		if err := symstore.CheckName(id); err != nil {
			return "", fmt.Errorf("PDB identifier: %w", err)
		}
		if dir != "" {
			for _, n := range []string{name, symstore.PackedName(name)} {
				if p := filepath.Join(dir, n); isFile(p) {
					return w.Inputs.PDBFile(p)
				}
			}
		}
		// The caches and local stores first, then the servers, as
		// Mozilla's dump_syms asks them.
		for _, e := range w.Path {
			var cands []string
			switch e.Kind {
			case CacheDir:
				continue
			case StoreDir, PlainDir:
				if p, _ := pdbsyms.StoreFile(e.Dir, name, id); p != "" {
					cands = append(cands, p)
				}
				cands = append(cands, filepath.Join(e.Dir, name))
			default:
				if c, err := w.client(e.Cache); err == nil {
					elems, _ := symstore.MicrosoftPath(name, id, symstore.Plain)
					if p, ok := c.Cache.Lookup(elems...); ok {
						cands = []string{p}
					}
				}
			}
			for _, p := range cands {
				if isFile(p) {
					if pp, err := w.Inputs.PDBFile(p); err == nil {
						return pp, nil
					} else {
						w.warn("%v", err)
					}
				}
			}
		}
		var errs []error
		for _, e := range w.Path {
			if e.Kind != SymbolServer && e.Kind != PlainURL {
				continue
			}
			c, err := w.client(e.Cache)
			if err != nil {
				return "", err
			}
			p, err := NewSymSrv(e.URL, c).FetchPDB(symbols.Module{DebugFile: name, DebugID: id})
			if err != nil {
				errs = append(errs, err) // said by the PE's warning
				continue
			}
			pp, err := w.Inputs.PDBFile(p)
			if err != nil {
				// A server answering 200 with something else ("Symbol
				// Not Found"): not kept.
				os.Remove(p)
				w.warn("symbol server %s: %v", e.URL, err)
				errs = append(errs, err)
				continue
			}
			return pp, nil
		}
		if len(errs) == 0 {
			return "", fmt.Errorf("%s %s: in no symbol store (no symbol path: give --symbol-server or set _NT_SYMBOL_PATH)", name, id)
		}
		return "", fmt.Errorf("%s %s: %w", name, id, errors.Join(errs...))
	}
}
