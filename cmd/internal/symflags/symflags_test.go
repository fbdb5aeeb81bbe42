package symflags

import (
	"context"
	"io"
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
		got, verbose = CommandConfig(c, c.Args().Slice(), io.Discard), c.Bool("verbose")
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
