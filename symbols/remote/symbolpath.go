package remote

import (
	"os"
	"strings"
)

// DefaultSymbolServer is the server of a bare "srv" element: Microsoft's
// public symbol server, as Microsoft's tools and Mozilla's dump_syms use it.
const DefaultSymbolServer = "https://msdl.microsoft.com/download/symbols"

// PathKind says what one element of a symbol path names.
type PathKind uint8

const (
	// SymbolServer is a Microsoft symbol server (srv*..., symsrv*...): URL,
	// and Cache, its downstream store ("" for the program's default).
	SymbolServer PathKind = iota
	// StoreDir is a local symbol-store tree named in srv syntax
	// (srv*DIR, srv*CACHE*DIR): Dir.
	StoreDir
	// CacheDir is a cache*DIR element: Dir, also the Cache of the later
	// elements that name none.
	CacheDir
	// PlainURL is an http(s) URL alone: URL, and Cache as for SymbolServer.
	// What it serves is the caller's to say (a Breakpad-layout store for
	// the stack walkers, a symbol server for dump_syms).
	PlainURL
	// PlainDir is any other element: a local directory, Dir.
	PlainDir
)

// A PathElem is one element of a symbol path.
type PathElem struct {
	Kind PathKind
	// URL is the server's URL, without a trailing '/'.
	URL string
	// Cache is the downstream store of a server (the first store of
	// srv*CACHE*...*URL, else the last cache*DIR before it); "": none given.
	Cache string
	// Dir is the directory of StoreDir, CacheDir and PlainDir elements.
	Dir string
}

// ParseSymbolPath reads a symbol path in _NT_SYMBOL_PATH syntax, the one
// parser of the programs (docs/symbols.md, "Symbol path syntax", lists each
// rule and where it comes from). Elements are separated by ';' or line
// breaks; blank elements are skipped and each element and each of its
// '*'-separated parts is trimmed of spaces; the keywords are matched in any
// case:
//
//   - srv*URL, srv*CACHE*URL: a symbol server with its downstream store;
//     with several stores (srv*C1*C2*URL) the first is the cache, and an
//     empty one (srv**URL) is none;
//   - srv and srv* alone: DefaultSymbolServer;
//   - srv*DIR, srv*CACHE*DIR (the last part not an http(s) URL): a local
//     symbol-store tree;
//   - symsrv*DLL*...: as srv*... (the DLL's name is ignored); symsrv alone
//     is skipped;
//   - cache*DIR: the cache of the srv elements and URLs after it that name
//     none (cache* without a directory is skipped);
//   - an http(s) URL alone: PlainURL; anything else: a directory, PlainDir.
//
// A directory or cache starting with "~" followed by nothing, '/' or '\' is
// below the home directory (Mozilla's dump_syms config files). URLs lose
// their trailing '/'. Nothing is refused: a caller decides what it does with
// each kind.
func ParseSymbolPath(spec string) []PathElem {
	var out []PathElem
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
				out = append(out, PathElem{Kind: CacheDir, Dir: defCache})
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
				out = append(out, PathElem{Kind: SymbolServer, URL: DefaultSymbolServer, Cache: c})
			case IsHTTP(last):
				out = append(out, PathElem{Kind: SymbolServer, URL: strings.TrimRight(last, "/"), Cache: c})
			default:
				out = append(out, PathElem{Kind: StoreDir, Dir: homeDir(last)})
			}
			continue
		}
		if IsHTTP(e) {
			out = append(out, PathElem{Kind: PlainURL, URL: strings.TrimRight(e, "/"), Cache: defCache})
		} else {
			out = append(out, PathElem{Kind: PlainDir, Dir: homeDir(e)})
		}
	}
	return out
}

// IsHTTP reports whether s is an http or https URL (the scheme in any
// case): a Breakpad HTTP store in a symbol path.
func IsHTTP(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// homeDir replaces a leading "~" (alone or before a separator) with the
// home directory.
func homeDir(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`) {
		if h, err := os.UserHomeDir(); err == nil {
			return h + p[1:]
		}
	}
	return p
}
