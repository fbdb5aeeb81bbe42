// Package formats is the table of symbol formats the conversion and lookup
// programs (cmd/symconv, cmd/symlookup) know, and what a program converting
// uploaded symbol files uses: for each format, how to recognize a file of it
// (Sniff, SniffHead, ByExt), how to read it into the neutral model of
// package dumpsyms (Format.Read, ReadFor), how to write the model in it
// (Format.Write), and how to open it for lookups through the symbols
// contract (Format.Open). Convert does all of it for one file. Each format
// registers itself in a file of its own here (breakpad.go, elf.go, ...);
// the conversions themselves live beside the model (dumpsyms/breakpad,
// dumpsyms/elf, dumpsyms/gsym, dumpsyms/symcache, dumpsyms/symbfile) and the
// lookups in the symbols adapters, so the table holds no code of its own
// beyond the choice between them.
package formats

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/symbols"
)

// Warn receives what a reader or writer skipped, as fmt.Printf arguments.
type Warn = func(format string, args ...any)

// WriteOptions are what a writer may need beyond the model.
type WriteOptions struct {
	// Binary is the path of the file the model was read from when that
	// file holds the module's code (an ELF file): the symbfile writer
	// decodes its call instructions for return pads. ReadFor sets it.
	Binary string
}

// Format is one symbol or debug format of the table. Its methods say what
// can be done with it; those it does not support return an error.
type Format struct {
	// Name is the format's name for -f flags ("breakpad", "gsym", ...), and
	// Description one line for help texts.
	Name, Description string
	// Exts are the file name extensions that select the format for output
	// (".sym"), most usual first; none for formats only read.
	Exts []string

	// sniff reports whether a file starting with head (up to 64 bytes) is
	// in this format; nil when files are told by their extension alone.
	sniff func(head []byte) bool
	// read reads a file into the model; nil when the format cannot be read
	// into it.
	read func(path string, warn Warn) (*dumpsyms.Model, error)
	// readLazy, when set, reads a file into a model whose functions and
	// PUBLIC records stay in the (mapped) file until the writer asks for
	// them (dumpsyms.Model.Lazy) and which has no STACK records.
	readLazy func(path string, warn Warn) (*dumpsyms.Model, io.Closer, error)
	// write writes the model in this format; nil when it cannot be written.
	write func(w io.Writer, s *dumpsyms.Model, opts WriteOptions) error
	// noStack says write ignores STACK CFI and STACK WIN records and
	// reaches functions and PUBLIC records only through the model's
	// accessors (Model.Func, Model.Public): it takes readLazy's models.
	noStack bool
	// binary says the format's files hold the module's code: ReadFor
	// passes their path on as WriteOptions.Binary.
	binary bool
	// open opens a file for lookups; nil when lookups are not supported.
	open func(path string) (symbols.Lookuper, io.Closer, error)
}

// Recognizes reports whether a file starting with head (its first bytes,
// up to 64) is in this format by its content; false for formats told by
// their extension alone.
func (f *Format) Recognizes(head []byte) bool { return f.sniff != nil && f.sniff(head) }

// CanRead reports whether files of the format can be read into the model.
func (f *Format) CanRead() bool { return f.read != nil }

// CanWrite reports whether the model can be written in the format.
func (f *Format) CanWrite() bool { return f.write != nil }

// CanOpen reports whether files of the format can be opened for lookups.
func (f *Format) CanOpen() bool { return f.open != nil }

// TakesLazyModels reports whether the format's writer takes ReadLazy's
// models (it ignores STACK records and reaches functions and PUBLIC records
// only through the model's accessors).
func (f *Format) TakesLazyModels() bool { return f.noStack }

// Read reads the file at path into the model. warn, when set, receives what
// was skipped.
func (f *Format) Read(path string, warn Warn) (*dumpsyms.Model, error) {
	if f.read == nil {
		return nil, fmt.Errorf("%s: %s files cannot be converted (reads: %s)", path, f.Name, Readers())
	}
	return f.read(path, warn)
}

// ReadLazy reads the file at path into a model whose functions and PUBLIC
// records stay in the (mapped) file until a writer asks for them
// (dumpsyms.Model.Lazy) and which has no STACK records: far less memory
// than Read's model for big files, for the formats whose writers take it
// (TakesLazyModels). The Closer releases the file once the model is written.
// Formats without such a reader read the whole model, as Read does.
func (f *Format) ReadLazy(path string, warn Warn) (*dumpsyms.Model, io.Closer, error) {
	if f.readLazy == nil {
		s, err := f.Read(path, warn)
		if err != nil {
			return nil, nil, err
		}
		return s, io.NopCloser(nil), nil
	}
	return f.readLazy(path, warn)
}

