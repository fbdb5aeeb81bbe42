package remote

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/dumpsyms/elf"
	"github.com/gobreakpad/gobreakpad/symbols"
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

	files symFiles
	mu    sync.Mutex
	conv  map[string]*conversion
}

type conversion struct {
	once sync.Once
	path string
	err  error
}

// NewDebuginfod returns the source of the server at url.
func NewDebuginfod(url string, c *Client) *Debuginfod {
	return &Debuginfod{URL: strings.TrimRight(url, "/"), Client: c}
}

// String names the source.
func (d *Debuginfod) String() string { return d.URL + " (debuginfod)" }

// BuildID returns the module's ELF build ID in lower-case hex, or "" when
// its code identifier cannot be one (PE code identifiers and PDB modules are
// skipped without a request).
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

// Load implements symbols.Source.
func (d *Debuginfod) Load(m symbols.Module) (*symbols.Symbols, error) {
	id := BuildID(m)
	if id == "" {
		return nil, fmt.Errorf("%w: %s: no ELF build ID", symbols.ErrNotFound, m.DebugFile)
	}
	d.mu.Lock()
	if d.conv == nil {
		d.conv = map[string]*conversion{}
	}
	cv := d.conv[id]
	if cv == nil {
		cv = &conversion{}
		d.conv[id] = cv
	}
	d.mu.Unlock()
	cv.once.Do(func() { cv.path, cv.err = d.convert(m, id) })
	if cv.err != nil {
		return nil, cv.err
	}
	return d.files.open(cv.path)
}

// convert returns the path of the module's .sym file in the cache, made
// from the server's files if it is not there yet.
func (d *Debuginfod) convert(m symbols.Module, id string) (string, error) {
	c := d.Client
	if p, ok := c.Cache.Lookup("buildid", id, "breakpad.sym"); ok {
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
	opts := dumpsyms.Options{Inlines: true, Warn: d.Warn}
	if name := baseName(m.CodeFile); name != "" {
		opts.Name = name
	} else if name := baseName(m.DebugFile); name != "" {
		opts.Name = name
	}
	path := dbg
	if errE == nil {
		path = exe
		if errD == nil {
			// dumpsyms finds the debug file by build ID in a debug
			// directory: lay one out for it beside the files.
			tmp, err := os.MkdirTemp(filepath.Dir(exe), ".debugdir-")
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
	syms, err := elf.Dump(path, opts)
	if err != nil {
		return "", fmt.Errorf("%w: %s: converting %s: %v", symbols.ErrNotFound, d.URL, path, err)
	}
	return c.Cache.WriteFunc(func(w io.Writer) error { return syms.Write(w) }, "buildid", id, "breakpad.sym")
}

// baseName is the last element of a Unix or Windows path.
func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		p = p[i+1:]
	}
	return p
}

// Close releases the symbol files mapped by Load.
func (d *Debuginfod) Close() error { return d.files.Close() }
