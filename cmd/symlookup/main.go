// Command symlookup looks addresses up in a symbol file of any format the
// project reads, as llvm-gsymutil --address and llvm-symbolizer do for
// theirs:
//
//	symlookup [--json] FILE ADDRESS...
//
// Addresses are hex (with or without 0x), as the format stores them
// (module-relative for Breakpad .sym files); "-" reads them from stdin, one
// per line or separated by spaces. Plain output is one block per address:
// the address, then one line per frame, innermost (inlined) first:
// "function+0xoffset file:line". With --json, one object per line:
//
//	{"address":"0x...","frames":[{"function":...,"offset":N,"file":...,"line":N}, ...]}
//
// with frames innermost first and empty for an address no function covers;
// file is the path as the format stores it and line 0 when unknown. offset is
// the address's distance from the start of the frame's function (for an
// inlined frame, from the start of its inlined range).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/gobreakpad/gobreakpad/cmd/internal/cmdline"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/formats"
	"github.com/urfave/cli/v3"
)

func main() {
	// As minidump_stackwalk: loading a symbol file builds an index of a few
	// MB in steps, and at the default GOGC the collector runs several times
	// for nothing in a process this short. GOGC still overrides this.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(cmdline.Run(context.Background(), newCommand(os.Stdin, os.Stdout, os.Stderr), os.Args, os.Stdout, os.Stderr))
}

func newCommand(stdin io.Reader, stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:        "symlookup",
		Usage:       "look addresses up in a symbol file",
		ArgsUsage:   "FILE ADDRESS... (hex; - reads addresses from stdin)",
		Description: "Reads: " + formats.Lookups() + ".",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "one JSON object per address and line"},
		},
		Writer:    stdout,
		ErrWriter: stderr,
		Action: func(ctx context.Context, c *cli.Command) error {
			args := c.Args().Slice()
			if len(args) < 2 {
				return cmdline.Usagef("expected FILE ADDRESS...")
			}
			return run(args[0], args[1:], c.Bool("json"), stdin, stdout)
		},
	}
}

// Frame is one frame of a lookup's result, as --json prints it.
type Frame struct {
	Function string `json:"function"`
	Offset   uint64 `json:"offset"`
	File     string `json:"file"`
	Line     int    `json:"line"`
}

// Frames returns the frames at addr, innermost first, or none.
func Frames(l symbols.Lookuper, addr uint64) []Frame {
	sym, ok := l.Lookup(addr, true)
	if !ok || sym.Function == "" {
		return []Frame{}
	}
	out := make([]Frame, 0, len(sym.Inlines)+1)
	for _, in := range sym.Inlines {
		out = append(out, Frame{Function: in.Function, Offset: addr - in.Base, File: in.File, Line: in.Line})
	}
	return append(out, Frame{Function: sym.Function, Offset: addr - sym.FunctionBase, File: sym.File, Line: sym.Line})
}

func run(path string, addrs []string, asJSON bool, stdin io.Reader, stdout io.Writer) error {
	f, err := formats.Sniff(path)
	if err != nil {
		return err
	}
	if !f.CanOpen() {
		return fmt.Errorf("%s: lookups in %s files are not supported (reads: %s)", path, f.Name, formats.Lookups())
	}
	l, closer, err := f.Open(path)
	if err != nil {
		return err
	}
	defer closer.Close()
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	one := func(a string) error {
		v, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(a, "0x"), "0X"), 16, 64)
		if err != nil {
			return fmt.Errorf("address %q: not a hex number", a)
		}
		frames := Frames(l, v)
		if asJSON {
			return enc.Encode(struct {
				Address string  `json:"address"`
				Frames  []Frame `json:"frames"`
			}{fmt.Sprintf("0x%x", v), frames})
		}
		fmt.Fprintf(w, "0x%x:\n", v)
		if len(frames) == 0 {
			fmt.Fprintln(w, "    ??")
		}
		for _, fr := range frames {
			fmt.Fprintf(w, "    %s+0x%x", fr.Function, fr.Offset)
			if fr.File != "" {
				fmt.Fprintf(w, " %s:%d", fr.File, fr.Line)
			}
			fmt.Fprintln(w)
		}
		return nil
	}
	for _, a := range addrs {
		if a != "-" {
			if err := one(a); err != nil {
				return err
			}
			continue
		}
		sc := bufio.NewScanner(stdin)
		for sc.Scan() {
			for _, a := range strings.Fields(sc.Text()) {
				if err := one(a); err != nil {
					return err
				}
			}
		}
		if err := sc.Err(); err != nil {
			return err
		}
	}
	return nil
}
