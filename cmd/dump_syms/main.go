// Command dump_syms writes the Breakpad symbol file of a Linux ELF binary,
// a drop-in for Breakpad's Linux dump_syms, or of a Windows PDB (or a PE,
// .exe or .dll, with its PDB), as Breakpad's and Mozilla's Windows
// dump_syms write it:
//
//	dump_syms [-i] [-c] [-d] [-m] [-v] [-n NAME] [-o OS] [--store DIR] [--symbols-cache DIR]
//	          [--cfi-style symbolic|mozilla|breakpad|mozilla-pe|exact] [--pe-only breakpad|mozilla]
//	          BINARY [DEBUG_DIR ...]
//
// The .sym text goes to stdout, or with --store into DIR/NAME/ID/NAME.sym,
// the layout symbol stores and minidump_stackwalk use. DEBUG_DIR names
// directories holding separate debug files (.gnu_debuglink targets or
// .build-id/xx/rest.debug trees). Without DEBUG_DIR, the separate debug file
// of a stripped binary (no .debug_info) is fetched by build ID from the
// debuginfod servers of $DEBUGINFOD_URLS, as elfutils' tools do, and kept in
// --symbols-cache DIR (docs/symbols.md). The reader is chosen by the file's
// magic bytes: ELF (package dumpsyms/elf says what is read), PDB 7.0 and PE
// (package dumpsyms/pe), Mach-O and dSYM bundles (dumpsyms/macho); others are
// refused with their magic named. MODULE's OS is "windows" for PDBs whatever
// -o says, "mac" for Mach-O unless -o names another.
//
// For Windows x64, STACK CFI comes from the PE's .pdata/.xdata when the PE
// is at hand (given, or beside the PDB): --cfi-style symbolic (the default)
// is what Mozilla's dump_syms writes today and Sentry symbolic's snapshot,
// mozilla matches Mozilla's older reference files, breakpad Breakpad's;
// exact (ours) gives the rules at every instruction, prologs and epilogs
// included, for walks stopped there (docs/dump_syms.md). A PE whose PDB is
// not found gives Breakpad's PE-only records, or with --pe-only mozilla
// Mozilla's (FUNC placeholders for .pdata functions).
//
// As Mozilla's dump_syms, a PE's PDB not found beside it nor at its
// recorded path is fetched from Microsoft symbol servers:
// --symbol-server "SRV*CACHE*URL;..." (else $HOME/.dump_syms/config, else
// $_NT_SYMBOL_PATH), NAME.pdb/GUIDAGE/NAME.pdb or its cabinet NAME.pd_,
// kept in CACHE; --debug-id ID (or --code-id ID) fetches the PDB (or PE)
// named BINARY first. Microsoft Cabinet files (.pd_, .ex_, .dl_) are read
// wherever a PDB or PE is, given or found beside (docs/dump_syms.md).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/urfave/cli/v3"

	"github.com/gobreakpad/gobreakpad/cmd/internal/cmdline"
	"github.com/gobreakpad/gobreakpad/cmd/internal/tempdir"
	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dself "github.com/gobreakpad/gobreakpad/dumpsyms/elf"
	dsmacho "github.com/gobreakpad/gobreakpad/dumpsyms/macho"
	dspe "github.com/gobreakpad/gobreakpad/dumpsyms/pe"
	"github.com/gobreakpad/gobreakpad/pe/unwindinfo"
	"github.com/gobreakpad/gobreakpad/symbols/formats"
	"github.com/gobreakpad/gobreakpad/symbols/pdbsyms"
	"github.com/gobreakpad/gobreakpad/symbols/remote"
	"github.com/gobreakpad/gobreakpad/symstore"
)

func main() {
	// The symbol data is built once and written out: collecting more often
	// than the default keeps the peak memory ~15% lower for the same CPU
	// time (measured on a 33 MB Go binary). GOGC still overrides this.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
	os.Exit(cmdline.Run(context.Background(), newCommand(os.Stdout, os.Stderr), os.Args, os.Stdout, os.Stderr))
}

