// Command minidump_stackwalk prints the stack traces of a minidump, as
// Google Breakpad's tool of the same name does:
//
//	minidump_stackwalk [-m] [-s] [-c] [-b] DUMP [SYMBOL_PATH ...]
//
// -m prints the pipe-delimited machine-readable form, -s adds stack
// contents, -c prints only the crashed (or dump-requesting) thread and -b
// only that thread's frames. Each SYMBOL_PATH is a Breakpad symbol
// directory (SYMBOL_PATH/DEBUG_FILE/DEBUG_ID/DEBUG_FILE.sym).
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v3"

	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
)

func main() {
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
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			args := cmd.Args().Slice()
			if len(args) == 0 {
				return fmt.Errorf("missing minidump file")
			}
			return run(stdout, args[0], args[1:], cmd.Bool("m"), cmd.Bool("s"), cmd.Bool("c"), cmd.Bool("b"))
		},
	}
}

func run(stdout io.Writer, dumpPath string, symPaths []string, machine, contents, onlyRequesting, brief bool) error {
	f, err := minidump.Open(dumpPath)
	if err != nil {
		return err
	}
	defer f.Close()
	var opt stackwalk.Options
	var syms stackwalk.SymbolSource
	if len(symPaths) > 0 {
		dirs := stackwalk.NewSymbolDirs(symPaths...)
		defer dirs.Close()
		syms = dirs
		opt.Symbols = syms
	}
	p, err := stackwalk.Process(f, opt)
	if err != nil {
		return err
	}
	switch {
	case machine:
		return stackwalk.PrintMachineReadable(stdout, p)
	case brief:
		return stackwalk.PrintBrief(stdout, p)
	}
	return stackwalk.Print(stdout, p, stackwalk.PrintOptions{
		StackContents:        contents,
		RequestingThreadOnly: onlyRequesting,
		Symbols:              syms,
	})
}
