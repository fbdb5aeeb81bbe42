// Package symflags holds the symbol flags of the programs that walk stacks
// and turns a command line with them into a [symsrc.Config].
package symflags

import (
	"io"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/gobreakpad/gobreakpad/symbols/symsrc"
)

// Flags returns the symbol flags of the programs that walk stacks:
// --symbols-url, --symbols-cache, --symbols-timeout, --symbols-walk-timeout,
// --prefetch and -v (--verbose, for [symsrc.Sources.Summary]). [CommandConfig] reads them.
func Flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "symbols-url", Usage: "a Breakpad-layout symbol server `URL` (URL/NAME/ID/NAME.sym; repeatable)"},
		&cli.StringFlag{Name: "symbols-cache", Usage: "keep downloaded symbols in `DIR` (default: the user cache directory's gobreakpad); given, also keeps fast-loading SymCache and unwind-index copies of big local .sym files there"},
		&cli.DurationFlag{Name: "symbols-timeout", Value: 30 * time.Second, Usage: "give up a symbol download after `DURATION`"},
		&cli.DurationFlag{Name: "symbols-walk-timeout", Usage: "no symbol download after `DURATION` from the start (0: no limit)"},
		&cli.IntFlag{Name: "prefetch", Value: symsrc.DefaultPrefetch, Usage: "with a symbol server, load `N` modules' symbols at once ahead of the walk (0: each when the walk reaches it)"},
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "say on stderr where each module's symbols came from"},
	}
}

// CommandConfig returns the [symsrc.Config] of a command line with [Flags]: the
// symbol path arguments paths, the flags and the environment ([symsrc.Config.FromEnv]).
// Progress lines about slow downloads go to progress.
func CommandConfig(cmd *cli.Command, paths []string, progress io.Writer) symsrc.Config {
	cfg := symsrc.Config{Paths: paths, URLs: cmd.StringSlice("symbols-url"), CacheDir: cmd.String("symbols-cache"),
		RequestTimeout: cmd.Duration("symbols-timeout"), WalkTimeout: cmd.Duration("symbols-walk-timeout"), Progress: progress,
		Prefetch: int(cmd.Int("prefetch"))}
	cfg.FromEnv()
	return cfg
}
