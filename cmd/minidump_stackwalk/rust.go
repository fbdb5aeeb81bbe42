package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v3"

	"github.com/gobreakpad/gobreakpad/cmd/internal/cmdline"
	"github.com/gobreakpad/gobreakpad/cmd/internal/symflags"
	"github.com/gobreakpad/gobreakpad/internal/textsafe"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/dumptext"
	"github.com/gobreakpad/gobreakpad/stackwalk/jsonout"
)

// rustFlags are rust-minidump's minidump-stackwalk flags (0.26's --help)
// that Breakpad's tool lacks; --json, --pretty, --symbols-url,
// --symbols-cache and -v/--verbose are shared (docs/stackwalk.md lists the
// clashes: Breakpad's meaning stays).
func rustFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "human", Usage: "output the human report (the default; rust-minidump's flag, Breakpad's text)"},
		&cli.StringFlag{Name: "cyborg", Usage: "output the human report, and the JSON report into `FILE`"},
		&cli.BoolFlag{Name: "brief", Usage: "as -b (rust-minidump's --brief: the crashed thread only); with --dump, accepted"},
		&cli.BoolFlag{Name: "dump", Usage: "print the minidump's raw contents instead of a walk: minidump_dump's (Breakpad's) text, as rust-minidump's --dump implements the old minidump_dump"},
		&cli.StringFlag{Name: "output-file", Usage: "write the report into `FILE` instead of stdout"},
		&cli.StringFlag{Name: "log-file", Usage: "write warnings, -v's summary and errors into `FILE` instead of stderr"},
		&cli.BoolFlag{Name: "no-color", Usage: "accepted for rust-minidump's command line (nothing is ever colored)"},
		&cli.BoolFlag{Name: "no-interactive", Usage: "accepted for rust-minidump's command line (no progress bar is ever drawn)"},
		&cli.StringFlag{Name: "evil-json", Usage: "read Socorro's raw crash JSON from `FILE` into the JSON report (certificate subjects, CPU microcode), as rust-minidump"},
		&cli.BoolFlag{Name: "use-local-debuginfo", Usage: "also read native debug files (ELF, PDB, PE) found beside the modules' recorded paths"},
		&cli.BoolFlag{Name: "recover-function-args", Usage: "after each x86 frame, the arguments rust-minidump guesses from its function's parameter list (human report; docs/stackwalk.md)"},
		&cli.StringFlag{Name: "features", Value: "stable-basic", Usage: "rust-minidump's analysis `SET`: stable-basic, stable-all or unstable-all (as --recover-function-args)", Validator: func(s string) error {
			switch s {
			case "stable-basic", "stable-all", "unstable-all":
				return nil
			}
			return fmt.Errorf("--features %s: stable-basic, stable-all or unstable-all", s)
		}},
	}
}

// rustOptions are what rust-minidump's flags change.
type rustOptions struct {
	cyborg, outputFile, logFile, evilJSON string
	localDebugInfo, functionArgs          bool
	quiet                                 bool // --verbose=off
	dump                                  bool // --dump
}

// readRustFlags reads rustFlags into o, checking the combinations
// rust-minidump refuses.
func readRustFlags(cmd *cli.Command, o *options) error {
	r := rustOptions{cyborg: cmd.String("cyborg"), outputFile: cmd.String("output-file"), logFile: cmd.String("log-file"),
		evilJSON: cmd.String("evil-json"), localDebugInfo: cmd.Bool("use-local-debuginfo"), quiet: symflags.Level(cmd) == "off",
		functionArgs: cmd.Bool("recover-function-args") || cmd.String("features") == "unstable-all"}
	human := cmd.Bool("human")
	if human && o.json {
		return cmdline.Usagef("--human and --json (or --pretty) conflict")
	}
	if r.cyborg != "" && (cmd.Bool("json") || human || o.machine) {
		return cmdline.Usagef("--cyborg and --json, --human or -m conflict (--cyborg writes the human report and the JSON)")
	}
	if r.cyborg != "" {
		o.json = false // --pretty indents the JSON of --cyborg's file
	}
	if cmd.IsSet("cyborg") && r.cyborg == "" {
		return cmdline.Usagef("--cyborg needs a file name")
	}
	if r.dump = cmd.Bool("dump"); r.dump {
		// rust-minidump's output-format group: one of --json, --human,
		// --cyborg, --dump; our human report's flags do not apply either.
		for _, f := range []string{"json", "pretty", "human", "cyborg", "m", "s", "c", "b", "t", "d", "signature", "signature-lists", "recover-function-args"} {
			if cmd.IsSet(f) {
				return cmdline.Usagef("--dump and %s conflict", map[bool]string{true: "-", false: "--"}[len(f) == 1]+f)
			}
		}
		o.rust = r
		return nil
	}
	if cmd.Bool("brief") {
		o.brief = true
	}
	o.rust = r
	return nil
}

