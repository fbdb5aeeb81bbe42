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
// Exit status: 0 when every dump is unchanged (or after --update, or
// without --golden), 1 when any is changed, new or missing, 2 when crashdiff
// could not run (bad arguments, no dumps, unreadable golden files). Symbols may also come from servers (docs/symbols.md):
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
	"github.com/gobreakpad/gobreakpad/cmd/internal/cmdline"
	"github.com/gobreakpad/gobreakpad/symbols/symsrc"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v3"
)

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400) // as minidump_stackwalk: symbol indexes grow in steps
	}
	cmd := newCommand(os.Stdout, os.Stderr)
	// crashdiff's own statuses (1: differences, 2: could not run) pass
	// through cmdline.Run, which adds --version and the usage-error line.
	action := cmd.Action
	cmd.Action = func(ctx context.Context, c *cli.Command) error {
		if err := action(ctx, c); err != nil {
			return cmdline.ExitStatus(exitCode(err, os.Stderr))
		}
		return nil
	}
	os.Exit(cmdline.Run(context.Background(), cmd, os.Args, os.Stdout, os.Stderr))
}

// exitStatus is an error carrying crashdiff's exit status.
type exitStatus struct {
	code int
	err  error // nil: nothing more to print
}

func (e *exitStatus) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitStatus) Unwrap() error { return e.err }

// exitCode prints err (when there is something to say) and returns the
// process's exit status: 2 for errors without a status of their own.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var st *exitStatus
	if errors.As(err, &st) {
		if st.err != nil {
			fmt.Fprintf(stderr, "crashdiff: %v\n", st.err)
		}
		return st.code
	}
	fmt.Fprintf(stderr, "crashdiff: %v\n", err)
	return 2
}

// couldNotRun wraps an error as exit status 2.
func couldNotRun(format string, args ...any) error {
	return &exitStatus{code: 2, err: fmt.Errorf(format, args...)}
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
			return run(ctx, stdout, stderr, cfg)
		},
	}
}