// Write writes the model in the format.
func (f *Format) Write(w io.Writer, s *dumpsyms.Model, opts WriteOptions) error {
	if f.write == nil {
		return fmt.Errorf("%s files cannot be written (writes: %s)", f.Name, Writers())
	}
	return f.write(w, s, opts)
}

// Open opens the file at path for lookups at the addresses the format
// stores (module-relative for .sym). The returned Closer releases the file.
func (f *Format) Open(path string) (symbols.Lookuper, io.Closer, error) {
	if f.open == nil {
		return nil, nil, fmt.Errorf("%s: lookups in %s files are not supported (reads: %s)", path, f.Name, Lookups())
	}
	return f.open(path)
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
	return nil, fmt.Errorf("%s: no format writes %q files (known: %s)", path, ext, names(All(), func(f *Format) bool { return f.write != nil }))
}

// SniffLen is how many of a file's first bytes SniffHead looks at.
const SniffLen = 64

// SniffHead returns the format of a file starting with head (its first
// SniffLen bytes, or all of a shorter file) by its content, or nil when no
// format of the table recognizes it.
func SniffHead(head []byte) *Format {
	for _, f := range All() {
		if f.Recognizes(head) {
			return f
		}
	}
	return nil
}

// Sniff returns the format of the file at path: by its first bytes
// (SniffHead), else by its extension (ByExt).
func Sniff(path string) (*Format, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if st, err := fh.Stat(); err == nil && st.IsDir() {
		fh.Close()
		return nil, fmt.Errorf("%s is a directory, not a symbol or debug file", path)
	}
	head := make([]byte, SniffLen)
	n, _ := io.ReadFull(fh, head)
	fh.Close()
	head = head[:n]
	if f := SniffHead(head); f != nil {
		return f, nil
	}
	if f, err := ByExt(path); err == nil {
		return f, nil
	}
	if len(head) == 0 {
		return nil, fmt.Errorf("%s: not a symbol or debug file this program reads (empty file)", path)
	}
	return nil, fmt.Errorf("%s: not a symbol or debug file this program reads (starts with % x)", path, head[:min(8, len(head))])
}

// Input is a file read into the model for writing in one format (ReadFor):
// the model and the writer options the file gives. Close it once the model
// is written.
type Input struct {
	// Symbols is the model.
	Symbols *dumpsyms.Model
	// Options are to be passed to the output format's Write.
	Options WriteOptions
	closer  io.Closer
}

// Close releases the file a lazily read model is in.
func (in *Input) Close() error {
	if in.closer == nil {
		return nil
	}
	return in.closer.Close()
}

// ReadFor reads the file at path, of format from, into a model to be
// written in format to: with from's lazy reader when to's writer takes its
// models (to.TakesLazyModels), else with from.Read. The Input's options carry
// the path when from's files hold the module's code (ELF: symbfile return
// pads).
func ReadFor(from, to *Format, path string, warn Warn) (*Input, error) {
	in := &Input{}
	if from.binary {
		in.Options.Binary = path
	}
	if from.readLazy != nil && to.noStack {
		s, c, err := from.readLazy(path, warn)
		if err != nil {
			return nil, err
		}
		in.Symbols, in.closer = s, c
		return in, nil
	}
	s, err := from.Read(path, warn)
	if err != nil {
		return nil, err
	}
	in.Symbols = s
	return in, nil
}

// Convert writes the file at path, in the format Sniff finds, to w in
// format to (as cmd/symconv converts): ReadFor, then to.Write.
func Convert(w io.Writer, path string, to *Format, warn Warn) error {
	if to == nil {
		return errors.New("formats: no output format")
	}
	if !to.CanWrite() {
		return fmt.Errorf("%s files cannot be written (writes: %s)", to.Name, Writers())
	}
	from, err := Sniff(path)
	if err != nil {
		return err
	}
	in, err := ReadFor(from, to, path, warn)
	if err != nil {
		return err
	}
	defer in.Close()
	return to.Write(w, in.Symbols, in.Options)
}

// Readers returns the names of the formats that can be read into the model,
// Writers those that can be written, and Lookups those opened for lookups.
func Readers() string { return names(All(), func(f *Format) bool { return f.read != nil }) }

// Writers returns the names of the formats the model can be written in (see
// Readers).
func Writers() string { return names(All(), func(f *Format) bool { return f.write != nil }) }

// Lookups returns the names of the formats opened for lookups (see
// Readers).
func Lookups() string { return names(All(), func(f *Format) bool { return f.open != nil }) }

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
