package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gobreakpad/gobreakpad/cmd/internal/cmdline"
	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/dumpsyms/pe"
	"github.com/gobreakpad/gobreakpad/pdb"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/cache"
	"github.com/gobreakpad/gobreakpad/symbols/remote"
	"github.com/gobreakpad/gobreakpad/symstore"
	"github.com/urfave/cli/v3"
)

// defaultSymbolServer is the server of a bare "srv" element, as in
// Mozilla's dump_syms and Microsoft's tools.
const defaultSymbolServer = "https://msdl.microsoft.com/download/symbols"

// symbolServerUserAgent is sent to symbol servers, as Mozilla's dump_syms
// sends it (some servers answer only Microsoft's client).
const symbolServerUserAgent = "Microsoft-Symbol-Server/6.3.0.0"

// A symServer is one element of a symbol path: a server URL with the
// cache its files are kept in, or a local store tree (dir).
type symServer struct {
	url   string
	cache string // "" : the default cache
	dir   string
}

// parseSymbolPath reads a symbol path as Mozilla's dump_syms reads
// --symbol-server (and $HOME/.dump_syms/config), elements separated by ';'
// or new lines: "srv*URL", "srv*CACHE*URL", a bare "srv" (Microsoft's
// server). As Microsoft's tools also read _NT_SYMBOL_PATH: "srv*C1*C2*URL"
// (the first downstream store is the cache), "symsrv*symsrv.dll*...",
// "cache*DIR" (the cache of the srv elements after it that name none),
// and "srv*DIR" or a plain DIR (a local symbol store tree, searched
// before the servers). A leading "~" in a directory is the home
// directory.
func parseSymbolPath(spec string) []symServer {
	var out []symServer
	defCache := ""
	for _, e := range strings.FieldsFunc(spec, func(r rune) bool { return r == ';' || r == '\n' || r == '\r' }) {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		parts := strings.Split(e, "*")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		switch strings.ToLower(parts[0]) {
		case "cache":
			if len(parts) > 1 && parts[1] != "" {
				defCache = homeDir(parts[1])
			}
			continue
		case "symsrv":
			if len(parts) < 2 {
				continue
			}
			parts = append([]string{"srv"}, parts[2:]...) // symsrv*symsrv.dll*...
			fallthrough
		case "srv":
			last := ""
			if len(parts) > 1 {
				last = parts[len(parts)-1]
			}
			c := defCache
			if len(parts) > 2 && parts[1] != "" {
				c = homeDir(parts[1])
			}
			switch {
			case last == "":
				out = append(out, symServer{url: defaultSymbolServer, cache: c})
			case isHTTP(last):
				out = append(out, symServer{url: strings.TrimRight(last, "/"), cache: c})
			default:
				out = append(out, symServer{dir: homeDir(last)})
			}
			continue
		}
		if isHTTP(e) {
			out = append(out, symServer{url: strings.TrimRight(e, "/"), cache: defCache})
		} else {
			out = append(out, symServer{dir: homeDir(e)})
		}
	}
	return out
}

func isHTTP(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// homeDir replaces a leading "~" with the home directory.
func homeDir(p string) string {
	if strings.HasPrefix(p, "~") {
		if h, err := os.UserHomeDir(); err == nil {
			return h + p[1:]
		}
	}
	return p
}

// symbolPath returns the symbol path dump_syms uses and where it came
// from: --symbol-server, else $HOME/.dump_syms/config (Mozilla's
// dump_syms), else $_NT_SYMBOL_PATH (Microsoft's tools).
func symbolPath(flag string) (spec, from string) {
	if flag != "" {
		return flag, "--symbol-server"
	}
	if h, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(h, ".dump_syms", "config")
		if b, err := os.ReadFile(p); err == nil && len(parseSymbolPath(string(b))) > 0 {
			return string(b), p
		}
	}
	if s := os.Getenv("_NT_SYMBOL_PATH"); s != "" {
		return s, "$_NT_SYMBOL_PATH"
	}
	return "", ""
}

