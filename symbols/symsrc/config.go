package symsrc

import "time"

// DefaultPrefetch is --prefetch's default: how many modules' symbols are
// loaded at once ahead of a walk with a symbol server.
const DefaultPrefetch = 8

// DefaultLocalMissTTL is a long-running walker's Config.LocalMissTTL
// (crashd's processor): a module the local stores did not have is looked
// for again after this long, or at once when Sources.ForgetMisses says
// its symbols were stored.
const DefaultLocalMissTTL = 10 * time.Second

// None reports whether c names no source at all: no symbol paths, URLs,
// $_NT_SYMBOL_PATH or debuginfod servers.
func (c *Config) None() bool {
	return len(c.Paths) == 0 && len(c.URLs) == 0 && len(c.LocalDirs) == 0 && c.NTSymbolPath == "" && len(c.DebuginfodURLs) == 0
}
