package cmdline

import (
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

func TestSkipped(t *testing.T) {
	var w strings.Builder
	s := &Skipped{Prog: "dump_syms", W: &w}
	s.Warn("%s: STACK CFI: %d rules left out: %s", "a.so", 1, "DWARF expression")
	s.Warn("%s: .gnu_debugdata: %d compressed bytes decompress to more than the limit: skipped", "a.so", 9)
	s.Warn("%s: .gnu_debugdata: %d compressed bytes decompress to more than the limit: skipped", "a.so", 9)
	s.Warn("a.dll: no PDB found: writing what the PE alone holds")
	want := "dump_syms: warning: a.so: .gnu_debugdata: 9 compressed bytes decompress to more than the limit: skipped\n" +
		"dump_syms: warning: a.dll: no PDB found: writing what the PE alone holds\n"
	if w.String() != want {
		t.Errorf("without -v:\n%s\nwant\n%s", w.String(), want)
	}
	w.Reset()
	s = &Skipped{Prog: "dump_syms", W: &w, Verbose: true}
	s.Warn("a.so: STACK CFI: 1 rules left out")
	if w.String() != "dump_syms: a.so: STACK CFI: 1 rules left out\n" {
		t.Errorf("with -v: %q", w.String())
	}
}

// TestFlagValueErrors: a flag's unparsable value is said in words, not with
// strconv's error.
func TestFlagValueErrors(t *testing.T) {
	var stdout, stderr strings.Builder
	cmd := &cli.Command{Name: "prog", Flags: []cli.Flag{&cli.IntFlag{Name: "t"}}, Action: func(context.Context, *cli.Command) error { return nil }}
	if code := Run(context.Background(), cmd, []string{"prog", "-t", "abc"}, &stdout, &stderr); code != 2 ||
		stderr.String() != "prog: invalid value \"abc\" for flag -t: not an integer (see --help)\n" {
		t.Errorf("exit %d, %q", code, stderr.String())
	}
}

// TestCheckDirsFile: a regular file given as a directory is a warning.
func TestCheckDirsFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "f")
	os.WriteFile(f, nil, 0o644)
	if w := CheckDirs("symbol path", []string{f, filepath.Dir(f)}); len(w) != 1 || w[0] != "symbol path "+f+" is a file, not a directory" {
		t.Errorf("%q", w)
	}
}

// TestVersionOf: the module version and revision Go records, or a note
// saying none was recorded, never a bare "devel".
func TestVersionOf(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}
	for _, c := range []struct {
		bi   *debug.BuildInfo
		want string
	}{
		{&debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, "v1.2.0"},
		{&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261126105600-0123456789ab+dirty"}, Settings: rev}, "v0.0.0-20261126105600-0123456789ab+dirty"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, "devel 0123456789ab+dirty"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel (no VCS revision recorded: built with -buildvcs=false or outside a git checkout)"},
	} {
		if got := versionOf(c.bi, true); got != c.want {
			t.Errorf("%+v: %q, want %q", c.bi.Main, got, c.want)
		}
	}
}
