package symsrc

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dsbreakpad "github.com/gobreakpad/gobreakpad/dumpsyms/breakpad"
	dssymcache "github.com/gobreakpad/gobreakpad/dumpsyms/symcache"
	"github.com/gobreakpad/gobreakpad/symbols"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symbols/cache"
	"github.com/gobreakpad/gobreakpad/symbols/cfiindex"
	symsymcache "github.com/gobreakpad/gobreakpad/symbols/symcache"
	"github.com/gobreakpad/gobreakpad/symcache"
	"github.com/gobreakpad/gobreakpad/symfile"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// Cache file extensions of the fast path for .sym files (docs/symcache.md).
const (
	fastSymcExt  = ".symc"
	fastIndexExt = ".cfidx"
)

// fastDirs is the Breakpad store source with the fast path: for a module's
// .sym found in the stores, a SymCache (lookups) and a cfiindex (unwind
// rules) made from that same .sym (same size and modification time) in the
// cache directory answer instead of the .sym, which is then not opened.
// Without them the .sym is loaded as by breakpad.Dirs, and both are written
// into the cache when the sources are closed (after the walk).
type fastDirs struct {
	store *symfile.Store
	cache *cache.Cache

	mu      sync.Mutex
	loaded  map[string]*fastFile
	closers []io.Closer
	// retired are the files of .sym files replaced since they were
	// loaded: walks may still hold their symbols, so they are released
	// only by Close.
	retired []*fastFile
}

// recheck is how often a loaded .sym is checked (its size and
// modification time) for a replacement, as a symbol server's upload of
// changed symbols for the same module makes: a long-running walker
// (crashd's processor) then walks with the new file. A variable for the
// tests.
var recheck = time.Second

type fastFile struct {
	once sync.Once
	syms *symbols.Symbols
	err  error
	// checked is when the .sym was last found unchanged (UnixNano).
	checked atomic.Int64
	// Set when the .sym was loaded: what the cache files are made from.
	t        *symfile.Table
	symPath  string
	elems    []string // cache names of the .sym (NAME, ID, NAME.sym)
	src      cfiindex.Stamp
	hasCache bool
}

func newFastDirs(c *cache.Cache, roots ...string) *fastDirs {
	return &fastDirs{store: symfile.NewStore(roots...), cache: c, loaded: map[string]*fastFile{}}
}

// cacheElems returns the cache names of a module's .sym (NAME, ID,
// NAME.sym), or false when its names cannot form them.
func cacheElems(m symbols.Module) ([]string, bool) {
	e, err := symstore.BreakpadPath(m.DebugFile, m.DebugID, ".sym")
	if err != nil {
		return nil, false
	}
	for _, s := range e {
		if symstore.CheckName(s) != nil {
			return nil, false
		}
	}
	return e, true
}

// with returns elems with the file name's .sym extension replaced by ext.
func with(elems []string, ext string) []string {
	return []string{elems[0], elems[1], strings.TrimSuffix(elems[2], ".sym") + ext}
}

// Load implements symbols.Source.
func (d *fastDirs) Load(m symbols.Module) (*symbols.Symbols, error) {
	p, err := d.store.Find(m.DebugFile, m.DebugID)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", symbols.ErrNotFound, err)
	}
	d.mu.Lock()
	ff := d.loaded[p]
	if ff == nil {
		ff = &fastFile{}
		d.loaded[p] = ff
	}
	d.mu.Unlock()
	ff.once.Do(func() { d.open(ff, p, m) })
	if now := time.Now().UnixNano(); now-ff.checked.Load() >= int64(recheck) && ff.src.Size != 0 {
		ff.checked.Store(now)
		if fi, err := os.Stat(p); err == nil && (fi.Size() != ff.src.Size || fi.ModTime().UnixNano() != ff.src.ModTime) {
			// Replaced: load the new file; the old stays open for the
			// walks holding it.
			d.mu.Lock()
			if d.loaded[p] == ff {
				d.retired = append(d.retired, ff)
				ff = &fastFile{}
				d.loaded[p] = ff
			} else {
				ff = d.loaded[p]
			}
			d.mu.Unlock()
			ff.once.Do(func() { d.open(ff, p, m) })
		}
	}
	if ff.err != nil {
		return nil, ff.err
	}
	return ff.syms, nil
}

