package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/stackwalk/golden"
	"github.com/gobreakpad/gobreakpad/stackwalk/signature"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/symsrc"
)

// config is the command line.
type config struct {
	golden         string
	update         bool
	symbolPaths    []string
	symbolURLs     []string
	symbolCache    string
	prefetch       int
	signatureLists string
	json           bool
	workers        int
	quiet          bool
	args           []string
}

// The statuses of a dump.
const (
	statusUnchanged = "unchanged"
	statusChanged   = "changed"
	statusNew       = "new"
	statusMissing   = "missing"
	statusWritten   = "written" // --update
	statusRemoved   = "removed" // --update: golden file of a missing dump
	statusWalked    = "walked"  // no --golden
)

// result is one dump's outcome.
type result struct {
	key    string         // the dump's name (golden.Record.Dump)
	path   string         // where it is read from
	status string         // one of the statuses
	rec    *golden.Record // this walk's record (nil for missing dumps)
	old    *golden.Record // the golden record, when there is one
	diff   []string       // for changed dumps
}

// dumpFile is a dump to walk.
type dumpFile struct{ key, path string }

func run(ctx context.Context, stdout, stderr io.Writer, cfg config) error {
	if len(cfg.args) == 0 {
		return couldNotRun("no dump or directory given")
	}
	if cfg.update && cfg.golden == "" {
		return couldNotRun("--update needs --golden DIR")
	}
	if cfg.golden != "" && !cfg.update {
		if st, err := os.Stat(cfg.golden); err != nil || !st.IsDir() {
			return couldNotRun("golden directory %s not found (write it with --update)", cfg.golden)
		}
	}
	gen := signature.Default()
	if cfg.signatureLists != "" {
		l := signature.DefaultLists()
		if err := l.LoadDir(cfg.signatureLists, true); err != nil {
			return couldNotRun("%v", err)
		}
		g, err := signature.New(l)
		if err != nil {
			return couldNotRun("%v", err)
		}
		gen = g
	}
	for _, p := range cfg.symbolPaths {
		if symsrc.IsRemote(p) {
			continue
		}
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			// As minidump_stackwalk: not an error (a store may be empty).
			fmt.Fprintf(stderr, "crashdiff: warning: symbol directory %s not found\n", p)
		}
	}
	dumps, roots, err := findDumps(cfg.args)
	if err != nil {
		return couldNotRun("%v", err)
	}
	if len(dumps) == 0 {
		return couldNotRun("no .dmp file in %s", strings.Join(cfg.args, " "))
	}

	var syms symbols.Source
	var prefetch int
	scfg := symsrc.Config{Paths: cfg.symbolPaths, URLs: cfg.symbolURLs, CacheDir: cfg.symbolCache, Progress: stderr,
		Prefetch: cfg.prefetch}
	scfg.FromEnv()
	if !scfg.None() {
		src, err := symsrc.Open(scfg)
		if err != nil {
			return couldNotRun("%v", err)
		}
		defer src.Close()
		syms, prefetch = src, src.Prefetch()
	}
	results := walkAll(ctx, dumps, syms, prefetch, gen, max(cfg.workers, 1), newProgress(stderr, len(dumps), cfg.quiet))
	if err := ctx.Err(); err != nil {
		return couldNotRun("%v", err)
	}

	if cfg.golden != "" {
		missing, err := compare(cfg, results, roots)
		if err != nil {
			return couldNotRun("%v", err)
		}
		results = append(results, missing...)
	}
	sort.Slice(results, func(i, j int) bool { return results[i].key < results[j].key })
	rep := newReport(results)
	if cfg.json {
		err = rep.writeJSON(stdout)
	} else {
		err = rep.writeText(stdout)
	}
	if err != nil {
		return couldNotRun("%v", err)
	}
	if rep.Counts[statusChanged]+rep.Counts[statusNew]+rep.Counts[statusMissing] > 0 {
		return &exitStatus{code: 1}
	}
	return nil
}

// dumpKey names a dump: its path relative to the working directory when
// inside it, else its absolute path; slash-separated.
func dumpKey(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.ToSlash(filepath.Clean(path))
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(abs)
}

