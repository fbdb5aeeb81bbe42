package symflags

import (
	"context"
	"io"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/gobreakpad/gobreakpad/symbols/symsrc"
)

func TestCommandConfig(t *testing.T) {
	t.Setenv("_NT_SYMBOL_PATH", "")
	t.Setenv("DEBUGINFOD_URLS", "")
	var got symsrc.Config
	var verbose bool
	cmd := &cli.Command{Name: "walk", Flags: Flags(), Action: func(ctx context.Context, c *cli.Command) error {
		got, verbose = CommandConfig(c, c.Args().Slice(), io.Discard), Verbose(c)
		return nil
	}}
	args := []string{"walk", "-v", "--symbols-url", "http://a", "--symbols-url", "http://b", "--symbols-cache", "/c", "--symbols-walk-timeout", "1m", "dir1", "dir2"}
	if err := cmd.Run(context.Background(), args); err != nil {
		t.Fatal(err)
	}
	if !verbose || !slices.Equal(got.Paths, []string{"dir1", "dir2"}) || !slices.Equal(got.URLs, []string{"http://a", "http://b"}) ||
		got.CacheDir != "/c" || got.RequestTimeout != 30*time.Second || got.WalkTimeout != time.Minute || got.None() ||
		got.Prefetch != symsrc.DefaultPrefetch {
		t.Errorf("config %+v, verbose %v", got, verbose)
	}
	if err := cmd.Run(context.Background(), []string{"walk", "--prefetch", "0"}); err != nil {
		t.Fatal(err)
	}
	if got.Prefetch != 0 {
		t.Errorf("--prefetch 0: Prefetch %d", got.Prefetch)
	}
	if !got.None() {
		t.Errorf("no paths, flags or environment: config %+v names a source", got)
	}
}

// TestRustFlags: rust-minidump's symbol flags and --verbose=LEVEL beside -v.
func TestRustFlags(t *testing.T) {
	t.Setenv("_NT_SYMBOL_PATH", "")
	t.Setenv("DEBUGINFOD_URLS", "")
	var got symsrc.Config
	var verbose bool
	var level string
	cmd := &cli.Command{Name: "walk", Flags: Flags(), Action: func(ctx context.Context, c *cli.Command) error {
		got, verbose, level = CommandConfig(c, c.Args().Slice(), io.Discard), Verbose(c), Level(c)
		return nil
	}}
	args := []string{"walk", "--symbols-path=/p1", "--symbols-path", "/p2", "--symbols-tmp=/t", "--symbols-download-timeout-secs=7", "--verbose=error", "dir1"}
	if err := cmd.Run(context.Background(), args); err != nil {
		t.Fatal(err)
	}
	if verbose || level != "error" || !slices.Equal(got.Paths, []string{"/p1", "/p2", "dir1"}) || got.TempDir != "/t" || got.RequestTimeout != 7*time.Second {
		t.Errorf("config %+v, verbose %v, level %q", got, verbose, level)
	}
	for _, c := range []struct {
		arg     string
		verbose bool
		level   string
	}{{"-v", true, "info"}, {"--verbose", true, "info"}, {"--verbose=trace", true, "trace"}, {"--verbose=warn", false, "warn"}, {"--verbose=off", false, "off"}} {
		if err := cmd.Run(context.Background(), []string{"walk", c.arg}); err != nil {
			t.Fatal(err)
		}
		if verbose != c.verbose || level != c.level {
			t.Errorf("%s: verbose %v level %q, want %v %q", c.arg, verbose, level, c.verbose, c.level)
		}
	}
	if err := cmd.Run(context.Background(), []string{"walk", "--verbose=loud"}); err == nil {
		t.Error("--verbose=loud accepted")
	}
	if err := cmd.Run(context.Background(), []string{"walk", "--prefetch", "-1"}); err == nil {
		t.Error("--prefetch -1 accepted")
	}
}

// TestLevelArg: --verbose LEVEL (no "=") takes LEVEL when a dump follows
// and no file is named LEVEL; -v alone and a level that is the last
// argument stay as they were.
func TestLevelArg(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile("warn", nil, 0o644)
	for _, c := range []struct {
		args  []string
		level string
		rest  []string
	}{
		{[]string{"--verbose", "error", "d.dmp"}, "error", []string{"d.dmp"}},
		{[]string{"--verbose", "trace", "d.dmp", "syms"}, "trace", []string{"d.dmp", "syms"}},
		{[]string{"-v", "d.dmp"}, "info", []string{"d.dmp"}},
		{[]string{"--verbose", "error"}, "info", []string{"error"}},
		{[]string{"--verbose", "warn", "syms"}, "info", []string{"warn", "syms"}}, // a file named warn
		{[]string{"--verbose=debug", "d.dmp"}, "debug", []string{"d.dmp"}},
		{[]string{"error", "d.dmp"}, "error", []string{"error", "d.dmp"}}, // no --verbose
	} {
		var level string
		var rest []string
		cmd := &cli.Command{Name: "walk", Flags: Flags(), Action: func(ctx context.Context, c *cli.Command) error {
			var err error
			rest, err = LevelArg(c, c.Args().Slice())
			level = Level(c)
			return err
		}}
		if err := cmd.Run(context.Background(), append([]string{"walk"}, c.args...)); err != nil || level != c.level || !slices.Equal(rest, c.rest) {
			t.Errorf("%q: level %q, args %q, %v; want %q, %q", c.args, level, rest, err, c.level, c.rest)
		}
	}
}
