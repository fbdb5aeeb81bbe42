// Package symsrc builds the symbol sources of the programs' command lines
// (docs/symbols.md): symbol path arguments (Breakpad stores, other formats'
// stores beside them, http(s) URLs of Breakpad-layout stores, and
// _NT_SYMBOL_PATH syntax as remote.ParseSymbolPath reads it: srv*CACHE*URL,
// cache*DIR, plain directories), --symbols-url, $_NT_SYMBOL_PATH and
// $DEBUGINFOD_URLS, one cache directory, and the per-module summary of where
// symbols came from (-v).
package symsrc

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/symbols"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symbols/cache"
	"github.com/gobreakpad/gobreakpad/symbols/elfsyms"
	symgsym "github.com/gobreakpad/gobreakpad/symbols/gsym"
	"github.com/gobreakpad/gobreakpad/symbols/machosyms"
	"github.com/gobreakpad/gobreakpad/symbols/pdbsyms"
	"github.com/gobreakpad/gobreakpad/symbols/remote"
	symsymbfile "github.com/gobreakpad/gobreakpad/symbols/symbfile"
	symsymcache "github.com/gobreakpad/gobreakpad/symbols/symcache"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// Config is what a command line says about symbols.
type Config struct {
	// Paths are the symbol path arguments, in order.
	Paths []string
	// URLs are Breakpad-layout HTTP stores (--symbols-url).
	URLs []string
	// CacheDir is the cache directory (--symbols-cache); empty: the
	// default (cache.DefaultDir).
	CacheDir string
	// NTSymbolPath is $_NT_SYMBOL_PATH; DebuginfodURLs $DEBUGINFOD_URLS's
	// servers (remote.DebuginfodURLs).
	NTSymbolPath   string
	DebuginfodURLs []string
	// RequestTimeout bounds each request, WalkTimeout all of them (from
	// Open); zero: the defaults (remote.DefaultRequestTimeout, none).
	RequestTimeout, WalkTimeout time.Duration
	// MissTTL is how long misses are remembered (cache.Cache.MissTTL).
	MissTTL time.Duration
	// LocalMissTTL, when positive, is how long the local sources (symbol
	// store directories and the native files beside them) remember that
	// they did not have a module, instead of looking in their directories
	// again at every walk: for long-running walkers (crashd's processor,
	// DefaultLocalMissTTL), which call Sources.ForgetMisses when symbols
	// are stored. Zero: no memory (each walk looks).
	LocalMissTTL time.Duration
	// Progress receives lines about slow downloads.
	Progress io.Writer
	// Prefetch is how many modules' symbols a walk loads at once ahead of
	// its frames when a source fetches from a server (--prefetch,
	// [Sources.Prefetch]); each client then allows Prefetch downloads at
	// once beyond remote.DefaultParallel, so that the walk's own requests
	// never wait behind the prefetch's. 0: none.
	Prefetch int
	// TempDir, when set, is where downloads are written before they are
	// moved into the cache (rust-minidump's --symbols-tmp; cache.Cache.TempDir).
	TempDir string
	// LocalDirs are directories searched for the modules' native files
	// only (ELF binaries and debug files, PDBs and PEs, converted into the
	// cache), not as symbol stores: rust-minidump's --use-local-debuginfo,
	// the directories of the modules' recorded paths ([ModuleDirs]).
	LocalDirs []string
	// Fill, when set, is called for a module before the local stores are
	// searched for it, to copy its files into the first of Paths (and its
	// fast forms into CacheDir, InstallFast) from where a deployment keeps
	// them: crashd's symbols on its blob store. It returns an error
	// wrapping symbols.ErrNotFound when it has nothing for the module; its
	// misses are remembered as the local stores' (LocalMissTTL).
	Fill func(m symbols.Module) error
}

// ModuleDirs returns the directories, in order and without repeats, of
// those of paths (modules' code and debug file paths as a dump records
// them) that name an existing file on this machine: where
// --use-local-debuginfo looks for native debug files.
func ModuleDirs(paths []string) []string {
	var out []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			continue
		}
		d := filepath.Dir(p)
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// FromEnv fills the fields that come from the environment.
func (c *Config) FromEnv() {
	c.NTSymbolPath = os.Getenv("_NT_SYMBOL_PATH")
	c.DebuginfodURLs = remote.DebuginfodURLs()
}

