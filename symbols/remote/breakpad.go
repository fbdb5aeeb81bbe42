package remote

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gobreakpad/gobreakpad/symbols"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// Breakpad is a symbols.Source over a Breakpad-layout HTTP store: the symbol
// file of a module is URL/NAME/ID/NAME.sym (NAME the debug file's base name,
// ".pdb" replaced by ".sym" in the last element), as Mozilla's Tecken and
// Breakpad's HTTP symbol supplier serve. Downloads are kept in the client's
// cache in the same layout, so the cache directory is a Breakpad symbol path.
type Breakpad struct {
	URL    string
	Client *Client
	dirs   *symbreakpad.Dirs
}

// NewBreakpad returns the source of the store at url.
func NewBreakpad(url string, c *Client) *Breakpad {
	return &Breakpad{URL: strings.TrimRight(url, "/"), Client: c, dirs: symbreakpad.NewDirs(c.Cache.Dir)}
}

// String names the source.
func (b *Breakpad) String() string { return b.URL }

// Load implements symbols.Source.
func (b *Breakpad) Load(m symbols.Module) (*symbols.Symbols, error) {
	elems, err := symstore.BreakpadPath(m.DebugFile, m.DebugID, ".sym")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", symbols.ErrNotFound, err)
	}
	// A cached file answers without a request.
	s, err := b.dirs.Load(m)
	if err == nil || !errors.Is(err, symbols.ErrNotFound) {
		return s, err
	}
	if _, err := b.Client.Fetch(b.URL, elems...); err != nil {
		return nil, err
	}
	return b.dirs.Load(m)
}

// Close releases the symbol files mapped by Load.
func (b *Breakpad) Close() error { return b.dirs.Close() }
