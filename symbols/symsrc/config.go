package symsrc

// DefaultPrefetch is --prefetch's default: how many modules' symbols are
// loaded at once ahead of a walk with a symbol server.
const DefaultPrefetch = 8

// None reports whether c names no source at all: no symbol paths, URLs,
// $_NT_SYMBOL_PATH or debuginfod servers.
func (c *Config) None() bool {
	return len(c.Paths) == 0 && len(c.URLs) == 0 && len(c.LocalDirs) == 0 && c.NTSymbolPath == "" && len(c.DebuginfodURLs) == 0
}
