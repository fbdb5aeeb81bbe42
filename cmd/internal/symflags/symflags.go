// Package symflags holds the symbol flags of the programs that walk stacks
// and turns a command line with them into a [symsrc.Config].
package symflags

import (
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/gobreakpad/gobreakpad/symbols/symsrc"
)

// Flags returns the symbol flags of the programs that walk stacks:
// --symbols-url, --symbols-cache, --symbols-timeout, --symbols-walk-timeout,
// --prefetch, -v (--verbose, for [symsrc.Sources.Summary]) and
// rust-minidump's --symbols-path, --symbols-tmp and
// --symbols-download-timeout-secs. [CommandConfig] reads them.
func Flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "symbols-url", Usage: "a Breakpad-layout symbol server `URL` (URL/NAME/ID/NAME.sym; repeatable)"},
		&cli.StringFlag{Name: "symbols-cache", Usage: "keep downloaded symbols in `DIR` (default: the user cache directory's gobreakpad); given, also keeps fast-loading SymCache and unwind-index copies of big local .sym files there"},
		&cli.StringFlag{Name: "symbols-tmp", Usage: "write downloads in `DIR` before moving them into the cache (rust-minidump's; best on the cache's file system)"},
		&cli.StringSliceFlag{Name: "symbols-path", Usage: "a symbol `PATH`, as a SYMBOL_PATH argument (rust-minidump's; repeatable)"},
		&cli.DurationFlag{Name: "symbols-timeout", Value: 30 * time.Second, Usage: "give up a symbol download after `DURATION`"},
		&cli.IntFlag{Name: "symbols-download-timeout-secs", Usage: "give up a symbol download after `N` seconds (rust-minidump's form of --symbols-timeout)", Validator: func(n int) error {
			if n < 1 {
				return fmt.Errorf("--symbols-download-timeout-secs %d: at least 1", n)
			}
			return nil
		}},
		&cli.DurationFlag{Name: "symbols-walk-timeout", Usage: "no symbol download after `DURATION` from the start (0: no limit)"},
		&cli.IntFlag{Name: "prefetch", Value: symsrc.DefaultPrefetch, Usage: "with a symbol server, load `N` modules' symbols at once ahead of the walk (0: each when the walk reaches it)", Validator: func(n int) error {
			if n < 0 {
				return fmt.Errorf("--prefetch %d: at least 0", n)
			}
			return nil
		}},
		&LevelFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "-v: say on stderr where each module's symbols came from; --verbose=LEVEL: rust-minidump's log level (off, error, warn: no summary; info, debug, trace: the summary)"},
	}
}

// Levels are the values of --verbose=LEVEL, rust-minidump's log levels.
var Levels = []string{"off", "error", "warn", "info", "debug", "trace"}

// level is --verbose's value: true for -v alone (info), or a level.
type level struct{ dest *string }

func (l *level) Set(s string) error {
	switch s {
	case "true":
		s = "info"
	case "false":
		s = "error"
	}
	if !slices.Contains(Levels, s) {
		return fmt.Errorf("unknown level %q (one of %v)", s, Levels)
	}
	*l.dest = s
	return nil
}

func (l *level) Get() any { return *l.dest }

func (l *level) String() string {
	if l.dest == nil {
		return ""
	}
	return *l.dest
}

// IsBoolFlag makes -v need no value; --verbose=LEVEL still gives one.
func (l *level) IsBoolFlag() bool { return true }

type levelCreator struct{}

func (levelCreator) Create(v string, p *string, _ cli.NoConfig) cli.Value {
	*p = v
	return &level{p}
}

func (levelCreator) ToString(v string) string { return v }

// LevelFlag is --verbose: a flag that -v sets alone (to "info") and
// --verbose=LEVEL sets to one of [Levels] (rust-minidump's); its value is
// "error" when not given.
type LevelFlag = cli.FlagBase[string, cli.NoConfig, levelCreator]

// Level returns --verbose's level: "error" when not given, "info" for -v.
func Level(cmd *cli.Command) string {
	if l := cmd.String("verbose"); l != "" {
		return l
	}
	return "error"
}

// LevelArg takes rust-minidump's --verbose LEVEL, its level given without
// "=": --verbose is a switch (-v, Breakpad's), so the parser leaves LEVEL
// as the first argument. When --verbose was given alone and args holds a
// level name that is not a file, followed by more arguments (the dump),
// the level is --verbose's value and the rest of args is returned.
func LevelArg(cmd *cli.Command, args []string) ([]string, error) {
	if cmd.String("verbose") != "info" || len(args) < 2 || !slices.Contains(Levels, args[0]) {
		return args, nil
	}
	if _, err := os.Stat(args[0]); err == nil {
		return args, nil // a file named like a level: the dump
	}
	if err := cmd.Set("verbose", args[0]); err != nil {
		return args, err
	}
	return args[1:], nil
}

// Verbose reports whether the -v summary was asked for: -v, or
// --verbose=info or more.
func Verbose(cmd *cli.Command) bool {
	return slices.Index(Levels, Level(cmd)) >= slices.Index(Levels, "info")
}

// CommandConfig returns the [symsrc.Config] of a command line with [Flags]: the
// symbol path arguments paths (after the --symbols-path flags), the flags and the environment ([symsrc.Config.FromEnv]).
// Progress lines about slow downloads go to progress.
func CommandConfig(cmd *cli.Command, paths []string, progress io.Writer) symsrc.Config {
	cfg := symsrc.Config{Paths: append(cmd.StringSlice("symbols-path"), paths...), URLs: cmd.StringSlice("symbols-url"), CacheDir: cmd.String("symbols-cache"),
		RequestTimeout: cmd.Duration("symbols-timeout"), WalkTimeout: cmd.Duration("symbols-walk-timeout"), Progress: progress,
		Prefetch: int(cmd.Int("prefetch")), TempDir: cmd.String("symbols-tmp")}
	if cmd.IsSet("symbols-download-timeout-secs") {
		cfg.RequestTimeout = time.Duration(cmd.Int("symbols-download-timeout-secs")) * time.Second
	}
	cfg.FromEnv()
	return cfg
}
