// Command minidump_stackwalk prints the stack traces of a minidump, as
// Google Breakpad's tool of the same name does:
//
//	minidump_stackwalk [-m] [-s] [-c] [-t N] [-b] [--json [--pretty]] [--signature [--signature-lists DIR]] DUMP [SYMBOL_PATH ...]
//
// -m prints the pipe-delimited machine-readable form, -s adds stack
// contents, -c prints only the crashed (or dump-requesting) thread and -b
// only that thread's frames. --json prints rust-minidump's JSON report
// instead (--pretty indents it). -t N walks up to N threads at once (by
// default as many as the machine has CPUs); the output does not depend on it. Options may come before or after the
// positional arguments, and short ones may be combined (-ms). Each SYMBOL_PATH is a Breakpad symbol
// directory (SYMBOL_PATH/DEBUG_FILE/DEBUG_ID/DEBUG_FILE.sym).
//
// --signature prints the crash signature (package stackwalk/signature) as
// one line instead of the report; with --json it adds a "signature" key to
// the JSON report instead. --signature-lists DIR (implies --signature) adds
// the signature lists found in DIR to the defaults (docs/signature.md).
package main

import (
	"context"
	"fmt"
	"github.com/gobreakpad/gobreakpad/symbols"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v3"

	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/stackwalk/jsonout"
	"github.com/gobreakpad/gobreakpad/stackwalk/signature"
)

func main() {
	// A walk's heap is small (an index of a few MB per symbol file) but grows
	// in steps while symbol files load; at the default GOGC the collector runs
	// a dozen times for nothing. GOGC still overrides this.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if err := newCommand(os.Stdout).Run(context.Background(), os.Args); err != nil {
		fmt.Fprintf(os.Stderr, "minidump_stackwalk: %v\n", err)
		os.Exit(1)
	}
}

func newCommand(stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name:                   "minidump_stackwalk",
		Usage:                  "print the stack traces of a minidump",
		ArgsUsage:              "DUMP [SYMBOL_PATH ...]",
		UseShortOptionHandling: true,
		HideHelpCommand:        true,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "m", Usage: "output in machine-readable format"},
			&cli.BoolFlag{Name: "s", Usage: "output stack contents"},
			&cli.BoolFlag{Name: "c", Usage: "output the thread that caused the crash or dump only"},
			&cli.BoolFlag{Name: "b", Usage: "brief: the frames of the thread that caused the crash or dump"},
			&cli.IntFlag{Name: "t", Value: runtime.GOMAXPROCS(0), Usage: "walk up to `N` threads at once (the output does not depend on it)"},
			&cli.BoolFlag{Name: "json", Usage: "output rust-minidump's JSON report"},
			&cli.BoolFlag{Name: "pretty", Usage: "indent the JSON report (implies --json)"},
			&cli.BoolFlag{Name: "signature", Usage: "print the crash signature instead of the report (with --json: add it to the report)"},
			&cli.StringFlag{Name: "signature-lists", Usage: "add the signature lists of `DIR` to the defaults (implies --signature)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			args := cmd.Args().Slice()
			if len(args) == 0 {
				return fmt.Errorf("missing minidump file")
			}
			return run(stdout, args[0], args[1:], options{
				machine:        cmd.Bool("m"),
				contents:       cmd.Bool("s"),
				onlyRequesting: cmd.Bool("c"),
				brief:          cmd.Bool("b"),
				json:           cmd.Bool("json") || cmd.Bool("pretty"),
				pretty:         cmd.Bool("pretty"),
				workers:        cmd.Int("t"),
				signature:      cmd.Bool("signature") || cmd.String("signature-lists") != "",
				signatureLists: cmd.String("signature-lists"),
			})
		},
	}
}

// options are the output choices of the command line.
type options struct {
	machine, contents, onlyRequesting, brief, json, pretty bool
	workers                                                int
	signature                                              bool
	signatureLists                                         string
}

func run(stdout io.Writer, dumpPath string, symPaths []string, o options) error {
	f, err := minidump.Open(dumpPath)
	if err != nil {
		return err
	}
	defer f.Close()
	opt := stackwalk.Options{Workers: o.workers}
	var syms symbols.Source
	if len(symPaths) > 0 {
		src, closeAll := symbolSources(symPaths)
		defer closeAll()
		syms = src
		opt.Symbols = syms
	}
	p, err := stackwalk.Process(f, opt)
	if err != nil {
		return err
	}
	if o.signature {
		return printSignature(stdout, f, p, o)
	}
	switch {
	case o.json:
		return jsonout.Write(stdout, p, o.pretty)
	case o.machine:
		return stackwalk.PrintMachineReadable(stdout, p)
	case o.brief:
		return stackwalk.PrintBrief(stdout, p)
	}
	return stackwalk.Print(stdout, p, stackwalk.PrintOptions{
		StackContents:        o.contents,
		RequestingThreadOnly: o.onlyRequesting,
		Symbols:              syms,
	})
}

// printSignature prints the crash signature (with the dump's Crashpad
// annotations taken into account) alone, or the JSON report with a
// "signature" key.
func printSignature(stdout io.Writer, f *minidump.File, p *stackwalk.ProcessState, o options) error {
	gen := signature.Default()
	if o.signatureLists != "" {
		l := signature.DefaultLists()
		if err := l.LoadDir(o.signatureLists, true); err != nil {
			return err
		}
		g, err := signature.New(l)
		if err != nil {
			return err
		}
		gen = g
	}
	sig := gen.ProcessDump(p, f).Signature
	if o.json {
		return jsonout.WriteWith(stdout, p, jsonout.Options{Pretty: o.pretty, Signature: sig})
	}
	_, err := fmt.Fprintln(stdout, sig)
	return err
}
