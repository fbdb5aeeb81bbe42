package main

import (
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/gobreakpad/gobreakpad/moduleid"
	"github.com/gobreakpad/gobreakpad/symbols/cache"
	"github.com/gobreakpad/gobreakpad/symbols/remote"
)

// debuginfodDir fetches the separate debug file of a stripped ELF binary
// (no .debug_info) from the servers of $DEBUGINFOD_URLS, by its build ID, as
// elfutils' and gdb's tools do, and returns a debug directory holding it as
// .build-id/xx/rest.debug and a function removing that directory. It
// returns "" when there is nothing to fetch or no server has it (saying why
// through warn).
func debuginfodDir(path, cacheDir string, stderr io.Writer, warn func(string, ...any)) (string, func(), error) {
	urls := remote.DebuginfodURLs()
	if len(urls) == 0 {
		return "", nil, nil
	}
	f, err := elf.Open(path)
	if err != nil {
		return "", nil, nil // not for this reader: dump reports it
	}
	hasDWARF := f.Section(".debug_info") != nil || f.Section(".zdebug_info") != nil
	id, idErr := moduleid.BuildIDNote(f)
	f.Close()
	if hasDWARF || idErr != nil || len(id) == 0 {
		return "", nil, nil
	}
	if cacheDir == "" {
		if cacheDir, err = cache.DefaultDir(); err != nil {
			return "", nil, fmt.Errorf("symbol cache: %w (give one with --symbols-cache)", err)
		}
	}
	bid := hex.EncodeToString(id)
	c := &remote.Client{Cache: &cache.Cache{Dir: cacheDir}, Progress: stderr, UserAgent: "gobreakpad"}
	for _, u := range urls {
		dbg, err := c.Fetch(u, "buildid", bid, "debuginfo")
		if err != nil {
			warn("debuginfod: %v", err)
			continue
		}
		abs, err := filepath.Abs(dbg)
		if err != nil {
			return "", nil, err
		}
		tmp, err := os.MkdirTemp("", "dump_syms-debuginfod-")
		if err != nil {
			return "", nil, err
		}
		cleanup := func() { os.RemoveAll(tmp) }
		link := filepath.Join(tmp, ".build-id", bid[:2], bid[2:]+".debug")
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			cleanup()
			return "", nil, err
		}
		if err := os.Symlink(abs, link); err != nil {
			cleanup()
			return "", nil, err
		}
		return tmp, cleanup, nil
	}
	return "", nil, nil
}
