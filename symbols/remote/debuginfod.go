package remote

import (
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gobreakpad/gobreakpad/moduleid"
	"github.com/gobreakpad/gobreakpad/symbols/cache"

	"github.com/gobreakpad/gobreakpad/symbols"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symbols/elfsyms"
)

// Debuginfod is a symbols.Source over a debuginfod server (elfutils): for an
// ELF module with a build ID (the minidump's code identifier), it fetches
// URL/buildid/BUILDID/debuginfo (the separate debug file) and
// URL/buildid/BUILDID/executable (the binary, for its .eh_frame unwind
// rules and symbol table), keeps them in the cache as
// buildid/BUILDID/debuginfo and .../executable, and turns them into a
// Breakpad .sym file with dumpsyms/elf, kept beside them as
// buildid/BUILDID/breakpad.sym.
type Debuginfod struct {
	URL    string
	Client *Client
	// Warn, when set, receives dumpsyms's warnings.
	Warn func(format string, args ...any)

	files symbreakpad.Files
	conv  symbols.Once
}

// NewDebuginfod returns the source of the server at url.
func NewDebuginfod(url string, c *Client) *Debuginfod {
	return &Debuginfod{URL: strings.TrimRight(url, "/"), Client: c}
}

// String names the source.
func (d *Debuginfod) String() string { return d.URL + " (debuginfod)" }

// Load implements symbols.Source.
func (d *Debuginfod) Load(m symbols.Module) (*symbols.Symbols, error) {
	id := elfsyms.BuildID(m)
	if id == "" {
		return nil, fmt.Errorf("%w: %s: no ELF build ID", symbols.ErrNotFound, m.DebugFile)
	}
	p, err := d.conv.Do(id, func() (string, error) { return d.convert(m, id) })
	if err != nil {
		return nil, err
	}
	return d.files.Open(p)
}

// convert returns the path of the module's .sym file in the cache, made
// from the server's files if it is not there yet.
func (d *Debuginfod) convert(m symbols.Module, id string) (string, error) {
	c := d.Client
	if p, ok := c.Cache.Lookup("buildid", id, elfsyms.ConvertedName); ok {
		return p, nil
	}
	dbg, errD := c.Fetch(d.URL, "buildid", id, "debuginfo")
	exe, errE := c.Fetch(d.URL, "buildid", id, "executable")
	if errD != nil && errE != nil {
		if !errors.Is(errD, symbols.ErrNotFound) {
			return "", errD
		}
		return "", fmt.Errorf("%w; %v", errD, errE)
	}
	if errE != nil {
		exe = ""
	}
	if errD != nil {
		dbg = ""
	}
	p, err := elfsyms.Convert(c.Cache, id, elfsyms.ModuleName(m), exe, dbg, d.Warn)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", symbols.ErrNotFound, d.URL, err)
	}
	return p, nil
}

// Close releases the symbol files mapped by Load.
func (d *Debuginfod) Close() error { return d.files.Close() }

// DebugDir fetches the separate debug file of the stripped ELF binary at
// path (no .debug_info) from the debuginfod servers urls, by its build ID,
// as elfutils' and gdb's tools do, into the cache cacheDir ("":
// cache.DefaultDir), and returns a debug directory holding it as
// .build-id/xx/rest.debug (a link to the cached file) with the function
// removing that directory. It returns "" when there is nothing to fetch (no
// server, not an ELF file, DWARF present, no build ID) or no server has it
// (saying why through warn).
func DebugDir(path, cacheDir string, urls []string, progress io.Writer, warn func(string, ...any)) (string, func(), error) {
	if len(urls) == 0 {
		return "", nil, nil
	}
	f, err := elf.Open(path)
	if err != nil {
		return "", nil, nil // not an ELF file: its reader reports it
	}
	hasDWARF := f.Section(".debug_info") != nil || f.Section(".zdebug_info") != nil
	id, idErr := moduleid.BuildIDNote(f)
	f.Close()
	if hasDWARF || idErr != nil || len(id) == 0 {
		return "", nil, nil
	}
	if cacheDir == "" {
		if cacheDir, err = cache.DefaultDir(); err != nil {
			return "", nil, fmt.Errorf("symbol cache: %w (give one with --symbols-cache)", err)
		}
	}
	bid := hex.EncodeToString(id)
	c := &Client{Cache: &cache.Cache{Dir: cacheDir}, Progress: progress, UserAgent: "gobreakpad"}
	for _, u := range urls {
		dbg, err := c.Fetch(u, "buildid", bid, "debuginfo")
		if err != nil {
			warn("debuginfod: %v", err)
			continue
		}
		abs, err := filepath.Abs(dbg)
		if err != nil {
			return "", nil, err
		}
		tmp, err := os.MkdirTemp("", "dump_syms-debuginfod-")
		if err != nil {
			return "", nil, err
		}
		cleanup := func() { os.RemoveAll(tmp) }
		link := filepath.Join(tmp, ".build-id", bid[:2], bid[2:]+".debug")
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			cleanup()
			return "", nil, err
		}
		if err := os.Symlink(abs, link); err != nil {
			cleanup()
			return "", nil, err
		}
		return tmp, cleanup, nil
	}
	return "", nil, nil
}