// newCommand returns the command line, writing the symbol file to stdout
// and messages to stderr.
func newCommand(stdout io.Writer, stderr *os.File) *cli.Command {
	return &cli.Command{
		Name:                   "dump_syms",
		Usage:                  "write the Breakpad symbol file of an ELF binary, a Mach-O binary or dSYM, or a Windows PDB/PE",
		ArgsUsage:              "BINARY [DEBUG_DIR ...]",
		UseShortOptionHandling: true,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "i", Usage: "write only the MODULE and INFO header"},
			&cli.BoolFlag{Name: "c", Usage: "do not write STACK CFI records"},
			&cli.BoolFlag{Name: "d", Aliases: []string{"inlines"}, Usage: "write INLINE_ORIGIN and INLINE records (Mozilla's --inlines)"},
			&cli.BoolFlag{Name: "m", Usage: "mark FUNC and PUBLIC records of several folded symbols with m"},
			&cli.BoolFlag{Name: "v", Usage: "explain on stderr what was skipped and why"},
			&cli.BoolFlag{Name: "strict", Usage: "fail (exit 1, no output) when a PDB record or stream fails to parse, instead of warning"},
			&cli.StringFlag{Name: "a", Usage: "Mach-O: the architecture `ARCH` of a universal file (x86_64, arm64, arm64e, ...)"},
			&cli.StringFlag{Name: "g", Usage: "Mach-O: read DWARF from the dSYM bundle (or the file in it) `DSYM`"},
			&cli.BoolFlag{Name: "list-arch", Usage: "Mach-O: list the architectures of BINARY (as Mozilla's dump_syms) and exit"},
			&cli.StringFlag{Name: "n", Usage: "module `NAME` instead of the binary's file name"},
			&cli.StringFlag{Name: "b", Usage: "module identifier `ID` in the MODULE record instead of the binary's (Breakpad's -b)"},
			&cli.BoolFlag{Name: "r", Usage: "accepted for Breakpad's command line (its readers' inter-unit references; ours always follow them)"},
			&cli.StringFlag{Name: "o", Usage: "operating system `OS` in the MODULE record", Value: "Linux"},
			&cli.IntFlag{Name: "max-inflate-ratio", Usage: "skip a compressed section declaring more than `N` times its compressed size (at least 64 MiB)", Value: dself.DefaultInflateRatio},
			&cli.StringFlag{Name: "store", Usage: "write into symbol store `DIR` as NAME/ID/NAME.sym instead of stdout"},
			&cli.StringFlag{Name: "output", Usage: "write into `FILE` instead of stdout (Mozilla's --output; -o stays Breakpad's OS)"},
			&cli.BoolFlag{Name: "no-generator", Usage: "accepted for Mozilla's command line: no INFO GENERATOR record is ever written"},
			&cli.StringFlag{Name: "symbols-cache", Usage: "keep debug files fetched from $DEBUGINFOD_URLS in `DIR` (default: the user cache directory's gobreakpad)"},
			&cli.StringFlag{Name: "cfi-style", Usage: "x64 Windows STACK CFI from a PE's .pdata in `STYLE`: symbolic (Mozilla's dump_syms today), mozilla (its older references: negative offsets clamped), breakpad, mozilla-pe, exact (ours: the rules at every instruction, prologs and epilogs included; also for Mach-O x86_64 compact unwind)", Value: "symbolic"},
			&cli.StringFlag{Name: "pe-only", Usage: "records of a PE whose PDB is not found, as `TOOL` writes them: breakpad (exports, STACK CFI in Breakpad's style) or mozilla (a FUNC per .pdata function, STACK CFI in --cfi-style)", Value: "breakpad"},
			&cli.StringFlag{Name: "symbol-server", Usage: "fetch a PE's PDB from the symbol servers of `PATH` (\"SRV*CACHE*URL;...\"; default: $HOME/.dump_syms/config, else $_NT_SYMBOL_PATH)"},
			&cli.StringFlag{Name: "debug-id", Usage: "fetch the PDB named BINARY with debug identifier `ID` from the symbol servers, then dump it"},
			&cli.StringFlag{Name: "code-id", Usage: "fetch the PE named BINARY with code identifier `ID` from the symbol servers, then dump it"},
		},
		Writer: stdout, ErrWriter: stderr,
		Action: func(ctx context.Context, c *cli.Command) error {
			return run(c, stdout, stderr)
		},
	}
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func run(c *cli.Command, stdout io.Writer, stderr *os.File) error {
	args := c.Args().Slice()
	if len(args) < 1 {
		return cmdline.Usagef("missing binary")
	} else if c.Bool("list-arch") {
		return dsmacho.ListArch(args[0], stdout)
	}
	for _, w := range cmdline.CheckDirs("debug directory", args[1:]) {
		fmt.Fprintf(stderr, "dump_syms: warning: %s; dumping without it\n", w)
	}
	opts := dumpsyms.Options{
		HeaderOnly:      c.Bool("i"),
		NoCFI:           c.Bool("c"),
		Inlines:         c.Bool("d"),
		Multiple:        c.Bool("m"),
		Name:            c.String("n"),
		OS:              c.String("o"),
		DebugDirs:       args[1:],
		MaxInflateRatio: int64(c.Int("max-inflate-ratio")),
	}
	wopts := dspe.Options{}
	switch st := c.String("cfi-style"); st {
	case "symbolic":
		wopts.CFIStyle = unwindinfo.StyleSymbolic
	case "mozilla":
		wopts.CFIStyle = unwindinfo.StyleMozilla
	case "breakpad":
		wopts.CFIStyle = unwindinfo.StyleBreakpad
	case "mozilla-pe":
		wopts.CFIStyle = unwindinfo.StyleMozillaPE
	case "exact":
		wopts.CFIStyle = unwindinfo.StyleExact
	default:
		return cmdline.Usagef("--cfi-style %q: want symbolic, mozilla, breakpad, mozilla-pe or exact", st)
	}
	switch f := c.String("pe-only"); f {
	case "breakpad":
		wopts.PEOnly = dspe.PEOnlyBreakpad
	case "mozilla":
		wopts.PEOnly = dspe.PEOnlyMozilla
	default:
		return cmdline.Usagef("--pe-only %q: want breakpad or mozilla", f)
	}
	skipped := &cmdline.Skipped{Prog: "dump_syms", W: stderr, Verbose: c.Bool("v")}
	opts.Warn = skipped.Warn // losses are said without -v too
	if isTerminal(stderr) {
		opts.Progress = func(stage string) {
			fmt.Fprintf(stderr, "\rdump_syms: %s...\033[K", stage)
		}
		defer fmt.Fprint(stderr, "\r\033[K")
	}
	if len(opts.DebugDirs) == 0 {
		dir, cleanup, err := remote.DebugDir(args[0], c.String("symbols-cache"), remote.DebuginfodURLs(), stderr, opts.Warn)
		if err != nil {
			return err
		}
		if dir != "" {
			defer cleanup()
			opts.DebugDirs = []string{dir}
		}
	}
	opts.Damage = &dumpsyms.Damage{}
	wopts.Options = opts
	syms, err := dumpWindows(c, args[0], wopts, stderr)
	for _, l := range opts.Damage.Lines() {
		fmt.Fprintf(stderr, "dump_syms: warning: %s\n", l)
	}
	if err != nil {
		return err
	}
	if c.Bool("strict") && opts.Damage.Len() > 0 {
		return fmt.Errorf("--strict: %w", opts.Damage.Err())
	}
	if id := c.String("b"); id != "" {
		syms.Module.ID = id
	}
	if !syms.HeaderOnly && syms.NumFuncs() == 0 && !skipped.Lost() {
		skipped.Warn("%s: no FUNC records (%d PUBLIC): no debugging information was found (-v says where it was looked for)", args[0], syms.NumPublics())
	}
	if store, p := c.String("store"), c.String("output"); store != "" || p != "" {
		if store != "" && p != "" {
			return cmdline.Usagef("--store and --output: give one")
		} else if store != "" {
			// Windows stores name the file after the PDB without its
			// extension: DIR/app.pdb/ID/app.sym.
			elems, err := symstore.BreakpadPath(syms.Module.Name, syms.Module.ID, ".sym")
			if err != nil {
				return fmt.Errorf("--store: %w", err)
			}
			p = filepath.Join(store, filepath.Join(elems...))
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := syms.Write(f); err != nil {
			return fmt.Errorf("writing %s: %w", f.Name(), err)
		}
		return f.Close()
	}
	if err := syms.Write(stdout); err != nil {
		return fmt.Errorf("writing symbols: %w", err)
	}
	return nil
}

// dump reads the symbols of the file at path (formats.DumpNative).
func dump(c *cli.Command, path string, opts dspe.Options) (*dumpsyms.Model, error) {
	return formats.DumpNative(path, formats.DumpOptions{PE: opts, MachO: dsmacho.Options{Options: opts.Options,
		Arch: c.String("a"), DSYM: c.String("g"), Exact: opts.CFIStyle == unwindinfo.StyleExact}})
}

// symbolPath returns the symbol path dump_syms uses: --symbol-server, else
// $HOME/.dump_syms/config (Mozilla's dump_syms), else $_NT_SYMBOL_PATH
// (Microsoft's tools).
func symbolPath(flag string) []remote.PathElem {
	if flag != "" {
		return remote.ParseSymbolPath(flag)
	}
	if h, err := os.UserHomeDir(); err == nil {
		if b, err := os.ReadFile(filepath.Join(h, ".dump_syms", "config")); err == nil {
			if p := remote.ParseSymbolPath(string(b)); len(p) > 0 {
				return p
			}
		}
	}
	return remote.ParseSymbolPath(os.Getenv("_NT_SYMBOL_PATH"))
}

// dumpWindows dumps the file named on the command line (orig): fetched
// first from the symbol path with --debug-id (a PDB's debug identifier) or
// --code-id (a PE's code identifier), extracted when it is a cabinet, then
// read by its magic. The PDB of a PE is looked for beside the PE, at the
// path its CodeView record names, as a cabinet beside the PE, then in the
// symbol path (remote.WinFiles.FindPDB); the PE of a PDB beside the PDB,
// plain or as a cabinet (pdbsyms.Inputs.DumpPDB).
func dumpWindows(c *cli.Command, orig string, opts dspe.Options, stderr io.Writer) (*dumpsyms.Model, error) {
	in := &pdbsyms.Inputs{MaxRatio: int64(c.Int("max-inflate-ratio")), Warn: opts.Warn, MakeTemp: tempdir.Make, RemoveTemp: tempdir.Remove}
	defer in.Close()
	// Misses are not remembered: a PDB uploaded after a failed run is
	// found by the next one.
	w := &remote.WinFiles{Path: symbolPath(c.String("symbol-server")), CacheDir: c.String("symbols-cache"), MissTTL: -1,
		UserAgent: remote.SymSrvUserAgent, Progress: stderr, Inputs: in}
	path, id, code := orig, c.String("debug-id"), false
	if cid := c.String("code-id"); cid != "" {
		if id != "" {
			return nil, cmdline.Usagef("--debug-id and --code-id: give one")
		}
		id, code = cid, true
	}
	if id != "" {
		p, err := w.FetchByID(orig, id, code)
		if err != nil {
			return nil, err
		}
		path = p
	}
	u, err := in.Unpack(path)
	if err != nil {
		return nil, err
	}
	opts.FindPDB = w.FindPDB(filepath.Dir(orig))
	if !pdbsyms.IsPDB(u) {
		return dump(c, u, opts)
	}
	return in.DumpPDB(orig, u, opts)
}
