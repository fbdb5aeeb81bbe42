// Command symconv converts symbol files between the formats the project
// reads and writes:
//
//	symconv [-f FORMAT] [-v] INPUT OUTPUT
//
// The input's format is recognized by its first bytes (or its extension);
// the output's comes from -f or from OUTPUT's extension. OUTPUT "-" writes
// to stdout (then -f is needed). `symconv --help` lists the formats read and
// written.
//
// With --module NAME/ID, INPUT is a symbol path instead of a file, in the
// syntax minidump_stackwalk takes (docs/symbols.md): a Breakpad store
// directory, the http(s) URL of a Breakpad-layout store, or
// _NT_SYMBOL_PATH syntax (srv*CACHE*URL for a Microsoft symbol server, whose
// PDB or PE is converted with dumpsyms/pe); the module's symbols are fetched
// into --symbols-cache DIR and converted:
//
//	symconv --module xul.pdb/44E4EC8C2F41492B9369D6B9A059577C2 https://symbols.mozilla.org/ xul.symc
//	symconv --module app.pdb/9214611565FA4C538FE724A797B860F71 'srv*/tmp/cache*https://msdl.microsoft.com/download/symbols' app.sym
//
// --code-file and --code-id name the executable (a PE without its PDB;
// ELF build IDs for the ELF files of a directory). $_NT_SYMBOL_PATH and
// $DEBUGINFOD_URLS are not read: the sources are INPUT's alone.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/cmd/internal/cmdline"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/symsrc"

	"github.com/gobreakpad/gobreakpad/symbols/formats"
	"github.com/urfave/cli/v3"
)

func main() {
	os.Exit(cmdline.Run(context.Background(), newCommand(os.Stdout, os.Stderr), os.Args, os.Stdout, os.Stderr))
}

func newCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "symconv",
		Usage:     "convert a symbol file into another format",
		ArgsUsage: "INPUT OUTPUT\n   symconv --module NAME/ID [--symbols-cache DIR] SYMBOL_PATH OUTPUT",
		Description: "Reads: " + formats.Readers() + ".\nWrites: " + formats.Writers() + ".\n" +
			"The output format is -f's, or the one OUTPUT's extension names; OUTPUT - is stdout.\n" +
			"With --module, INPUT is a symbol path (a Breakpad store directory, a Breakpad-layout store's URL, " +
			"srv*CACHE*URL for a Microsoft symbol server) the module's symbols are fetched from.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "f", Usage: "output `FORMAT`"},
			&cli.BoolFlag{Name: "v", Usage: "say on stderr what the input held that was skipped"},
			&cli.StringFlag{Name: "module", Usage: "convert the symbols of the module `NAME/ID` (debug file and debug identifier) found in the symbol path INPUT"},
			&cli.StringFlag{Name: "code-file", Usage: "with --module: the module's executable `NAME`"},
			&cli.StringFlag{Name: "code-id", Usage: "with --module: the executable's code identifier `ID` (PE timestamp and size, ELF build ID)"},
			&cli.StringFlag{Name: "symbols-cache", Usage: "keep downloaded symbols in `DIR` (default: the user cache directory's gobreakpad)"},
			&cli.DurationFlag{Name: "symbols-timeout", Value: 30 * time.Second, Usage: "give up a symbol download after `DURATION`"},
		},
		Writer:    stdout,
		ErrWriter: stderr,
		Action: func(ctx context.Context, c *cli.Command) error {
			args := c.Args().Slice()
			if len(args) != 2 {
				return cmdline.Usagef("expected INPUT OUTPUT")
			}
			var warn func(string, ...any)
			if c.Bool("v") {
				warn = func(f string, a ...any) { fmt.Fprintf(stderr, "symconv: "+f+"\n", a...) }
			}
			in := args[0]
			if mod := c.String("module"); mod != "" {
				i := strings.LastIndexByte(mod, '/')
				if i <= 0 || i == len(mod)-1 {
					return cmdline.Usagef("--module %q: want NAME/ID", mod)
				}
				m := symbols.Module{DebugFile: mod[:i], DebugID: mod[i+1:], CodeFile: c.String("code-file"), CodeID: c.String("code-id")}
				src, err := symsrc.Open(symsrc.Config{Paths: []string{in}, CacheDir: c.String("symbols-cache"),
					RequestTimeout: c.Duration("symbols-timeout"), Progress: stderr})
				if err != nil {
					return err
				}
				defer src.Close()
				if in, err = src.File(m); err != nil {
					return fmt.Errorf("%s from %s: %w", mod, args[0], err)
				}
			} else if c.IsSet("code-file") || c.IsSet("code-id") {
				return cmdline.Usagef("--code-file and --code-id need --module")
			}
			return convert(in, args[1], c.String("f"), stdout, warn)
		},
	}
}

// convert reads in and writes it as out in format name (or out's extension's).
func convert(in, out, name string, stdout io.Writer, warn func(string, ...any)) error {
	var to *formats.Format
	var err error
	switch {
	case name != "":
		to, err = formats.ByName(name)
	case out == "-":
		err = errors.New("writing to stdout needs -f FORMAT")
	case filepath.Ext(out) == "":
		if st, serr := os.Stat(out); serr == nil && st.IsDir() {
			err = fmt.Errorf("OUTPUT %s is a directory: name the output file (its extension chooses the format) or give -f FORMAT", out)
		} else {
			err = fmt.Errorf("OUTPUT %s has no extension naming a format: give -f FORMAT", out)
		}
	default:
		to, err = formats.ByExt(out)
	}
	if err != nil {
		return cmdline.Usagef("%v", err) // the command line names no writable format
	}
	if !to.CanWrite() {
		return fmt.Errorf("%s files cannot be written (writes: %s)", to.Name, formats.Writers())
	}
	from, err := formats.Sniff(in)
	if err != nil {
		return err
	}
	if !from.CanRead() {
		return fmt.Errorf("%s: %s files cannot be converted (reads: %s)", in, from.Name, formats.Readers())
	}
	input, err := formats.ReadFor(from, to, in, warn)
	if err != nil {
		return err
	}
	defer input.Close()
	s, opts := input.Symbols, input.Options
	if out == "-" {
		bw := bufio.NewWriterSize(stdout, 1<<20)
		if err := to.Write(bw, s, opts); err != nil {
			return err
		}
		return bw.Flush()
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := to.Write(bw, s, opts); err != nil {
		f.Close()
		os.Remove(out)
		return fmt.Errorf("%s: %w", out, err)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		os.Remove(out)
		return fmt.Errorf("%s: %w", out, err)
	}
	return f.Close()
}