// Sources is the chain of sources of a command line. Its Load records, per
// module, where symbols came from or why not.
type Sources struct {
	chain    symbols.Chain
	prefetch int
	closers  []io.Closer
	trace    trace
	clients  map[string]*remote.Client
	// Dirs are the local directories searched (for warnings about
	// missing ones).
	Dirs []string
	// caches are the cache directories used.
	caches []string
	// misses are the local sources' remembered misses (nil: none).
	misses *misses
}

// File returns the path of a Breakpad .sym file holding module m's
// symbols, asking the sources for them first (Load: downloads and
// conversions land in the cache): the module's NAME/ID/NAME.sym in a local
// store or a cache, or its conversion from ELF files in a cache
// (buildid/BUILDID/breakpad.sym). It fails when the symbols came in
// another form only (a SymCache, symbfile or GSYM file: give that file
// instead).
func (s *Sources) File(m symbols.Module) (string, error) {
	syms, err := s.Load(m)
	if err == nil && syms.Empty() {
		err = fmt.Errorf("%w: %s %s", symbols.ErrNotFound, m.DebugFile, m.DebugID)
	}
	if err != nil {
		// Say why the servers had nothing (down, refused, ...), not only
		// "not found".
		if why := s.trace.reasons(m); len(why) > 0 {
			return "", fmt.Errorf("%w (%s)", err, strings.Join(why, "; "))
		}
		return "", err
	}
	elems, err := symstore.BreakpadPath(m.DebugFile, m.DebugID, ".sym")
	if err == nil {
		for _, e := range elems {
			if err = symstore.CheckName(e); err != nil {
				break
			}
		}
	}
	if err != nil {
		return "", fmt.Errorf("%q %q: not usable as file names: %w", m.DebugFile, m.DebugID, err)
	}
	var cands []string
	for _, d := range append(append([]string(nil), s.Dirs...), s.caches...) {
		cands = append(cands, filepath.Join(d, filepath.Join(elems...)))
	}
	if id := elfsyms.BuildID(m); id != "" {
		for _, d := range s.caches {
			cands = append(cands, filepath.Join(d, "buildid", id, elfsyms.ConvertedName))
		}
	}
	for _, p := range cands {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s %s: its symbols are in no .sym file (%s)", m.DebugFile, m.DebugID, strings.Join(s.trace.from(m), "; "))
}

// Remote reports whether any source fetches from a server.
func (s *Sources) Remote() bool { return len(s.clients) > 0 }

// Prefetch is the stackwalk.Options.Prefetch of a walk over s:
// Config.Prefetch when a source fetches from a server, else 0. Local stores
// answer in the time of a file open; prefetching would only add the
// reading of the files of the modules the walk never reaches.
func (s *Sources) Prefetch() int {
	if !s.Remote() {
		return 0
	}
	return s.prefetch
}

// Requests returns how many HTTP requests the sources sent.
func (s *Sources) Requests() int64 {
	var n int64
	for _, c := range s.clients {
		n += c.Requests()
	}
	return n
}

// Load implements symbols.Source.
func (s *Sources) Load(m symbols.Module) (*symbols.Symbols, error) { return s.chain.Load(m) }

// Close releases the sources' files.
func (s *Sources) Close() error {
	var first error
	for _, c := range s.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Summary writes one line per module asked for: the sources its symbols
// came from, or why none had them.
func (s *Sources) Summary(w io.Writer, prog string) { s.trace.write(w, prog) }

// isNT reports whether a symbol path argument is in _NT_SYMBOL_PATH syntax.
func isNT(p string) bool {
	for _, e := range strings.Split(p, ";") {
		l := strings.ToLower(e)
		if strings.HasPrefix(l, "srv*") || strings.HasPrefix(l, "symsrv*") || strings.HasPrefix(l, "cache*") {
			return true
		}
	}
	return false
}

// IsRemote reports whether a symbol path argument names servers (a URL or
// _NT_SYMBOL_PATH syntax) rather than one directory.
func IsRemote(p string) bool { return remote.IsHTTP(p) || isNT(p) }

// usableURL reports whether u is an http(s) URL with a host; when it is
// not, it says so in a warning line on w.
func usableURL(u string, w io.Writer) bool {
	pu, err := url.Parse(u)
	if err == nil && (pu.Scheme == "http" || pu.Scheme == "https") && pu.Host != "" {
		return true
	}
	if w != nil {
		fmt.Fprintf(w, "warning: symbol server %q: not an http(s) URL; going on without it\n", u)
	}
	return false
}

// Open builds the sources: local stores first (in the order given), then
// Breakpad HTTP stores (URLs in symbol paths, then --symbols-url), then
// Microsoft symbol servers (srv* elements, the arguments' then
// $_NT_SYMBOL_PATH's), then debuginfod servers.
func Open(cfg Config) (*Sources, error) {
	s := &Sources{clients: map[string]*remote.Client{}, prefetch: max(cfg.Prefetch, 0)}
	var dirs, bpURLs []string
	type srv struct{ cache, url string }
	var srvs []srv
	defCache := cfg.CacheDir
	parseNT := func(p string) {
		for _, e := range remote.ParseSymbolPath(p) {
			switch e.Kind {
			case remote.SymbolServer:
				srvs = append(srvs, srv{e.Cache, e.URL})
			case remote.PlainURL:
				bpURLs = append(bpURLs, e.URL) // cached in the default cache
			default: // local store trees, caches (searched as stores), directories
				dirs = append(dirs, e.Dir)
			}
		}
	}
	for _, p := range cfg.Paths {
		switch {
		case isNT(p):
			parseNT(p)
		case remote.IsHTTP(p):
			bpURLs = append(bpURLs, p)
		default:
			dirs = append(dirs, p)
		}
	}
	if cfg.NTSymbolPath != "" {
		parseNT(cfg.NTSymbolPath)
	}
	bpURLs = append(bpURLs, cfg.URLs...)
	bpURLs = slices.DeleteFunc(bpURLs, func(u string) bool { return !usableURL(u, cfg.Progress) })
	srvs = slices.DeleteFunc(srvs, func(sv srv) bool { return !usableURL(sv.url, cfg.Progress) })
	s.Dirs = dirs

	var deadline time.Time
	if cfg.WalkTimeout > 0 {
		deadline = time.Now().Add(cfg.WalkTimeout)
	}
	client := func(dir string) (*remote.Client, error) {
		if dir == "" {
			dir = defCache
		}
		dir, err := cache.DirOr(dir)
		if err != nil {
			return nil, err
		}
		if c := s.clients[dir]; c != nil {
			return c, nil
		}
		if !slices.Contains(s.caches, dir) {
			s.caches = append(s.caches, dir)
		}
		c := &remote.Client{Cache: &cache.Cache{Dir: dir, MissTTL: cfg.MissTTL, TempDir: cfg.TempDir}, RequestTimeout: cfg.RequestTimeout,
			Deadline: deadline, Progress: cfg.Progress, UserAgent: "gobreakpad"}
		if s.prefetch > 0 {
			c.Parallel = remote.DefaultParallel + s.prefetch
		}
		s.clients[dir] = c
		return c, nil
	}

	// One converter of PDBs and PEs per cache directory: a module is
	// converted once, whichever source found its files.
	convs := map[string]*pdbsyms.Converter{}
	converter := func(c *cache.Cache) *pdbsyms.Converter {
		if conv := convs[c.Dir]; conv != nil {
			return conv
		}
		conv := &pdbsyms.Converter{Cache: c}
		convs[c.Dir] = conv
		s.closers = append(s.closers, conv)
		return conv
	}
	add := func(name string, src symbols.Source) {
		s.chain = append(s.chain, s.trace.wrap(name, src))
		if c, ok := src.(io.Closer); ok {
			s.closers = append(s.closers, c)
		}
	}
	if cfg.LocalMissTTL > 0 {
		s.misses = &misses{ttl: cfg.LocalMissTTL, now: time.Now}
	}
	// addLocal adds a source that looks in local directories: its misses
	// are remembered (Config.LocalMissTTL).
	addLocal := func(name string, src symbols.Source) {
		if s.misses != nil {
			if c, ok := src.(io.Closer); ok {
				s.closers = append(s.closers, c)
			}
			src = &remembering{id: len(s.chain), src: src, ms: s.misses}
		}
		add(name, src)
	}
	if cfg.Fill != nil {
		addLocal("fill", filler(cfg.Fill))
	}
	if len(dirs) > 0 {
		label := strings.Join(dirs, ", ")
		// The lookup-only formats come first: a store holding one beside a
		// module's .sym was made to answer lookups from it (the .sym may keep
		// only its STACK records, which still give the unwind rules). Stores
		// of .sym files alone walk as Breakpad's.
		addLocal(label+" (SymCache)", symsymcache.NewDirs(dirs...))
		addLocal(label+" (symbfile)", symsymbfile.NewDirs(dirs...))
		addLocal(label+" (GSYM)", symgsym.NewDirs(dirs...))
		if cfg.CacheDir != "" {
			// The fast path for .sym files (docs/symcache.md): a SymCache
			// and an unwind index kept in the cache named on the command
			// line.
			addLocal(label, newFastDirs(&cache.Cache{Dir: filepath.Clean(cfg.CacheDir)}, dirs...))
		} else {
			addLocal(label, symbreakpad.NewDirs(dirs...))
		}
		// Native ELF files in the same directories (.build-id trees,
		// binaries named as the modules), then Windows symbol-store trees
		// and folders of PDBs and PEs, then Mach-O binaries and dSYM
		// bundles, converted into the cache.
		if c, err := client(""); err == nil {
			delete(s.clients, c.Cache.Dir) // a cache, not a server
			addLocal(label+" (ELF files)", elfsyms.NewDirs(c.Cache, dirs...))
			conv := converter(c.Cache)
			addLocal(label+" (PDB files)", pdbsyms.NewDirs(conv, dirs...))
			addLocal(label+" (Mach-O files)", machosyms.NewDirs(c.Cache, dirs...))
		}
	}
	if len(cfg.LocalDirs) > 0 {
		c, err := client("")
		if err != nil {
			return nil, err
		}
		delete(s.clients, c.Cache.Dir) // a cache, not a server
		label := "local debug info (" + strings.Join(cfg.LocalDirs, ", ") + ")"
		addLocal(label+" (ELF files)", elfsyms.NewDirs(c.Cache, cfg.LocalDirs...))
		addLocal(label+" (PDB files)", pdbsyms.NewDirs(converter(c.Cache), cfg.LocalDirs...))
	}
	for _, u := range bpURLs {
		c, err := client("")
		if err != nil {
			return nil, err
		}
		src := remote.NewBreakpad(u, c)
		add(src.String(), src)
	}
	for _, sv := range srvs {
		c, err := client(sv.cache)
		if err != nil {
			return nil, err
		}
		// Symbol servers may serve Breakpad files in the same tree
		// (Mozilla's Tecken does): asked first, as .sym files carry
		// every kind of information.
		bp := remote.NewBreakpad(sv.url, c)
		add(bp.String(), bp)
		ms := remote.NewSymSrv(sv.url, c)
		ms.Convert = converter(c.Cache).Convert
		add(ms.String(), ms)
	}
	for _, u := range cfg.DebuginfodURLs {
		c, err := client("")
		if err != nil {
			return nil, err
		}
		src := remote.NewDebuginfod(u, c)
		add(src.String(), src)
	}
	return s, nil
}

// filler is the source of Config.Fill: it never answers symbols itself
// (the local stores after it load what it copied), only a miss.
type filler func(m symbols.Module) error

func (f filler) Load(m symbols.Module) (*symbols.Symbols, error) {
	if err := f(m); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%w: %s %s copied into the local store", symbols.ErrNotFound, m.DebugFile, m.DebugID)
}
