// Command minidump_stackwalk prints the stack traces of a minidump, as
// Google Breakpad's tool of the same name does:
//
//	minidump_stackwalk [-m] [-s] [-c] [-t N] [-b] [--json [--pretty]] DUMP [SYMBOL_PATH ...]
//
// -m prints the pipe-delimited machine-readable form, -s adds stack
// contents, -c prints only the crashed (or dump-requesting) thread and -b
// only that thread's frames. --json prints rust-minidump's JSON report
// instead (--pretty indents it). -t N walks up to N threads at once (by
// default as many as the machine has CPUs); the output does not depend on it. Options may come before or after the
// positional arguments, and short ones may be combined (-ms). Each SYMBOL_PATH is a Breakpad symbol
// directory (SYMBOL_PATH/DEBUG_FILE/DEBUG_ID/DEBUG_FILE.sym).
package main

import (
	"context"
	"fmt"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v3"

	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/stackwalk/jsonout"
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
			})
		},
	}
}

// options are the output choices of the command line.
type options struct {
	machine, contents, onlyRequesting, brief, json, pretty bool
	workers                                                int
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
		dirs := breakpad.NewDirs(symPaths...)
		defer dirs.Close()
		syms = dirs
		opt.Symbols = syms
	}
	p, err := stackwalk.Process(f, opt)
	if err != nil {
		return err
	}
	for _, e := range p.Problems {
		fmt.Fprintf(os.Stderr, "minidump_stackwalk: %s: %s\n", dumpPath, stackwalk.Escape(e.Error()))
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
