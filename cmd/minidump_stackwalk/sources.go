package main

import (
	"io"
	"time"

	"github.com/gobreakpad/gobreakpad/internal/symsrc"
)

// symbolOptions are the command line's symbol flags beside the SYMBOL_PATH
// arguments.
type symbolOptions struct {
	urls                        []string
	cacheDir                    string
	requestTimeout, walkTimeout time.Duration
	verbose                     bool
}

// symbolSources returns the sources of the symbol paths, the flags and the
// environment (internal/symsrc, docs/symbols.md), or nil when there are
// none.
func symbolSources(paths []string, so symbolOptions, stderr io.Writer) (*symsrc.Sources, error) {
	cfg := symsrc.Config{Paths: paths, URLs: so.urls, CacheDir: so.cacheDir,
		RequestTimeout: so.requestTimeout, WalkTimeout: so.walkTimeout, Progress: stderr}
	cfg.FromEnv()
	if len(cfg.Paths) == 0 && len(cfg.URLs) == 0 && cfg.NTSymbolPath == "" && len(cfg.DebuginfodURLs) == 0 {
		return nil, nil
	}
	return symsrc.Open(cfg)
}
