// Command minidump_dump prints the contents of a minidump file the way
// Google Breakpad's minidump_dump does: the header, the stream directory, and
// every stream Breakpad knows, field by field, in the same format and order.
// It exits with status 1 when the file cannot be read or when a stream it
// reads is damaged, and 2 on a usage error. A dump that lacks one of the
// streams Breakpad's minidump_dump requires (thread list, module list,
// memory list, system info, misc info, memory info list) but is otherwise
// sound exits 0, with a note on stderr per missing stream: Breakpad exits 1
// there, which made healthy dumps from clients that write fewer streams
// look broken (a deliberate difference).
//
// Usage:
//
//	minidump_dump [-x] <minidump>
//
// -x prints memory as a hex dump with an ASCII column instead of one long
// hex string.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v3"

	"github.com/gobreakpad/gobreakpad/cmd/internal/cmdline"
	"github.com/gobreakpad/gobreakpad/internal/textsafe"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/dumptext"
)

func main() {
	os.Exit(run(os.Args))
}

func run(args []string) int {
	return cmdline.Run(context.Background(), newCommand(), args, os.Stdout, os.Stderr)
}

func newCommand() *cli.Command {
	return &cli.Command{
		Name:      "minidump_dump",
		Usage:     "Dump data in a minidump.",
		ArgsUsage: "<minidump>",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "x", Usage: "Display memory in a hexdump like format"},
		},
		HideHelpCommand: true,
		Action: func(ctx context.Context, c *cli.Command) error {
			switch c.NArg() {
			case 0:
				return cmdline.Usagef("missing minidump file")
			case 1:
			default:
				return cmdline.Usagef("one minidump file at a time (%d given)", c.NArg())
			}
			out := bufio.NewWriterSize(os.Stdout, 1<<16)
			ok := dumpFile(out, os.Stderr, c.Args().First(), c.Bool("x"))
			if err := out.Flush(); err != nil {
				fmt.Fprintln(os.Stderr, "minidump_dump:", err)
				ok = false
			}
			if !ok {
				return cmdline.ExitStatus(1)
			}
			return nil
		},
	}
}

// dumpFile opens and prints one minidump; it reports false when the file
// cannot be read or a stream is damaged (not when streams are only
// missing). Problems are explained on errw.
func dumpFile(w *bufio.Writer, errw *os.File, path string, hexdump bool) bool {
	f, err := minidump.Open(path)
	if err != nil {
		fmt.Fprintln(errw, "minidump_dump:", textsafe.Escape(err.Error()))
		return false
	}
	defer f.Close()
	err = dumptext.Write(w, f, dumptext.Options{Hexdump: hexdump})
	var problems dumptext.Problems
	if !errors.As(err, &problems) {
		// An error writing to w is left to the caller's Flush, which
		// reports it (bufio.Writer keeps it).
		return err == nil
	}
	damaged := false
	for _, p := range problems {
		if errors.Is(p, minidump.ErrNoStream) {
			fmt.Fprintln(errw, "minidump_dump: note:", textsafe.Escape(p.Error()))
			continue
		}
		fmt.Fprintln(errw, "minidump_dump:", textsafe.Escape(p.Error()))
		damaged = true
	}
	return !damaged
}
