// Command dump_syms writes the Breakpad symbol file of a Linux ELF binary,
// a drop-in for Breakpad's Linux dump_syms, or of a Windows PDB (or a PE,
// .exe or .dll, with its PDB), as Breakpad's and Mozilla's Windows
// dump_syms write it:
//
//	dump_syms [-i] [-c] [-d] [-m] [-v] [-a] [-n NAME] [-o OS] [--store DIR] [--symbols-cache DIR]
//	          [--cfi-style symbolic|mozilla|breakpad|mozilla-pe|exact] [--pe-only breakpad|mozilla]
//	          [--check-cfi] [--extra-info LINE] [-j N] BINARY [DEBUG_DIR | BINARY ...]
//
// The .sym text goes to stdout, or with --store into DIR/NAME/ID/NAME.sym,
// the layout symbol stores and minidump_stackwalk use. As Mozilla's
// dump_syms, several binaries (the arguments after the first that are
// files) are dumped -j N at a time, each into --store, or one after
// another to stdout. DEBUG_DIR names
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
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

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
	"github.com/gobreakpad/gobreakpad/symfile"
	"github.com/gobreakpad/gobreakpad/symstore"
)

func main() {
	// The symbol data is built once and written out: collecting more often
	// than the default keeps the peak memory lower for about the same CPU
	// time: 50 kept it ~15% lower on a 33 MB Go binary; 35 takes Debian's
	// libc with its debug file from 35.4 to 33.5 MiB (medians of 9), under
	// Breakpad's 35.4, for more collections (docs/dump_syms.md). GOGC
	// still overrides this.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(35)
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
			&cli.BoolFlag{Name: "a", Usage: "-a: keep the load address (Breakpad's Linux -a: addresses as in the ELF file, not relative to its first PT_LOAD segment); -a ARCH (an architecture name, then BINARY): Mach-O's, as --arch"},
			&cli.StringFlag{Name: "arch", Usage: "Mach-O: the architecture `ARCH` of a universal file (Mozilla's --arch, as -a ARCH)"},
			&cli.BoolFlag{Name: "check-cfi", Usage: "fail (exit 1, nothing written) when there is no CFI data: no STACK CFI or STACK WIN record (Mozilla's --check-cfi)"},
			&cli.StringSliceFlag{Name: "extra-info", Usage: "write `LINE` (KEYWORD VALUE) as an INFO record after MODULE and INFO CODE_ID (Mozilla's --extra-info; repeatable)"},
			&cli.IntFlag{Name: "j", Value: runtime.GOMAXPROCS(0), Usage: "dump up to `N` binaries at once when several are given (Mozilla's -j)"},
			&cli.StringFlag{Name: "g", Usage: "Mach-O: read DWARF from the dSYM bundle (or the file in it) `DSYM`"},
			&cli.BoolFlag{Name: "list-arch", Usage: "Mach-O: list the architectures of BINARY (as Mozilla's dump_syms) and exit"},
			&cli.StringFlag{Name: "n", Usage: "module `NAME` instead of the binary's file name"},
			&cli.StringFlag{Name: "b", Usage: "module identifier `ID` in the MODULE record instead of the binary's (Breakpad's -b)"},
			&cli.BoolFlag{Name: "r", Usage: "accepted for Breakpad's command line (its readers' inter-unit references; ours always follow them)"},
			&cli.StringFlag{Name: "o", Usage: "operating system `OS` in the MODULE record (Linux, Android, windows, mac, ...: not a file name; that is --output)", Value: "Linux"},
			&cli.IntFlag{Name: "max-inflate-ratio", Usage: "skip a compressed section declaring more than `N` times its compressed size (at least 64 MiB)", Value: dself.DefaultInflateRatio},
			&cli.StringFlag{Name: "store", Usage: "write into symbol store `DIR` as NAME/ID/NAME.sym instead of stdout"},
			&cli.StringFlag{Name: "output", Usage: "write into `FILE` instead of stdout (Mozilla's --output; -o stays Breakpad's OS)"},
			&cli.BoolFlag{Name: "no-generator", Usage: "accepted for Mozilla's command line: no INFO GENERATOR record is ever written"},
			&cli.StringFlag{Name: "symbols-cache", Usage: "keep debug files fetched from $DEBUGINFOD_URLS in `DIR` (default: the user cache directory's gobreakpad)"},
			&cli.StringFlag{Name: "cfi-style", Usage: "x64 Windows STACK CFI from a PE's .pdata in `STYLE`: symbolic (Mozilla's dump_syms today), mozilla (its older references: negative offsets clamped), breakpad, mozilla-pe, exact (ours: the rules at every instruction, prologs and epilogs included; also for Mach-O x86_64, i386 and arm64 compact unwind)", Value: "symbolic"},
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
	// -a is Breakpad's Linux -a (keep the load address, no value) unless
	// an architecture name follows it and a binary after that: then it is
	// Breakpad's Mac (and Mozilla's) -a ARCH (docs/dump_syms.md).
	arch, preserve := c.String("arch"), false
	if c.Bool("a") {
		if len(args) >= 2 && dsmacho.IsArchName(args[0]) {
			if arch != "" && arch != args[0] {
				return cmdline.Usagef("-a %s and --arch %s: give one", args[0], arch)
			}
			arch, args = args[0], args[1:]
		} else {
			preserve = true
		}
	}
	if len(args) < 1 {
		return cmdline.Usagef("missing binary")
	} else if c.Bool("list-arch") {
		return dsmacho.ListArch(args[0], stdout)
	}
	// Mozilla's several files: the extra arguments that are files are
	// more binaries to dump; Breakpad's DEBUG_DIR arguments are directories.
	inputs, dirs := args[:1], []string(nil)
	for _, p := range args[1:] {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			inputs = append(inputs, p)
		} else {
			dirs = append(dirs, p)
		}
	}
	for _, w := range cmdline.CheckDirs("debug directory", dirs) {
		fmt.Fprintf(stderr, "dump_syms: warning: %s; dumping without it\n", w)
	}
	if c.Bool("check-cfi") && (c.Bool("c") || c.Bool("i")) {
		return cmdline.Usagef("--check-cfi and -c or -i conflict (no CFI is written)")
	}
	var infos []symfile.Info
	for _, l := range c.StringSlice("extra-info") {
		k, v, _ := strings.Cut(l, " ")
		if !extraInfo.MatchString(l) {
			return cmdline.Usagef("--extra-info %q: want KEYWORD VALUE, the keyword of capitals and underscores (INFO KEYWORD VALUE is written)", l)
		}
		infos = append(infos, symfile.Info{Key: k, Value: v})
	}
	if err := checkOS(c.String("o")); err != nil {
		return err
	}
	store, output := c.String("store"), c.String("output")
	if store != "" && output != "" {
		return cmdline.Usagef("--store and --output: give one")
	}
	jobs := c.Int("j")
	if jobs < 1 {
		return cmdline.Usagef("-j %d: at least 1", jobs)
	}
	if len(inputs) > 1 && (c.String("debug-id") != "" || c.String("code-id") != "" || c.String("b") != "" || c.String("n") != "") {
		return cmdline.Usagef("several binaries (%d) with --debug-id, --code-id, -b or -n, which name one", len(inputs))
	}
	opts := dumpsyms.Options{
		HeaderOnly:      c.Bool("i"),
		NoCFI:           c.Bool("c"),
		Inlines:         c.Bool("d"),
		Multiple:        c.Bool("m"),
		Name:            c.String("n"),
		OS:              c.String("o"),
		DebugDirs:       dirs,
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
	if isTerminal(stderr) && len(inputs) == 1 {
		opts.Progress = func(stage string) {
			fmt.Fprintf(stderr, "\rdump_syms: %s...\033[K", stage)
		}
		defer fmt.Fprint(stderr, "\r\033[K")
	}
	wopts.Options = opts
	d := &dumper{c: c, opts: wopts, arch: arch, preserve: preserve, infos: infos, skipped: skipped, stderr: stderr}
	if len(inputs) == 1 {
		syms, err := d.dump(inputs[0])
		if err != nil {
			return err
		}
		return write(syms, store, output, stdout)
	}
	// Several binaries: dumped -j at a time, written into --store as each
	// ends, or to --output or stdout in the order given.
	models := make([]*dumpsyms.Model, len(inputs))
	errs := make([]error, len(inputs))
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for i, in := range inputs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			m, err := d.dump(in)
			if err == nil && store != "" {
				err = write(m, store, "", nil)
				m = nil // written: its memory can go
			}
			models[i], errs[i] = m, err
		}()
	}
	wg.Wait()
	failed := 0
	for i, err := range errs {
		if err != nil {
			failed++
			fmt.Fprintf(stderr, "dump_syms: %s: %v\n", inputs[i], err)
		}
	}
	if store == "" {
		var w io.Writer = stdout
		if output != "" {
			if err := os.MkdirAll(filepath.Dir(output), 0o755); err != nil {
				return err
			}
			f, err := os.Create(output)
			if err != nil {
				return err
			}
			defer f.Close()
			w = f
		}
		for _, m := range models {
			if m == nil {
				continue
			}
			if err := m.Write(w); err != nil {
				return fmt.Errorf("writing symbols: %w", err)
			}
		}
		if f, ok := w.(*os.File); ok && f != stdout {
			if err := f.Close(); err != nil {
				return err
			}
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d binaries not dumped", failed, len(inputs))
	}
	return nil
}