// winFiles finds the Windows files dump_syms reads: it extracts cabinets
// (.pd_, .ex_, .dl_) into a temporary directory and fetches PDBs from
// symbol servers into their caches.
type winFiles struct {
	servers  []symServer
	cacheDir string // the cache of servers naming none ("": cache.DefaultDir)
	maxRatio int64  // a cabinet's file may hold this many times the cabinet's size (at least 64 MiB)
	progress io.Writer
	warn     func(string, ...any)

	tmp     string
	clients map[string]*remote.Client
}

// Close removes the extracted files.
func (w *winFiles) Close() {
	if w.tmp != "" {
		os.RemoveAll(w.tmp)
	}
}

// client returns the HTTP client of a cache directory.
func (w *winFiles) client(dir string) (*remote.Client, error) {
	if dir == "" {
		dir = w.cacheDir
	}
	dir, err := cache.DirOr(dir)
	if err != nil {
		return nil, err
	}
	if c := w.clients[dir]; c != nil {
		return c, nil
	}
	if w.clients == nil {
		w.clients = map[string]*remote.Client{}
	}
	// Misses are not remembered: a PDB uploaded after a failed run is
	// found by the next one.
	c := &remote.Client{Cache: &cache.Cache{Dir: dir, MissTTL: -1}, Progress: w.progress, UserAgent: symbolServerUserAgent}
	w.clients[dir] = c
	return c, nil
}