func (d *fastDirs) open(ff *fastFile, p string, m symbols.Module) {
	ff.checked.Store(time.Now().UnixNano())
	fi, err := os.Stat(p)
	elems, named := cacheElems(m)
	if err == nil && named {
		ff.src = cfiindex.Stamp{Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
		ff.elems = elems
		if d.openCached(ff, m) {
			return
		}
	}
	t, err := symfile.Open(p)
	if err != nil {
		ff.err = err
		return
	}
	ff.t, ff.symPath = t, p
	ff.syms = symbreakpad.Symbols(t)
}

// openCached serves ff from the cache files when they were made from the
// same .sym; it reports false when they are missing, stale or unreadable,
// or when the .sym's lookups cannot be served from a SymCache.
func (d *fastDirs) openCached(ff *fastFile, m symbols.Module) bool {
	ip, ok := d.cache.Lookup(with(ff.elems, fastIndexExt)...)
	if !ok {
		return false
	}
	x, err := cfiindex.Open(ip)
	if err != nil {
		return false
	}
	ff.hasCache = x.Source == ff.src // up to date: not rewritten
	if !ff.hasCache || x.Flags&cfiindex.FlagNoLookups != 0 {
		x.Close()
		return false
	}
	cp, ok := d.cache.Lookup(with(ff.elems, fastSymcExt)...)
	if !ok {
		x.Close()
		ff.hasCache = false
		return false
	}
	c, err := symcache.Open(cp)
	if err != nil || !strings.EqualFold(c.DebugID.String(), m.DebugID) {
		if c != nil {
			c.Close()
		}
		x.Close()
		ff.hasCache = false
		return false
	}
	c.RawPaths = true // names as the .sym wrote them
	s := &symbols.Symbols{Lookup: &symsymcache.Table{Cache: c}, Win: x, Corrupt: x.Flags&cfiindex.FlagCorrupt != 0}
	if x.HasCFI() {
		s.CFI = x
	}
	ff.syms = s
	d.mu.Lock()
	d.closers = append(d.closers, x, c)
	d.mu.Unlock()
	return true
}

// Close writes the cache files of the .sym files loaded (after the walk: the
// conversion costs a reading of the .sym into the symbol model, done once)
// and releases the files.
func (d *fastDirs) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var first error
	for p, ff := range d.loaded {
		if ff.t != nil {
			if !ff.hasCache && ff.elems != nil {
				// A cache that cannot be written is no error of the walk.
				_ = d.convert(ff)
			}
			if err := ff.t.Close(); err != nil && first == nil {
				first = err
			}
		}
		delete(d.loaded, p)
	}
	for _, ff := range d.retired {
		if ff.t != nil {
			if err := ff.t.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	d.retired = nil
	for _, c := range d.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	d.closers = nil
	return first
}

// convert writes the SymCache, then the index (whose presence, with the
// .sym's size and time, says both are complete).
func (d *fastDirs) convert(ff *fastFile) error {
	// The lazy model: functions decoded one at a time from the mapped
	// .sym, no STACK records (the index made below has them).
	model, closer, err := dsbreakpad.Open(ff.symPath, nil)
	if err != nil {
		return err
	}
	defer closer.Close()
	noLookups := false
	if representable(model) {
		if _, err := d.cache.WriteFunc(func(out io.Writer) error {
			return dssymcache.Write(out, model, symcache.LatestVersion)
		}, with(ff.elems, fastSymcExt)...); err != nil {
			return err
		}
	} else {
		noLookups = true
	}
	closer.Close()
	// The index is made once the SymCache is written, so that the two
	// are never in memory together.
	w := cfiindex.FromTable(ff.t)
	w.Source = ff.src
	if noLookups {
		w.Flags |= cfiindex.FlagNoLookups
	}
	_, err = d.cache.WriteFunc(func(out io.Writer) error {
		_, err := w.WriteTo(out)
		return err
	}, with(ff.elems, fastIndexExt)...)
	return err
}

// representable reports whether a SymCache answers the model's lookups as
// the .sym does: every address below 4 GiB.
func representable(s *dumpsyms.Model) bool {
	const lim = 1 << 32
	for i := range s.NumPublics() {
		if s.Public(i).Address >= lim {
			return false
		}
	}
	var buf dumpsyms.Function
	for i := range s.NumFuncs() {
		f := s.Func(i, &buf, true)
		for _, r := range f.Ranges {
			if r.Address >= lim || r.Size > lim-r.Address {
				return false
			}
		}
		for _, l := range f.Lines {
			if l.Address >= lim || l.Size > lim-l.Address {
				return false
			}
		}
	}
	return true
}

// WriteFast writes the fast forms of the .sym at symPath, a module's file
// in a Breakpad store (a SymCache for lookups, a cfiindex for unwind
// rules, stamped with the .sym's size and modification time), into the
// cache directory cacheDir: a Sources whose CacheDir is cacheDir (as
// --symbols-cache names it) then answers that module from them without
// parsing the .sym. A symbol server calls it when a .sym is uploaded, so
// that no walk parses a big .sym.
func WriteFast(cacheDir, symPath, debugFile, debugID string) error {
	elems, ok := cacheElems(symbols.Module{DebugFile: debugFile, DebugID: debugID})
	if !ok {
		return fmt.Errorf("fast forms of %s %s: unusable names", debugFile, debugID)
	}
	fi, err := os.Stat(symPath)
	if err != nil {
		return fmt.Errorf("fast forms: %w", err)
	}
	t, err := symfile.Open(symPath)
	if err != nil {
		return fmt.Errorf("fast forms: %w", err)
	}
	defer t.Close()
	d := &fastDirs{cache: &cache.Cache{Dir: filepath.Clean(cacheDir)}}
	ff := &fastFile{t: t, symPath: symPath, elems: elems, src: cfiindex.Stamp{Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}}
	if err := d.convert(ff); err != nil {
		return fmt.Errorf("fast forms of %s: %w", symPath, err)
	}
	return nil
}

// FastFiles returns the paths of the fast forms of a module's .sym in the
// cache directory cacheDir (the SymCache and the unwind index WriteFast
// writes), whether they exist or not.
func FastFiles(cacheDir, debugFile, debugID string) (symc, index string, err error) {
	elems, ok := cacheElems(symbols.Module{DebugFile: debugFile, DebugID: debugID})
	if !ok {
		return "", "", fmt.Errorf("fast forms of %s %s: unusable names", debugFile, debugID)
	}
	c := &cache.Cache{Dir: filepath.Clean(cacheDir)}
	if symc, err = c.Path(with(elems, fastSymcExt)...); err != nil {
		return "", "", err
	}
	if index, err = c.Path(with(elems, fastIndexExt)...); err != nil {
		return "", "", err
	}
	return symc, index, nil
}

// InstallFast puts into the cache directory cacheDir fast forms that
// WriteFast made elsewhere (another machine's symbol server) from the
// same .sym as the one at symPath: symc and index are their bytes (at
// most limit each). The index is stamped with its .sym's size and
// modification time: symPath's time is set to the stamp's when its size
// matches, so that the sources use them; otherwise nothing is installed
// (an error).
func InstallFast(cacheDir, symPath, debugFile, debugID string, symc, index io.Reader, limit int64) error {
	elems, ok := cacheElems(symbols.Module{DebugFile: debugFile, DebugID: debugID})
	if !ok {
		return fmt.Errorf("fast forms of %s %s: unusable names", debugFile, debugID)
	}
	c := &cache.Cache{Dir: filepath.Clean(cacheDir)}
	// The SymCache first, the index last (its presence says both are
	// there, as convert writes them).
	cp, err := c.Write(symc, limit, with(elems, fastSymcExt)...)
	if err != nil {
		return fmt.Errorf("fast forms of %s %s: %w", debugFile, debugID, err)
	}
	ip, err := c.Write(index, limit, with(elems, fastIndexExt)...)
	if err != nil {
		os.Remove(cp)
		return fmt.Errorf("fast forms of %s %s: %w", debugFile, debugID, err)
	}
	x, err := cfiindex.Open(ip)
	var stamp cfiindex.Stamp
	if err == nil {
		stamp = x.Source
		x.Close()
		var fi os.FileInfo
		if fi, err = os.Stat(symPath); err == nil && fi.Size() != stamp.Size {
			err = fmt.Errorf("made from a .sym of %d bytes, not %d", stamp.Size, fi.Size())
		}
	}
	if err == nil {
		t := time.Unix(0, stamp.ModTime)
		err = os.Chtimes(symPath, t, t)
	}
	if err != nil {
		os.Remove(ip)
		os.Remove(cp)
		return fmt.Errorf("fast forms of %s %s: %w", debugFile, debugID, err)
	}
	return nil
}