// extraInfo is what --extra-info takes, as Mozilla's dump_syms checks it.
var extraInfo = regexp.MustCompile(`^[A-Z_]+ .*`)

// dumper dumps one binary with the command line's options.
type dumper struct {
	c        *cli.Command
	opts     dspe.Options
	arch     string
	preserve bool
	infos    []symfile.Info
	skipped  *cmdline.Skipped
	stderr   *os.File
}

// dump reads the symbols of path, with its damage said on stderr and the
// command line's changes (-a, -b, --extra-info) made.
func (d *dumper) dump(path string) (*dumpsyms.Model, error) {
	c, opts := d.c, d.opts
	if len(opts.DebugDirs) == 0 {
		dir, cleanup, err := remote.DebugDir(path, c.String("symbols-cache"), remote.DebuginfodURLs(), d.stderr, opts.Warn)
		if err != nil {
			return nil, err
		}
		if dir != "" {
			defer cleanup()
			opts.DebugDirs = []string{dir}
		}
	}
	opts.Damage = &dumpsyms.Damage{}
	syms, err := dumpWindows(c, path, d.arch, opts, d.stderr)
	for _, l := range opts.Damage.Lines() {
		fmt.Fprintf(d.stderr, "dump_syms: warning: %s\n", l)
	}
	if err != nil {
		return nil, err
	}
	if c.Bool("strict") && opts.Damage.Len() > 0 {
		return nil, fmt.Errorf("--strict: %w", opts.Damage.Err())
	}
	if id := c.String("b"); id != "" {
		syms.Module.ID = id
	}
	if !syms.HeaderOnly && syms.NumFuncs() == 0 && !d.skipped.Lost() {
		d.skipped.Warn("%s: no FUNC records (%d PUBLIC): no debugging information was found (-v says where it was looked for)", path, syms.NumPublics())
	}
	if c.Bool("check-cfi") && len(syms.CFI) == 0 && len(syms.Wins) == 0 {
		return nil, fmt.Errorf("%s: no CFI data (--check-cfi): no STACK CFI or STACK WIN record", path)
	}
	if d.preserve && syms.LoadAddress != 0 {
		if err := syms.Rebase(syms.LoadAddress); err != nil {
			return nil, fmt.Errorf("-a: %w", err)
		}
	}
	syms.Infos = append(syms.Infos, d.infos...)
	return syms, nil
}

