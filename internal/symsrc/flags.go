package symsrc

import (
	"io"
	"time"

	"github.com/urfave/cli/v3"
)

// DefaultPrefetch is --prefetch's default: how many modules' symbols are
// loaded at once ahead of a walk with a symbol server.
const DefaultPrefetch = 8

// Flags returns the symbol flags of the programs that walk stacks:
// --symbols-url, --symbols-cache, --symbols-timeout, --symbols-walk-timeout,
// --prefetch and -v (--verbose, for [Sources.Summary]). [CommandConfig] reads them.
func Flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "symbols-url", Usage: "a Breakpad-layout symbol server `URL` (URL/NAME/ID/NAME.sym; repeatable)"},
		&cli.StringFlag{Name: "symbols-cache", Usage: "keep downloaded symbols in `DIR` (default: the user cache directory's gobreakpad); given, also keeps fast-loading SymCache and unwind-index copies of big local .sym files there"},
		&cli.DurationFlag{Name: "symbols-timeout", Value: 30 * time.Second, Usage: "give up a symbol download after `DURATION`"},
		&cli.DurationFlag{Name: "symbols-walk-timeout", Usage: "no symbol download after `DURATION` from the start (0: no limit)"},
		&cli.IntFlag{Name: "prefetch", Value: DefaultPrefetch, Usage: "with a symbol server, load `N` modules' symbols at once ahead of the walk (0: each when the walk reaches it)"},
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "say on stderr where each module's symbols came from"},
	}
}

// CommandConfig returns the Config of a command line with [Flags]: the
// symbol path arguments paths, the flags and the environment ([Config.FromEnv]).
// Progress lines about slow downloads go to progress.
func CommandConfig(cmd *cli.Command, paths []string, progress io.Writer) Config {
	cfg := Config{Paths: paths, URLs: cmd.StringSlice("symbols-url"), CacheDir: cmd.String("symbols-cache"),
		RequestTimeout: cmd.Duration("symbols-timeout"), WalkTimeout: cmd.Duration("symbols-walk-timeout"), Progress: progress,
		Prefetch: int(cmd.Int("prefetch"))}
	cfg.FromEnv()
	return cfg
}

// None reports whether c names no source at all: no symbol paths, URLs,
// $_NT_SYMBOL_PATH or debuginfod servers.
func (c *Config) None() bool {
	return len(c.Paths) == 0 && len(c.URLs) == 0 && c.NTSymbolPath == "" && len(c.DebuginfodURLs) == 0
}
