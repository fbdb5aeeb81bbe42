// Package batch walks many crash dumps in parallel, as cmd/crashdiff and a
// crash server do: Find lists the dump files under the paths given (named by
// Key, so that names do not depend on how a dump was reached), and Walk walks
// them a few at a time with one symbol source and one signature generator,
// handing each walked process to the caller while its dump is open (a file
// holding a Breakpad microdump instead of a minidump is walked as
// microdump_stackwalk walks it). Progress reports the walked dumps on a
// terminal or in a log.
package batch

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/gobreakpad/gobreakpad/microdump"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/stackwalk/signature"
	"github.com/gobreakpad/gobreakpad/symbols"
)

// Dump is a dump file to walk.
type Dump struct {
	// Key names the dump in reports and records (Key of Path).
	Key string
	// Path is where the dump is read from.
	Path string
}

// Key names a dump: its path relative to the working directory when inside
// it, else its absolute path; slash-separated.
func Key(path string) string {
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

// Find lists the dump files named by paths (files as they are, directories
// searched recursively for *.dmp), sorted by key and without repeats, and
// the keys of the paths themselves (roots: what a dump found before but not
// now must lie under to be missing).
func Find(paths []string) (dumps []Dump, roots []string, err error) {
	seen := map[string]bool{}
	add := func(p string) {
		k := Key(p)
		if !seen[k] {
			seen[k] = true
			dumps = append(dumps, Dump{Key: k, Path: p})
		}
	}
	for _, a := range paths {
		st, err := os.Stat(a)
		if err != nil {
			return nil, nil, err
		}
		roots = append(roots, Key(a))
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
	sort.Slice(dumps, func(i, j int) bool { return dumps[i].Key < dumps[j].Key })
	return dumps, roots, nil
}

// Options are the choices of a Walk.
type Options struct {
	// Symbols is the symbol source of every walk (nil: none).
	Symbols symbols.Source
	// Prefetch is stackwalk.Options.Prefetch for each dump: how many of its
	// modules' symbols to load at once ahead of its walk (0: each when the
	// walk reaches it).
	Prefetch int
	// Signatures makes the signatures (nil: signature.Default()).
	Signatures *signature.Generator
	// Workers is how many dumps are walked at once (at least 1). Each
	// dump's threads are walked one after the other: the parallelism is
	// across dumps.
	Workers int
	// Progress, when not nil, counts the walked dumps (and is finished when
	// Walk returns).
	Progress *Progress
}

// Walked is one walked dump, as Walk hands it over.
type Walked struct {
	Dump Dump
	// State is the walked process, nil when Err is set. The dump's file is
	// closed once the function given to Walk returns: keep what is needed
	// of State, not State.
	State *stackwalk.ProcessState
	// Signature is State's signature (signature.Generator.Process).
	Signature signature.Result
	// Err is why the dump could not be read or walked; its text may hold
	// Dump.Path.
	Err error
}

// Walk walks the dumps, o.Workers at a time, and calls each with every
// walked dump (on the walking goroutines: each may run concurrently with
// itself). It returns what each returned, in the order of dumps. When ctx is
// cancelled no further walk starts: the dumps not walked have zero values,
// and Walk returns ctx's error.
func Walk[T any](ctx context.Context, dumps []Dump, o Options, each func(Walked) T) ([]T, error) {
	gen := o.Signatures
	if gen == nil {
		gen = signature.Default()
	}
	out := make([]T, len(dumps))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(max(o.Workers, 1), len(dumps)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = walkOne(dumps[i], o, gen, each)
				o.Progress.Done()
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
	o.Progress.Finish()
	return out, ctx.Err()
}

// walkOne walks one dump and hands it to each while its file is open.
func walkOne[T any](d Dump, o Options, gen *signature.Generator, each func(Walked) T) T {
	f, err := minidump.Open(d.Path)
	if err != nil {
		if st, ok, merr := walkMicrodump(d.Path, o); ok {
			if merr != nil {
				return each(Walked{Dump: d, Err: merr})
			}
			return each(Walked{Dump: d, State: st, Signature: gen.Process(st)})
		}
		return each(Walked{Dump: d, Err: err})
	}
	defer f.Close()
	st, err := stackwalk.Process(f, stackwalk.Options{Symbols: o.Symbols, Workers: 1, Prefetch: o.Prefetch})
	if err != nil {
		return each(Walked{Dump: d, Err: err})
	}
	return each(Walked{Dump: d, State: st, Signature: gen.Process(st)})
}

// maxMicrodump is the largest file walkMicrodump reads: a microdump is a few
// log lines of hex (Breakpad's are under 100 KiB); a bigger file that is not
// a minidump is reported as not one, not read whole.
const maxMicrodump = 16 << 20

// walkMicrodump walks the file at path as a Breakpad microdump (the log
// lines microdump_stackwalk reads) when it holds one: ok tells whether it
// does (a "-----BEGIN BREAKPAD MICRODUMP-----" line in its first
// maxMicrodump bytes), err why it could not be walked.
func walkMicrodump(path string, o Options) (st *stackwalk.ProcessState, ok bool, err error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, false, nil
	}
	defer fh.Close()
	text, err := io.ReadAll(io.LimitReader(fh, maxMicrodump))
	if err != nil || !bytes.Contains(text, []byte(microdump.Begin)) {
		return nil, false, nil
	}
	md, err := microdump.Parse(text)
	if err != nil {
		return nil, true, fmt.Errorf("microdump %s: %w", path, err)
	}
	st, err = stackwalk.ReadMicrodump(md)
	if err != nil {
		return nil, true, fmt.Errorf("microdump %s: %w", path, err)
	}
	st.Walk(stackwalk.Options{Symbols: o.Symbols, Workers: 1, Prefetch: o.Prefetch})
	return st, true, nil
}
