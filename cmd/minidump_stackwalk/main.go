// Command minidump_stackwalk prints the stack traces of a minidump, as
// Google Breakpad's tool of the same name does:
//
//	minidump_stackwalk [-f human|machine] [-m] [-s] [-c | -t INDEX] [-d] [-b] [-j N] [--json [--pretty]] [--signature [--signature-lists DIR]] DUMP [SYMBOL_PATH ...]
//
// -f machine (or -m) prints the pipe-delimited machine-readable form, -s adds
// stack contents, -c prints only the crashed (or dump-requesting) thread,
// -t INDEX that thread and the thread of index INDEX (and no module list),
// -d the pointers found on each stack instead of its frames, and -b only the
// crashed thread's frames. --json prints rust-minidump's JSON report instead
// (--pretty indents it). -j N (--jobs) walks up to N threads at once (by
// default as many as the machine has CPUs); the output does not depend on
// it. Flags that would be ignored beside another (-m --json, -b --json, -c
// -t, ...) are a usage error, but -m -s, which Breakpad takes (and prints
// the -m report), is accepted. Options may come before or after the
// positional arguments, and short ones may be combined (-ms). Each
// SYMBOL_PATH is a Breakpad symbol directory
// (SYMBOL_PATH/DEBUG_FILE/DEBUG_ID/DEBUG_FILE.sym); one that does not exist
// is a warning on stderr.
//
// Symbols may also come from servers (docs/symbols.md): a SYMBOL_PATH may be
// an http(s) URL of a Breakpad-layout store or use _NT_SYMBOL_PATH syntax
// (srv*CACHE*URL, cache*DIR, directories); --symbols-url URL adds a
// Breakpad-layout store (repeatable); $_NT_SYMBOL_PATH and $DEBUGINFOD_URLS
// are honoured. Downloads are kept in --symbols-cache DIR (default: the
// user cache directory's gobreakpad); --symbols-timeout and
// --symbols-walk-timeout bound the requests; with a server, --prefetch N
// (default 8; 0: off) loads N modules' symbols at once ahead of the walk
// instead of each when the walk reaches it; a server that is down leaves
// its modules without symbols. -v says on stderr where each module's
// symbols came from, or why none.
//
// rust-minidump's minidump-stackwalk flags are accepted beside Breakpad's,
// so that Socorro's command line runs unchanged: --human, --cyborg FILE,
// --brief (as -b), --output-file, --log-file, --verbose=LEVEL (-v alone
// keeps its meaning), --no-color, --no-interactive, --symbols-path,
// --symbols-tmp, --symbols-download-timeout-secs, --evil-json FILE,
// --use-local-debuginfo, --recover-function-args, --features, -V
// (docs/stackwalk.md: "rust-minidump's command line", each clash).
//
// --signature prints the crash signature (package stackwalk/signature) as
// one line instead of the report; with --json it adds a "signature" key to
// the JSON report instead. --signature-lists DIR (implies --signature) adds
// the signature lists found in DIR to the defaults (docs/signature.md).
package main

import (
	"bytes"
	"context"
	"fmt"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/elfimage"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v3"

	"github.com/gobreakpad/gobreakpad/cmd/internal/cmdline"
	"github.com/gobreakpad/gobreakpad/cmd/internal/symflags"
	"github.com/gobreakpad/gobreakpad/microdump"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/stackwalk/jsonout"
	"github.com/gobreakpad/gobreakpad/stackwalk/signature"
	"github.com/gobreakpad/gobreakpad/symbols/symsrc"
)

func main() {
	// A walk's heap is small (an index of a few MB per symbol file) but grows
	// in steps while symbol files load; at the default GOGC the collector runs
	// a dozen times for nothing. GOGC still overrides this.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(cmdline.Run(context.Background(), newCommand(os.Stdout, os.Stderr), os.Args, os.Stdout, os.Stderr))
}

func newCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:                   "minidump_stackwalk",
		Usage:                  "print the stack traces of a minidump",
		ArgsUsage:              "DUMP [SYMBOL_PATH ...]",
		UseShortOptionHandling: true,
		HideHelpCommand:        true,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "f", Value: "human", Usage: "output `FORMAT`: human or machine (pipe-delimited)"},
			&cli.BoolFlag{Name: "m", Usage: "output in machine-readable format (as -f machine)"},
			&cli.BoolFlag{Name: "s", Usage: "output stack contents"},
			&cli.BoolFlag{Name: "c", Usage: "output the thread that caused the crash or dump only"},
			&cli.BoolFlag{Name: "b", Usage: "brief: the frames of the thread that caused the crash or dump"},
			&cli.IntFlag{Name: "t", Usage: "output the thread of index `INDEX` (after the crashed one) only"},
			&cli.BoolFlag{Name: "d", Usage: "dump the pointers found on the stacks, with their symbols"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: runtime.GOMAXPROCS(0), Usage: "walk up to `N` threads at once (the output does not depend on it)"},
			&cli.BoolFlag{Name: "json", Usage: "output rust-minidump's JSON report"},
			&cli.BoolFlag{Name: "tail-calls", Usage: "show the functions that left by a tail call, from the direct call before each caller's return address where the dump holds the code (not Breakpad's walk)"},
			&cli.BoolFlag{Name: "check-call-sites", Usage: "stack scans take only candidates with a call instruction before them, where the dump holds the code (not Breakpad's scan)"},
			&cli.BoolFlag{Name: "pretty", Usage: "indent the JSON report (implies --json)"},
			&cli.BoolFlag{Name: "signature", Usage: "print the crash signature instead of the report (with --json: add it to the report)"},
			&cli.StringFlag{Name: "signature-lists", Usage: "add the signature lists of `DIR` to the defaults (implies --signature)"},
		}, append(symflags.Flags(), rustFlags()...)...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			args, err := symflags.LevelArg(cmd, cmd.Args().Slice())
			if err != nil {
				return cmdline.Usagef("%v", err)
			}
			if len(args) == 0 {
				return cmdline.Usagef("missing minidump file")
			}
			o := options{
				machine:        cmd.Bool("m"),
				contents:       cmd.Bool("s"),
				onlyRequesting: cmd.Bool("c"),
				brief:          cmd.Bool("b"),
				json:           cmd.Bool("json") || cmd.Bool("pretty"),
				pretty:         cmd.Bool("pretty"),
				workers:        cmd.Int("jobs"),
				pointers:       cmd.Bool("d"),
				onlyThread:     cmd.IsSet("t"),
				thread:         cmd.Int("t"),
				signature:      cmd.Bool("signature") || cmd.String("signature-lists") != "",
				signatureLists: cmd.String("signature-lists"),
				checkCalls:     cmd.Bool("check-call-sites"),
				tailCalls:      cmd.Bool("tail-calls"),
			}
			switch f := cmd.String("f"); f {
			case "human":
				if cmd.IsSet("f") && o.machine {
					return cmdline.Usagef("-f human and -m conflict")
				}
			case "machine":
				o.machine = true
			default:
				return cmdline.Usagef("unknown output format %q (human or machine)", f)
			}
			if err := readRustFlags(cmd, &o); err != nil {
				return err
			}
			if err := o.check(); err != nil {
				return err
			}
			if o.workers < 1 {
				return cmdline.Usagef("-j %d: at least 1 thread at once", o.workers)
			}
			out, log, closeAll, err := o.rust.outputs(stdout, stderr)
			if err != nil {
				return err
			}
			o.symbols, o.verbose = symflags.CommandConfig(cmd, args[1:], log), symflags.Verbose(cmd)
			if o.rust.dump {
				err = runDump(out, log, args[0])
			} else {
				err = run(out, log, args[0], o)
			}
			if err != nil && o.rust.logFile != "" {
				fmt.Fprintf(log, "minidump_stackwalk: %v\n", err)
			}
			if cerr := closeAll(); err == nil {
				err = cerr
			}
			return err
		},
	}
}

// options are the output choices of the command line.
type options struct {
	machine, contents, onlyRequesting, brief, json, pretty bool
	pointers, onlyThread                                   bool
	workers, thread                                        int
	signature                                              bool
	signatureLists                                         string
	symbols                                                symsrc.Config
	verbose                                                bool
	checkCalls                                             bool
	tailCalls                                              bool
	rust                                                   rustOptions
}

// check rejects flags that another flag would make ignored.
func (o options) check() error {
	type flag struct {
		set  bool
		name string
	}
	human := []flag{{o.contents, "-s"}, {o.onlyRequesting, "-c"}, {o.onlyThread, "-t"}, {o.pointers, "-d"}, {o.brief, "-b"}}
	for _, mode := range []flag{{o.json, "--json"}, {o.machine, "-m"}} {
		if !mode.set {
			continue
		}
		if mode.name == "--json" && o.machine {
			return cmdline.Usagef("--json and -m (or -f machine) conflict")
		}
		for _, f := range human {
			if f.set && !(mode.name == "-m" && f.name == "-s") { // Breakpad takes -m -s: the -m report
				return cmdline.Usagef("%s and %s conflict (%s applies to the human report)", mode.name, f.name, f.name)
			}
		}
	}
	if o.brief {
		for _, f := range human[:4] {
			if f.set {
				return cmdline.Usagef("-b and %s conflict", f.name)
			}
		}
	}
	if o.onlyRequesting && o.onlyThread {
		return cmdline.Usagef("-c and -t cannot be used together")
	}
	if o.onlyThread && o.thread < 0 {
		return cmdline.Usagef("-t %d: thread indexes start at 0", o.thread)
	}
	return nil
}

