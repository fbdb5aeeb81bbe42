// Command minidump_dump prints the contents of a minidump file the way
// Google Breakpad's minidump_dump does: the header, the stream directory, and
// every stream Breakpad knows, field by field, in the same format and order.
// It exits with status 1 when the file cannot be read or when one of the
// streams Breakpad requires (thread list, module list, memory list, system
// info, misc info, memory info list) is missing or damaged.
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

	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/dumptext"
)

func main() {
	os.Exit(run(os.Args))
}

func run(args []string) int {
	status := 0
	cmd := &cli.Command{
		Name:      "minidump_dump",
		Usage:     "Dump data in a minidump.",
		ArgsUsage: "<minidump>",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "x", Usage: "Display memory in a hexdump like format"},
		},
		HideHelpCommand: true,
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.NArg() != 1 {
				fmt.Fprintf(os.Stderr, "%s: Missing minidump file\n", args[0])
				status = 1
				return nil
			}
			out := bufio.NewWriterSize(os.Stdout, 1<<16)
			ok := dumpFile(out, os.Stderr, c.Args().First(), c.Bool("x"))
			if err := out.Flush(); err != nil {
				fmt.Fprintln(os.Stderr, "minidump_dump:", err)
				ok = false
			}
			if !ok {
				status = 1
			}
			return nil
		},
	}
	if err := cmd.Run(context.Background(), args); err != nil {
		fmt.Fprintln(os.Stderr, "minidump_dump:", err)
		return 1
	}
	return status
}

// dumpFile opens and prints one minidump; it reports false where Breakpad's
// minidump_dump exits with status 1. Problems are explained on errw.
func dumpFile(w *bufio.Writer, errw *os.File, path string, hexdump bool) bool {
	f, err := minidump.Open(path)
	if err != nil {
		fmt.Fprintln(errw, "minidump_dump:", err)
		return false
	}
	defer f.Close()
	err = dumptext.Write(w, f, dumptext.Options{Hexdump: hexdump})
	var problems dumptext.Problems
	if errors.As(err, &problems) {
		for _, p := range problems {
			fmt.Fprintln(errw, "minidump_dump:", p)
		}
	}
	// An error writing to w is left to the caller's Flush, which reports it
	// (bufio.Writer keeps it).
	return err == nil
}
