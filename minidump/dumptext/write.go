package dumptext

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/internal/textsafe"
	"github.com/gobreakpad/gobreakpad/minidump"
)

// Options select the output format.
type Options struct {
	// Hexdump prints memory as a hex dump with an ASCII column, as
	// minidump_dump -x does, instead of one long hex string.
	Hexdump bool
}

// Problems is the error Write returns when Breakpad's minidump_dump would
// exit with status 1: each element is one cause (a required stream missing
// or damaged, or the whole dump refused), in the order Write met them.
type Problems []error

// Error joins the problems' messages with "; ".
func (p Problems) Error() string {
	s := make([]string, len(p))
	for i, e := range p {
		s[i] = e.Error()
	}
	return strings.Join(s, "; ")
}

// Unwrap returns the problems, for errors.Is and errors.As.
func (p Problems) Unwrap() []error { return p }

// Write prints f to w in Breakpad's minidump_dump format. It returns nil
// when the output is complete; Problems when the dump is damaged where
// Breakpad's minidump_dump exits with status 1 (the rest is still printed);
// and, joined with them, the first error writing to w, after which nothing
// more is written.
func Write(w io.Writer, f *minidump.File, opts Options) error {
	d := &dumper{w: w, f: f, hexdump: opts.Hexdump}
	d.dump()
	var err error
	if len(d.problems) > 0 {
		err = d.problems
	}
	if d.werr != nil {
		err = errors.Join(err, fmt.Errorf("writing the dump: %w", d.werr))
	}
	return err
}

// dumper prints one minidump. A stream Breakpad would refuse is not printed.
type dumper struct {
	w        io.Writer
	f        *minidump.File
	hexdump  bool
	problems Problems
	werr     error  // the first error writing to w
	hexbuf   []byte // memory's scratch for hex text, made once
}

// Write passes b to the output until the first error, which it keeps.
func (d *dumper) Write(b []byte) (int, error) {
	if d.werr != nil {
		return 0, d.werr
	}
	n, err := d.w.Write(b)
	d.werr = err
	return n, err
}

func (d *dumper) printf(format string, a ...any) { fmt.Fprintf(d, format, a...) }

// fail records a cause of exit status 1.
func (d *dumper) fail(err error) { d.problems = append(d.problems, err) }

func (d *dumper) dump() {
	f := d.f
	if err := f.CheckStreams(); err != nil {
		d.fail(err)
		return
	}
	d.header()

	show(d, f.StrictThreadList, d.printThreads)
	showIf(f.StrictThreadNames, d.printThreadNames)
	show(d, f.StrictModuleList, d.printModules)
	show(d, f.StrictMemoryList, d.printMemoryList)
	showIf(f.Exception, d.printException)
	showIf(f.AssertionInfo, d.printAssertion)
	show(d, f.SystemInfo, d.printSystemInfo)
	show(d, f.MiscInfo, d.printMiscInfo)
	showIf(f.BreakpadInfo, d.printBreakpadInfo)
	show(d, f.StrictMemoryInfoList, d.printMemoryInfoList)
	showIf(f.CrashpadInfo, d.printCrashpadInfo)
	d.linuxStreams()
}

// show prints a stream that Breakpad requires, or records why it cannot be
// read.
func show[T any](d *dumper, read func() (T, error), print func(T)) {
	if v, err := read(); err != nil {
		d.fail(err)
	} else {
		print(v)
	}
}

// showIf prints an optional stream when it can be read.
func showIf[T any](read func() (T, error), print func(T)) {
	if v, err := read(); err == nil {
		print(v)
	}
}

// utc formats a time_t as Breakpad's TimeTToUTCString.
func utc(t uint32) string {
	return time.Unix(int64(t), 0).UTC().Format("2006-01-02 15:04:05")
}

// cstr cuts s at its first NUL, as printf("%s") would, and escapes what is
// left by the programs' one rule for names (textsafe.Escape: control
// characters as \xNN, cut at textsafe.MaxName); names in real dumps are
// clean and print as Breakpad prints them.
func cstr(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return textsafe.Escape(s)
}

// valueOrInvalid formats a field that a validity mask may mark invalid.
func valueOrInvalid(valid bool, hex bool, v uint32) string {
	switch {
	case !valid:
		return "(invalid)"
	case hex:
		return fmt.Sprintf("0x%x", v)
	}
	return fmt.Sprintf("%d", int32(v))
}