func run(stdout, stderr io.Writer, dumpPath string, o options) error {
	f, err := minidump.Open(dumpPath)
	if err != nil {
		return explainOpen(dumpPath, err)
	}
	defer f.Close()
	p, err := stackwalk.Read(f)
	if err != nil {
		return err
	}
	if o.rust.localDebugInfo {
		var paths []string
		for _, m := range p.Modules {
			paths = append(paths, m.CodeFile, m.DebugFile)
		}
		o.symbols.LocalDirs = symsrc.ModuleDirs(paths)
	}
	opt := stackwalk.Options{Workers: o.workers, CheckCallSites: o.checkCalls, TailCalls: o.tailCalls}
	var syms symbols.Source
	if !o.symbols.None() {
		src, err := symsrc.Open(o.symbols)
		if err != nil {
			return err
		}
		for _, w := range cmdline.CheckDirs("symbol path", src.Dirs) {
			fmt.Fprintf(stderr, "minidump_stackwalk: warning: %s; walking without it\n", w)
		}
		defer src.Close()
		if o.verbose {
			defer src.Summary(stderr, "minidump_stackwalk")
		}
		syms = src
		opt.Symbols = syms
		opt.Prefetch = src.Prefetch()
		opt.ImageSymbols = elfimage.Load // the vDSO our captures save whole
	}
	p.Walk(opt)
	for _, e := range p.Problems {
		fmt.Fprintf(stderr, "minidump_stackwalk: %s: %s\n", dumpPath, stackwalk.Escape(e.Error()))
	}
	jo := jsonout.Options{Pretty: o.pretty, Evil: o.rust.evil(stderr)}
	if o.signature {
		return printSignature(stdout, p, o, jo)
	}
	if o.rust.cyborg != "" {
		if err := writeJSONFile(o.rust.cyborg, p, jo); err != nil {
			return err
		}
	}
	switch {
	case o.json:
		return jsonout.WriteWith(stdout, p, jo)
	case o.machine:
		return stackwalk.PrintMachineReadable(stdout, p)
	case o.brief:
		return stackwalk.PrintBrief(stdout, p)
	}
	return stackwalk.Print(stdout, p, stackwalk.PrintOptions{
		StackContents:        o.contents,
		RequestingThreadOnly: o.onlyRequesting,
		Symbols:              syms,
		OnlyThread:           o.onlyThread,
		ThreadIndex:          o.thread,
		StackPointers:        o.pointers,
		FunctionArgs:         o.rust.functionArgs,
	})
}

// printSignature prints the crash signature (with the dump's Crashpad
// annotations taken into account) alone, or the JSON report with a
// "signature" key.
func printSignature(stdout io.Writer, p *stackwalk.ProcessState, o options, jo jsonout.Options) error {
	gen, err := signature.Extended(o.signatureLists)
	if err != nil {
		return err
	}
	sig := gen.Process(p).Signature
	if o.json {
		jo.Signature = sig
		return jsonout.WriteWith(stdout, p, jo)
	}
	_, err = fmt.Fprintln(stdout, sig)
	return err
}

// writeJSONFile writes the JSON report into the file at path (--cyborg).
func writeJSONFile(path string, p *stackwalk.ProcessState, jo jsonout.Options) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = jsonout.WriteWith(f, p, jo)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// explainOpen adds what the file is when it is not a minidump but a file
// another program reads: an ELF core file (core2md converts it) or a
// microdump (microdump_stackwalk walks it).
func explainOpen(path string, err error) error {
	fh, oerr := os.Open(path)
	if oerr != nil {
		return err
	}
	defer fh.Close()
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(fh, head)
	head = head[:n]
	switch {
	case len(head) >= 18 && string(head[:4]) == "\x7fELF" && head[16] == 4 && head[17] == 0:
		return fmt.Errorf("%s is an ELF core file, not a minidump: convert it with core2md (%w)", path, err)
	case len(head) >= 4 && string(head[:4]) == "\x7fELF":
		return fmt.Errorf("%s is an ELF file, not a minidump (%w)", path, err)
	case bytes.Contains(head, []byte(microdump.Begin)):
		return fmt.Errorf("%s holds a microdump, not a minidump: walk it with microdump_stackwalk (%w)", path, err)
	}
	return err
}
