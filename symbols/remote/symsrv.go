package remote

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/pdbsyms"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// SymSrv is a symbols.Source over a Microsoft symbol server (the layout
// symstore.exe writes and SymSrv reads): a file NAME with index ID is
//
//	URL/NAME/ID/NAME     the file itself
//	URL/NAME/ID/NAM_     its CAB-compressed form (last letter '_', MSZIP)
//	URL/NAME/ID/file.ptr "PATH:location" of the file, or "MSG:why not"
//
// where ID is the PDB's GUID and age (the minidump's debug identifier) for
// PDBs, and the PE's timestamp and image size (its code identifier) for
// executables. Files are kept in the cache uncompressed in the same layout,
// the cache then being a downstream store.
//
// Files become symbols through Convert (the programs convert them with
// dumpsyms/pe through symbols/pdbsyms.Converter, see symbols/symsrc); while it is nil
// Load reports every module not found without a request, and FetchPDB and
// FetchPE still fetch files.
type SymSrv struct {
	URL    string
	Client *Client
	// Convert turns a module's PDB and PE (either path may be empty: the
	// server did not have it) into symbols.
	Convert func(m symbols.Module, pdbPath, pePath string) (*symbols.Symbols, error)
}

// NewSymSrv returns the source of the server at url.
func NewSymSrv(url string, c *Client) *SymSrv {
	return &SymSrv{URL: strings.TrimRight(url, "/"), Client: c}
}

// String names the source.
func (s *SymSrv) String() string { return s.URL + " (symbol server)" }

// Load implements symbols.Source.
func (s *SymSrv) Load(m symbols.Module) (*symbols.Symbols, error) {
	if s.Convert == nil {
		return nil, fmt.Errorf("%w: %s: no converter to use its files", symbols.ErrNotFound, s.URL)
	}
	// The PDB and the PE are asked for at once: with a missing PDB, each
	// is a chain of requests (the file, its CAB form, file.ptr).
	var pe string
	var errX error
	done := make(chan struct{})
	go func() {
		defer close(done)
		pe, errX = s.FetchPE(m)
	}()
	pdb, errP := s.FetchPDB(m)
	<-done
	if errP != nil && errX != nil {
		return nil, fmt.Errorf("%w; %v", errP, errX)
	}
	return s.Convert(m, pdb, pe)
}

// FetchPDB returns the path in the cache of the module's PDB, fetched from
// the server when needed.
func (s *SymSrv) FetchPDB(m symbols.Module) (string, error) {
	return s.fetchFile(symstore.BaseName(m.DebugFile), m.DebugID)
}

// FetchPE returns the path in the cache of the module's executable
// (name.exe/TIMESTAMPSIZE/name.exe), fetched from the server when needed.
func (s *SymSrv) FetchPE(m symbols.Module) (string, error) {
	return s.fetchFile(symstore.BaseName(m.CodeFile), m.CodeID)
}

// fetchFile fetches NAME/ID/NAME, its compressed form, or what file.ptr
// names.
func (s *SymSrv) fetchFile(name, id string) (string, error) {
	if name == "" || id == "" {
		return "", fmt.Errorf("%w: no file name or identifier", symbols.ErrNotFound)
	}
	c := s.Client
	local, err := symstore.MicrosoftPath(name, id, symstore.Plain)
	if err != nil {
		return "", &errMiss{err.Error()}
	}
	packed, _ := symstore.MicrosoftPath(name, id, symstore.Packed)
	pointer, _ := symstore.MicrosoftPath(name, id, symstore.Pointer)
	p, err := c.Fetch(s.URL, local...)
	if err == nil || !errors.Is(err, symbols.ErrNotFound) {
		return p, err
	}
	errs := []error{err}
	if cp, err := c.Fetch(s.URL, packed...); err == nil {
		p, err := s.extract(cp, local)
		os.Remove(cp) // kept uncompressed
		return p, err
	} else {
		errs = append(errs, err)
	}
	ptr, err := c.Fetch(s.URL, pointer...)
	if err != nil {
		return "", errors.Join(append(errs, err)...)
	}
	b, err := os.ReadFile(ptr)
	if err != nil {
		return "", err
	}
	line := strings.TrimSpace(string(b))
	switch {
	case strings.HasPrefix(line, "PATH:http://") || strings.HasPrefix(line, "PATH:https://"):
		return c.fetch(line[len("PATH:"):], nil, local)
	case strings.HasPrefix(line, "MSG:"):
		return "", fmt.Errorf("%w: %s/%s/%s/file.ptr: %s", symbols.ErrNotFound, s.URL, name, id, line[4:])
	}
	// A file share or local path: a server must not make us read files.
	return "", fmt.Errorf("%w: %s/%s/%s/file.ptr: %q not followed (only http and https)", symbols.ErrNotFound, s.URL, name, id, line)
}

// extract stores the one file of the cabinet at path as local.
func (s *SymSrv) extract(path string, local []string) (string, error) {
	limit := s.Client.MaxSize
	if limit <= 0 {
		limit = DefaultMaxSize
	}
	return pdbsyms.Extract(s.Client.Cache, path, limit, local...)
}