// write writes syms into the symbol store store (DIR/NAME/ID/NAME.sym), or
// the file output, or else stdout.
func write(syms *dumpsyms.Model, store, output string, stdout io.Writer) error {
	p := output
	if store != "" {
		// Windows stores name the file after the PDB without its
		// extension: DIR/app.pdb/ID/app.sym.
		elems, err := symstore.BreakpadPath(syms.Module.Name, syms.Module.ID, ".sym")
		if err != nil {
			return fmt.Errorf("--store: %w", err)
		}
		p = filepath.Join(store, filepath.Join(elems...))
	}
	if p == "" {
		if err := syms.Write(stdout); err != nil {
			return fmt.Errorf("writing symbols: %w", err)
		}
		return nil
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

// dump reads the symbols of the file at path (formats.DumpNative).
func dump(path, arch, dsym string, opts dspe.Options) (*dumpsyms.Model, error) {
	return formats.DumpNative(path, formats.DumpOptions{PE: opts, MachO: dsmacho.Options{Options: opts.Options,
		Arch: arch, DSYM: dsym, Exact: opts.CFIStyle == unwindinfo.StyleExact}})
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
func dumpWindows(c *cli.Command, orig, arch string, opts dspe.Options, stderr io.Writer) (*dumpsyms.Model, error) {
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
		return dump(u, arch, c.String("g"), opts)
	}
	return in.DumpPDB(orig, u, opts)
}

// knownOS are the operating systems -o may name (compared without case):
// those Breakpad's and Mozilla's dump_syms write in MODULE records and the
// platforms of minidumps.
var knownOS = []string{"Linux", "Android", "ChromeOS", "Fuchsia", "windows", "mac", "iOS", "Solaris", "illumos", "FreeBSD", "NetBSD", "OpenBSD", "DragonFly", "Haiku", "QNX", "AIX", "NaCl", "PS3"}

// checkOS refuses an -o that names no known operating system: the habit
// of Mozilla's dump_syms, whose -o is the output file, made "MODULE out.sym
// ..." records on stdout.
func checkOS(osName string) error {
	for _, k := range knownOS {
		if strings.EqualFold(osName, k) {
			return nil
		}
	}
	if strings.ContainsAny(osName, `/\.`) {
		return cmdline.Usagef("-o %q looks like a file: -o is the operating system of the MODULE record (%s); to write into a file, --output %s", osName, strings.Join(knownOS, ", "), osName)
	}
	return cmdline.Usagef("-o %q: not an operating system (%s); to write into a file, --output FILE", osName, strings.Join(knownOS, ", "))
}