// goldenPath is the golden file of a dump key: DIR/KEY.golden, with an
// absolute key's volume and leading slash dropped.
func goldenPath(dir, key string) string {
	k := strings.TrimLeft(strings.ReplaceAll(key, ":", ""), "/")
	return filepath.Join(dir, filepath.FromSlash(k)+".golden")
}

// findDumps lists the dump files named by args (files as they are,
// directories searched for *.dmp), sorted and without repeats, and the keys
// of the arguments (for finding missing dumps).
func findDumps(args []string) ([]dumpFile, []string, error) {
	seen := map[string]bool{}
	var out []dumpFile
	var roots []string
	add := func(p string) {
		k := dumpKey(p)
		if !seen[k] {
			seen[k] = true
			out = append(out, dumpFile{key: k, path: p})
		}
	}
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, nil, err
		}
		roots = append(roots, dumpKey(a))
		if !st.IsDir() {
			add(a)
			continue
		}
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(d.Name(), ".dmp") {
				add(p)
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out, roots, nil
}

// walkAll walks the dumps, workers at a time, each dump's threads one after
// the other (the parallelism is across dumps; with prefetch, each walk loads
// that many modules' symbols at once ahead of its frames).
func walkAll(ctx context.Context, dumps []dumpFile, syms symbols.Source, prefetch int, gen *signature.Generator, workers int, prog *progress) []*result {
	results := make([]*result, len(dumps))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, len(dumps)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = &result{key: dumps[i].key, path: dumps[i].path, status: statusWalked, rec: walkOne(dumps[i], syms, prefetch, gen)}
				prog.done()
			}
		}()
	}
	for i := range dumps {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	prog.finish()
	var out []*result
	for _, r := range results {
		if r != nil {
			out = append(out, r)
		}
	}
	return out
}

// walkOne walks one dump into its record; a dump that cannot be read or
// walked gives a record with Error set.
func walkOne(d dumpFile, syms symbols.Source, prefetch int, gen *signature.Generator) *golden.Record {
	// Errors name the dump by its key, so that they do not depend on how
	// the dump was reached.
	failed := func(err error) *golden.Record {
		return &golden.Record{Dump: d.key, Error: strings.ReplaceAll(err.Error(), d.path, d.key), Thread: -1}
	}
	f, err := minidump.Open(d.path)
	if err != nil {
		return failed(err)
	}
	defer f.Close()
	st, err := stackwalk.Process(f, stackwalk.Options{Symbols: syms, Workers: 1, Prefetch: prefetch})
	if err != nil {
		return failed(err)
	}
	return golden.FromProcess(d.key, st, gen.Process(st).Signature)
}

// compare sets the status of each result against its golden file (or
// writes the golden files with --update), and returns the missing dumps:
// golden files under the given paths whose dump was not walked.
func compare(cfg config, results []*result, roots []string) ([]*result, error) {
	for _, r := range results {
		path := goldenPath(cfg.golden, r.key)
		if cfg.update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(path, r.rec.Marshal(), 0o644); err != nil {
				return nil, err
			}
			r.status = statusWritten
			continue
		}
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			r.status = statusNew
			continue
		}
		if err != nil {
			return nil, err
		}
		old, err := golden.Parse(bytes.NewReader(data), path)
		if err != nil {
			return nil, err
		}
		r.old = old
		if r.diff = golden.Diff(old, r.rec); len(r.diff) == 0 {
			r.status = statusUnchanged
		} else {
			r.status = statusChanged
		}
	}

	walked := map[string]bool{}
	for _, r := range results {
		walked[r.key] = true
	}
	var missing []*result
	if _, err := os.Stat(cfg.golden); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	err := filepath.WalkDir(cfg.golden, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".golden") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		old, err := golden.Parse(bytes.NewReader(data), p)
		if err != nil {
			return err
		}
		if walked[old.Dump] || !under(old.Dump, roots) {
			return nil
		}
		r := &result{key: old.Dump, path: p, status: statusMissing, old: old}
		if cfg.update {
			if err := os.Remove(p); err != nil {
				return err
			}
			r.status = statusRemoved
		}
		missing = append(missing, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("golden files: %w", err)
	}
	return missing, nil
}

// under tells whether a dump key is one of the roots or lies below one.
func under(key string, roots []string) bool {
	for _, r := range roots {
		if key == r || r == "." || strings.HasPrefix(key, strings.TrimSuffix(r, "/")+"/") {
			return true
		}
	}
	return false
}
