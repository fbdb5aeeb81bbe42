package remote

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/breakpad"
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

	files breakpad.Files
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