// findPDB returns the function asking for the PDB of a PE in the
// directory dir (the PE's own, or the cabinet's it came from): a
// cabinet beside it (name.pd_), then the symbol path's caches and local
// stores, then its servers, in order. Names never become paths unless
// symstore.CheckName accepts them.
func (w *winFiles) findPDB(dir string) func(name, id string) (string, error) {
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
					return w.pdbFile(p)
				}
			}
		}
		// The caches and local stores first, then the servers, as
		// Mozilla's dump_syms asks them.
		for _, s := range w.servers {
			var cands []string
			if s.dir != "" {
				cands = append(storePaths(s.dir, name, id), filepath.Join(s.dir, name))
			} else if c, err := w.client(s.cache); err == nil {
				if p, ok := c.Cache.Lookup(name, id, name); ok {
					cands = []string{p}
				}
			}
			for _, p := range cands {
				if isFile(p) {
					if pp, err := w.pdbFile(p); err == nil {
						return pp, nil
					} else {
						w.warn("%v", err)
					}
				}
			}
		}
		var errs []error
		for _, s := range w.servers {
			if s.url == "" {
				continue
			}
			c, err := w.client(s.cache)
			if err != nil {
				return "", err
			}
			ss := remote.NewSymSrv(s.url, c)
			p, err := ss.FetchPDB(symbols.Module{DebugFile: name, DebugID: id})
			if err != nil {
				errs = append(errs, err) // said by the PE's warning
				continue
			}
			pp, err := w.pdbFile(p)
			if err != nil {
				// A server answering 200 with something else ("Symbol
				// Not Found"): not kept.
				os.Remove(p)
				w.warn("symbol server %s: %v", s.url, err)
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

// pdbFile returns the PDB at path, extracting it when it is a cabinet
// (as Mozilla's dump_syms keeps them in its caches), and fails when the
// file is neither.
func (w *winFiles) pdbFile(path string) (string, error) {
	p, err := w.unpack(path)
	if err != nil {
		return "", err
	}
	if magic(p, len(pdb.Magic)) != pdb.Magic {
		return "", fmt.Errorf("%s: not a PDB 7.0 file", path)
	}
	return p, nil
}

// storePaths returns where the symbol-store tree dir keeps file name with
// identifier id: plain, then as a cabinet.
func storePaths(dir, name, id string) []string {
	return []string{filepath.Join(dir, name, id, name), filepath.Join(dir, name, id, symstore.PackedName(name))}
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// fetchByID fetches the file named name with identifier id (a PDB's debug
// identifier, or a PE's code identifier: Mozilla's --debug-id and
// --code-id) from the symbol path, into a cache.
func (w *winFiles) fetchByID(name, id string, code bool) (string, error) {
	name = symstore.BaseName(name)
	if err := symstore.CheckName(name); err != nil {
		return "", err
	}
	if err := symstore.CheckName(id); err != nil {
		return "", err
	}
	var errs []error
	for _, s := range w.servers {
		if s.dir != "" {
			for _, p := range storePaths(s.dir, name, id) {
				if isFile(p) {
					return w.unpack(p)
				}
			}
			continue
		}
		c, err := w.client(s.cache)
		if err != nil {
			return "", err
		}
		ss := remote.NewSymSrv(s.url, c)
		var p string
		if code {
			p, err = ss.FetchPE(symbols.Module{CodeFile: name, CodeID: id})
		} else {
			p, err = ss.FetchPDB(symbols.Module{DebugFile: name, DebugID: id})
		}
		if err == nil {
			return w.unpack(p)
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return "", fmt.Errorf("%s %s: no symbol store to fetch it from (give --symbol-server)", name, id)
	}
	return "", fmt.Errorf("%s %s: %w", name, id, errors.Join(errs...))
}

// dumpInput dumps the file named on the command line (orig): fetched
// first from the symbol path when id is given (a PDB's debug identifier,
// or with code a PE's code identifier), extracted when it is a cabinet,
// then read by its magic. The PDB of a PE is looked for beside the PE,
// at the path its CodeView record names, as a cabinet beside the PE, then
// in the symbol path (w.findPDB); the PE of a PDB beside the PDB, plain or
// as a cabinet.
func dumpInput(orig, id string, code bool, opts pe.Options, w *winFiles) (*dumpsyms.Symbols, error) {
	path := orig
	if id != "" {
		p, err := w.fetchByID(orig, id, code)
		if err != nil {
			return nil, err
		}
		path = p
	}
	u, err := w.unpack(path)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(orig)
	opts.FindPDB = w.findPDB(dir)
	if magic(u, len(pdb.Magic)) != pdb.Magic {
		return dump(u, opts)
	}
	stem := strings.TrimSuffix(filepath.Base(u), filepath.Ext(u))
	if u != orig {
		// A PDB away from its PE: the PE beside the file named.
		return pe.DumpFiles(u, w.companionPE(dir, stem), opts)
	}
	if !isFile(filepath.Join(dir, stem+".exe")) && !isFile(filepath.Join(dir, stem+".dll")) {
		if p := w.companionPE(dir, stem); p != "" {
			return pe.DumpFiles(u, p, opts) // NAME.ex_ or NAME.dl_ beside it
		}
	}
	return dump(u, opts)
}

// dumpWindows is dumpInput with the command line's choices: the symbol
// path, --debug-id or --code-id, the cache and the inflate ratio.
func dumpWindows(c *cli.Command, path string, opts pe.Options, stderr io.Writer) (*dumpsyms.Symbols, error) {
	warn := opts.Warn
	if warn == nil {
		warn = func(string, ...any) {}
	}
	spec, _ := symbolPath(c.String("symbol-server"))
	w := &winFiles{servers: parseSymbolPath(spec), cacheDir: c.String("symbols-cache"),
		maxRatio: int64(c.Int("max-inflate-ratio")), progress: stderr, warn: warn}
	defer w.Close()
	id, code := c.String("debug-id"), false
	if cid := c.String("code-id"); cid != "" {
		if id != "" {
			return nil, cmdline.Usagef("--debug-id and --code-id: give one")
		}
		id, code = cid, true
	}
	return dumpInput(path, id, code, opts, w)
}