// runDump prints the raw contents of the minidump at path as minidump_dump
// does (minidump/dumptext, Breakpad's text), for --dump: streams that are
// damaged are said on log and make the error (exit 1), as minidump_dump's;
// absent ones are notes.
func runDump(out, log io.Writer, path string) error {
	f, err := minidump.Open(path)
	if err != nil {
		return explainOpen(path, err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(out, 1<<16)
	err = dumptext.Write(w, f, dumptext.Options{})
	if ferr := w.Flush(); ferr != nil {
		return ferr
	}
	var problems dumptext.Problems
	if !errors.As(err, &problems) {
		return err
	}
	damaged := 0
	for _, p := range problems {
		if errors.Is(p, minidump.ErrNoStream) {
			fmt.Fprintln(log, "minidump_stackwalk: note:", textsafe.Escape(p.Error()))
			continue
		}
		fmt.Fprintln(log, "minidump_stackwalk:", textsafe.Escape(p.Error()))
		damaged++
	}
	if damaged > 0 {
		return cmdline.ExitStatus(1)
	}
	return nil
}

// outputs opens the files of --output-file and --log-file, returning the
// writers to use for stdout and stderr and a function closing them (with
// the first error in writing them).
func (r rustOptions) outputs(stdout, stderr io.Writer) (out, log io.Writer, closeAll func() error, err error) {
	out, log = stdout, stderr
	var files []io.Closer
	closeAll = func() error {
		var first error
		for _, f := range files {
			if err := f.Close(); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	if r.logFile != "" {
		f, err := os.Create(r.logFile)
		if err != nil {
			return nil, nil, closeAll, err
		}
		files, log = append(files, f), f
	}
	if r.quiet {
		log = io.Discard
	}
	if r.outputFile != "" {
		// Created at the report's first byte, as rust-minidump creates it
		// only once the dump has been read: a dump that cannot be read
		// leaves no empty report behind.
		lf := &lazyFile{path: r.outputFile}
		files, out = append(files, lf), lf
	}
	return out, log, closeAll, nil
}

// lazyFile is a file created by its first Write.
type lazyFile struct {
	path string
	f    *os.File
}

func (l *lazyFile) Write(p []byte) (int, error) {
	if l.f == nil {
		f, err := os.Create(l.path)
		if err != nil {
			return 0, err
		}
		l.f = f
	}
	return l.f.Write(p)
}

// Close closes the file if it was created.
func (l *lazyFile) Close() error {
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}

// evil reads --evil-json's file; a file that cannot be read is a warning,
// as in rust-minidump (the report is written without it).
func (r rustOptions) evil(stderr io.Writer) *jsonout.Evil {
	if r.evilJSON == "" {
		return nil
	}
	f, err := os.Open(r.evilJSON)
	if err != nil {
		fmt.Fprintf(stderr, "minidump_stackwalk: warning: --evil-json: %v; reporting without it\n", err)
		return nil
	}
	defer f.Close()
	ev, err := jsonout.ReadEvil(f)
	if err != nil {
		fmt.Fprintf(stderr, "minidump_stackwalk: warning: %s: %v\n", r.evilJSON, err)
	}
	return ev
}
