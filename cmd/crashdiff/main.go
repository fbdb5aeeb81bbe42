// Command crashdiff walks crash dumps and groups them by crash signature,
// and keeps golden records of the walks for regression tests:
//
//	crashdiff [--golden DIR [--update]] [-s SYMBOL_PATH]... [--symbols-url URL]... [--prefetch N] [--json] [-j N] [-q] DUMP|DIR...
//
// Each DIR is searched recursively for *.dmp files. The dumps are walked in
// parallel (-j N at once, by default as many as the machine has CPUs) with
// the Breakpad symbol directories given by -s, and their signatures
// (package stackwalk/signature) counted in a summary table.
//
// With --golden DIR, each dump's record (signature, crash reason, the
// crashing thread's frames: package stackwalk/golden) is compared with its
// golden file in DIR, and each dump is reported as unchanged, changed (with
// a diff of the frames), new (no golden file) or missing (a golden file of a
// dump under the given paths that is gone). --update writes the golden files
// instead (and removes those of missing dumps). Golden files are named after
// the dump's path (relative to the working directory when inside it,
// absolute otherwise): DIR/PATH.golden, so dumps of the same name in
// different directories do not collide.
//
// Files holding a Breakpad microdump (what microdump_stackwalk walks) are
// walked as microdumps. Without --golden, a dump that cannot be walked is
// reported as failed, with the reason.
//
// Exit status: 0 when every dump is unchanged (or after --update, or
// without --golden when every dump was walked), 1 when any is changed, new
// or missing or (without --golden) failed, 2 when crashdiff could not run (bad arguments, no dumps, unreadable golden files). Symbols may also come from servers (docs/symbols.md):
// --symbols-url URL (a Breakpad-layout HTTP store; repeatable), -s
// arguments in _NT_SYMBOL_PATH syntax (srv*CACHE*URL), $_NT_SYMBOL_PATH and
// $DEBUGINFOD_URLS, kept in --symbols-cache DIR, each dump's modules loaded
// --prefetch N at once ahead of its walk (default 8); a server that is down
// leaves its modules without symbols. Progress goes to stderr: a bar on a
// terminal, a line per tenth of the dumps otherwise; -q turns it off.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gobreakpad/gobreakpad/cmd/internal/cmdline"
	"github.com/gobreakpad/gobreakpad/stackwalk/batch"
	"github.com/gobreakpad/gobreakpad/stackwalk/golden"
	"github.com/gobreakpad/gobreakpad/stackwalk/signature"
	"github.com/gobreakpad/gobreakpad/symbols/symsrc"
)

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400) // as minidump_stackwalk: symbol indexes grow in steps
	}
	os.Exit(cmdline.Run(context.Background(), newCommand(os.Stdout, os.Stderr), os.Args, os.Stdout, os.Stderr))
}

// exitCode prints err (unless it is only a status) and returns the
// process's exit status: 1 for differences, 2 for any error (crashdiff
// could not run).
func exitCode(err error, stderr io.Writer) int {
	var st cmdline.ExitStatus
	if err == nil || errors.As(err, &st) {
		return int(st)
	}
	fmt.Fprintf(stderr, "crashdiff: %v\n", err)
	return 2
}

func newCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:            "crashdiff",
		Usage:           "walk crash dumps, group them by signature, compare them with golden records",
		ArgsUsage:       "DUMP|DIR...",
		HideHelpCommand: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "golden", Usage: "compare with (or with --update write) the golden files in `DIR`"},
			&cli.BoolFlag{Name: "update", Usage: "write the golden files instead of comparing"},
			&cli.StringSliceFlag{Name: "s", Usage: "a Breakpad symbol directory (`SYMBOL_PATH`; repeatable)"},
			&cli.StringSliceFlag{Name: "symbols-url", Usage: "a Breakpad-layout symbol server `URL` (repeatable)"},
			&cli.StringFlag{Name: "symbols-cache", Usage: "keep downloaded symbols in `DIR` (default: the user cache directory's gobreakpad); given, also keeps fast-loading SymCache and unwind-index copies of big local .sym files there"},
			&cli.IntFlag{Name: "prefetch", Value: symsrc.DefaultPrefetch, Usage: "with a symbol server, load `N` modules' symbols of a dump at once ahead of its walk (0: each when the walk reaches it)"},
			&cli.StringFlag{Name: "signature-lists", Usage: "add the signature lists of `DIR` to the defaults"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
			&cli.IntFlag{Name: "j", Value: runtime.GOMAXPROCS(0), Usage: "walk up to `N` dumps at once"},
			&cli.BoolFlag{Name: "q", Usage: "no progress on stderr"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			cfg := config{
				golden:         cmd.String("golden"),
				update:         cmd.Bool("update"),
				symbolPaths:    cmd.StringSlice("s"),
				symbolURLs:     cmd.StringSlice("symbols-url"),
				symbolCache:    cmd.String("symbols-cache"),
				prefetch:       int(cmd.Int("prefetch")),
				signatureLists: cmd.String("signature-lists"),
				json:           cmd.Bool("json"),
				workers:        cmd.Int("j"),
				quiet:          cmd.Bool("q"),
				args:           cmd.Args().Slice(),
			}
			// crashdiff's own statuses (1: differences, 2: could not run)
			// pass through cmdline.Run, which adds --version and the
			// usage-error line.
			if len(cfg.args) == 0 {
				return cmdline.Usagef("no dump or directory given")
			}
			if cfg.prefetch < 0 {
				return cmdline.Usagef("--prefetch %d: at least 0", cfg.prefetch)
			}
			if err := run(ctx, stdout, stderr, cfg); err != nil {
				return cmdline.ExitStatus(exitCode(err, stderr))
			}
			return nil
		},
	}
}

// config is the command line.
type config struct {
	golden, symbolCache, signatureLists string
	symbolPaths, symbolURLs, args       []string
	update, json, quiet                 bool
	prefetch, workers                   int
}

func run(ctx context.Context, stdout, stderr io.Writer, cfg config) error {
	if len(cfg.args) == 0 {
		return errors.New("no dump or directory given")
	}
	if cfg.update && cfg.golden == "" {
		return errors.New("--update needs --golden DIR")
	}
	if cfg.golden != "" && !cfg.update {
		if st, err := os.Stat(cfg.golden); err != nil || !st.IsDir() {
			return fmt.Errorf("golden directory %s not found (write it with --update)", cfg.golden)
		}
	}
	gen, err := signature.Extended(cfg.signatureLists)
	if err != nil {
		return err
	}
	for _, p := range cfg.symbolPaths {
		if symsrc.IsRemote(p) {
			continue
		}
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			// As minidump_stackwalk: not an error (a store may be empty).
			fmt.Fprintf(stderr, "crashdiff: warning: symbol directory %s not found\n", p)
		}
	}
	dumps, roots, err := batch.Find(cfg.args)
	if err != nil {
		return err
	}
	if len(dumps) == 0 {
		return fmt.Errorf("no .dmp file in %s", strings.Join(cfg.args, " "))
	}

	opt := batch.Options{Signatures: gen, Workers: cfg.workers}
	if !cfg.quiet {
		opt.Progress = batch.NewProgress(stderr, "crashdiff", len(dumps))
	}
	scfg := symsrc.Config{Paths: cfg.symbolPaths, URLs: cfg.symbolURLs, CacheDir: cfg.symbolCache, Progress: stderr,
		Prefetch: cfg.prefetch}
	scfg.FromEnv()
	if !scfg.None() {
		src, err := symsrc.Open(scfg)
		if err != nil {
			return err
		}
		defer src.Close()
		opt.Symbols, opt.Prefetch = src, src.Prefetch()
	}
	results, err := batch.Walk(ctx, dumps, opt, func(w batch.Walked) *golden.Result {
		st := golden.Walked
		if w.Err != nil {
			st = golden.Failed
		}
		return &golden.Result{Dump: w.Dump.Key, Status: st, Record: golden.FromWalk(w)}
	})
	if err != nil {
		return err
	}

	if cfg.golden != "" {
		compare := golden.Compare
		if cfg.update {
			compare = golden.Update
		}
		missing, err := compare(cfg.golden, results, roots)
		if err != nil {
			return err
		}
		results = append(results, missing...)
	}
	rep := golden.NewReport(results)
	if cfg.json {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		return err
	}
	if rep.Differs() {
		return cmdline.ExitStatus(1)
	}
	return nil
}
