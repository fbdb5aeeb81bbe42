// Package formats is the table of symbol formats the conversion and lookup
// programs (cmd/symconv, cmd/symlookup) know: for each, how to recognize a
// file of it, how to read it into the neutral model of package dumpsyms, how
// to write the model in it, and how to open it for lookups through the
// symbols contract. Each format registers itself in a file of its own here
// (breakpad.go, elf.go, ...); the programs know nothing of the formats.
package formats

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/symbols"
)

// Format is one symbol or debug format.
type Format struct {
	// Name is the format's name for -f flags ("breakpad", "gsym", ...), and
	// Description one line for help texts.
	Name, Description string
	// Exts are the file name extensions that select the format for output
	// (".sym"), most usual first; none for formats only read.
	Exts []string
	// Sniff reports whether a file starting with head (up to 64 bytes) is
	// in this format; nil when files are told by their extension alone.
	Sniff func(head []byte) bool
	// Read reads a file into the model; nil when the format cannot be read
	// into it. warn receives what was skipped.
	Read func(path string, warn func(format string, args ...any)) (*dumpsyms.Symbols, error)
	// ReadLazy, when set, reads a file into a model whose functions and
	// PUBLIC records stay in the (mapped) file until the writer asks for
	// them (dumpsyms.Symbols.Source) and which has no STACK records: far
	// less memory than Read's model for big files. The Closer releases the
	// file once the model is written.
	ReadLazy func(path string, warn func(format string, args ...any)) (*dumpsyms.Symbols, io.Closer, error)
	// Write writes the model in this format; nil when it cannot be written.
	Write func(w io.Writer, s *dumpsyms.Symbols) error
	// NoStack says Write ignores STACK CFI and STACK WIN records and reaches
	// functions and PUBLIC records only through the model's accessors
	// (Symbols.Func, Symbols.Public): it takes ReadLazy's models.
	NoStack bool
	// Open opens a file for lookups at the addresses the format stores
	// (module-relative for .sym); nil when lookups are not supported. The
	// returned Closer releases the file.
	Open func(path string) (symbols.Lookuper, io.Closer, error)
}

var all []*Format

// register adds a format to the table; each format's file calls it from init.
func register(f *Format) { all = append(all, f) }

// All returns the known formats, sorted by name.
func All() []*Format {
	out := append([]*Format(nil), all...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ByName returns the format named name.
func ByName(name string) (*Format, error) {
	for _, f := range all {
		if f.Name == name {
			return f, nil
		}
	}
	return nil, fmt.Errorf("unknown format %q (known: %s)", name, names(All(), nil))
}

// ByExt returns the format writing files named like path.
func ByExt(path string) (*Format, error) {
	ext := strings.ToLower(filepath.Ext(path))
	if ext == ".zst" { // a compressed form of the format named before it
		ext = strings.ToLower(filepath.Ext(strings.TrimSuffix(path, filepath.Ext(path))))
	}
	for _, f := range all {
		for _, e := range f.Exts {
			if e == ext {
				return f, nil
			}
		}
	}
	return nil, fmt.Errorf("%s: no format writes %q files (known: %s)", path, ext, names(All(), func(f *Format) bool { return f.Write != nil }))
}

// Detect returns the format of the file at path: by its first bytes, else
// by its extension.
func Detect(path string) (*Format, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	head := make([]byte, 64)
	n, _ := io.ReadFull(fh, head)
	fh.Close()
	head = head[:n]
	if f := Sniff(head); f != nil {
		return f, nil
	}
	if f, err := ByExt(path); err == nil {
		return f, nil
	}
	return nil, fmt.Errorf("%s: not a symbol or debug file this program reads (starts with % x)", path, head[:min(8, len(head))])
}

// Sniff returns the format of a file starting with head (its first 64
// bytes, or all of a shorter file) by its first bytes, or nil when no
// format recognizes them.
func Sniff(head []byte) *Format {
	for _, f := range All() {
		if f.Sniff != nil && f.Sniff(head) {
			return f
		}
	}
	return nil
}

// ReadFor reads the file at path, of format from, into a model to be
// written in format to: with from.ReadLazy when to's writer takes its
// models (to.NoStack), else with from.Read. Close the Closer once the model
// is written.
func ReadFor(from, to *Format, path string, warn func(format string, args ...any)) (*dumpsyms.Symbols, io.Closer, error) {
	if from.ReadLazy != nil && to.NoStack {
		return from.ReadLazy(path, warn)
	}
	if from.Read == nil {
		return nil, nil, fmt.Errorf("%s: %s files cannot be converted (reads: %s)", path, from.Name, Readers())
	}
	s, err := from.Read(path, warn)
	if err != nil {
		return nil, nil, err
	}
	return s, io.NopCloser(nil), nil
}

// Readers returns the names of the formats that can be read into the model,
// Writers those that can be written, and Lookups those opened for lookups.
func Readers() string { return names(All(), func(f *Format) bool { return f.Read != nil }) }

// Writers: see Readers.
func Writers() string { return names(All(), func(f *Format) bool { return f.Write != nil }) }

// Lookups: see Readers.
func Lookups() string { return names(All(), func(f *Format) bool { return f.Open != nil }) }

func names(fs []*Format, keep func(*Format) bool) string {
	var out []string
	for _, f := range fs {
		if keep == nil || keep(f) {
			n := f.Name
			if len(f.Exts) > 0 {
				n += " (" + strings.Join(f.Exts, ", ") + ")"
			}
			out = append(out, n)
		}
	}
	return strings.Join(out, ", ")
}

// hasPrefix reports whether head starts with s.
func hasPrefix(head []byte, s string) bool { return bytes.HasPrefix(head, []byte(s)) }
