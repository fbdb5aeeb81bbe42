// Command microdump_stackwalk prints the stack trace of a Breakpad
// microdump, as Google Breakpad's tool of the same name does:
//
//	microdump_stackwalk [-m] [-s] MICRODUMP [SYMBOL_PATH ...]
//
// MICRODUMP is a log holding the microdump that Breakpad's Android or Linux
// client wrote (logcat lines with the google-breakpad tag, or bare lines);
// the first microdump in it is walked. -m prints the pipe-delimited
// machine-readable form, -s adds stack contents. Each SYMBOL_PATH is a
// Breakpad symbol directory (SYMBOL_PATH/DEBUG_FILE/DEBUG_ID/DEBUG_FILE.sym).
//
// It walks arm, arm64, x86, mips and mips64 microdumps as Breakpad's
// processor does and, unlike it, x86_64 ones too. It exits with status 1
// when the microdump cannot be walked (no microdump in the file, no CPU
// context, an unsupported CPU), and 2 on a usage error.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v3"

	"github.com/gobreakpad/gobreakpad/internal/cmdline"
	"github.com/gobreakpad/gobreakpad/microdump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/breakpad"
)

func main() {
	os.Exit(cmdline.Run(context.Background(), newCommand(os.Stdout, os.Stderr), os.Args, os.Stdout, os.Stderr))
}

func newCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:                   "microdump_stackwalk",
		Usage:                  "print the stack trace of a Breakpad microdump",
		ArgsUsage:              "MICRODUMP [SYMBOL_PATH ...]",
		UseShortOptionHandling: true,
		HideHelpCommand:        true,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "m", Usage: "output in machine-readable format"},
			&cli.BoolFlag{Name: "s", Usage: "output stack contents"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			args := cmd.Args().Slice()
			if len(args) == 0 {
				return cmdline.Usagef("missing microdump file")
			}
			if cmd.Bool("m") && cmd.Bool("s") {
				return cmdline.Usagef("-s has no effect with -m")
			}
			return run(stdout, stderr, args[0], args[1:], cmd.Bool("m"), cmd.Bool("s"))
		},
	}
}

func run(stdout, stderr io.Writer, path string, symPaths []string, machine, contents bool) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if len(text) == 0 {
		return fmt.Errorf("%s: microdump is empty", path)
	}
	md, err := microdump.Parse(text)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, w := range md.Warnings {
		fmt.Fprintf(stderr, "microdump_stackwalk: warning: %s: %s\n", path, w)
	}
	p, err := stackwalk.ReadMicrodump(md)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var syms symbols.Source
	if len(symPaths) > 0 {
		for _, w := range cmdline.CheckDirs("symbol path", symPaths) {
			fmt.Fprintf(stderr, "microdump_stackwalk: warning: %s; walking without it\n", w)
		}
		dirs := breakpad.NewDirs(symPaths...)
		defer dirs.Close()
		syms = dirs
	}
	p.Walk(stackwalk.Options{Symbols: syms})
	if machine {
		return stackwalk.PrintMachineReadable(stdout, p)
	}
	return stackwalk.Print(stdout, p, stackwalk.PrintOptions{StackContents: contents, Symbols: syms})
}
