// Command symconv converts symbol files between the formats the project
// reads and writes:
//
//	symconv [-f FORMAT] [-v] INPUT OUTPUT
//
// The input's format is recognized by its first bytes (or its extension);
// the output's comes from -f or from OUTPUT's extension. OUTPUT "-" writes
// to stdout (then -f is needed). `symconv --help` lists the formats read and
// written.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/gobreakpad/gobreakpad/internal/cmdline"
	"io"
	"os"

	"github.com/gobreakpad/gobreakpad/internal/formats"
	"github.com/urfave/cli/v3"
)

func main() {
	os.Exit(cmdline.Run(context.Background(), newCommand(os.Stdout, os.Stderr), os.Args, os.Stdout, os.Stderr))
}

func newCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "symconv",
		Usage:     "convert a symbol file into another format",
		ArgsUsage: "INPUT OUTPUT",
		Description: "Reads: " + formats.Readers() + ".\nWrites: " + formats.Writers() + ".\n" +
			"The output format is -f's, or the one OUTPUT's extension names; OUTPUT - is stdout.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "f", Usage: "output `FORMAT`"},
			&cli.BoolFlag{Name: "v", Usage: "say on stderr what the input held that was skipped"},
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
			return convert(args[0], args[1], c.String("f"), stdout, warn)
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
	default:
		to, err = formats.ByExt(out)
	}
	if err != nil {
		return err
	}
	if to.Write == nil {
		return fmt.Errorf("%s files cannot be written (writes: %s)", to.Name, formats.Writers())
	}
	from, err := formats.Detect(in)
	if err != nil {
		return err
	}
	if from.Read == nil {
		return fmt.Errorf("%s: %s files cannot be converted (reads: %s)", in, from.Name, formats.Readers())
	}
	s, err := from.Read(in, warn)
	if err != nil {
		return err
	}
	if out == "-" {
		bw := bufio.NewWriterSize(stdout, 1<<20)
		if err := to.Write(bw, s); err != nil {
			return err
		}
		return bw.Flush()
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := to.Write(bw, s); err != nil {
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
