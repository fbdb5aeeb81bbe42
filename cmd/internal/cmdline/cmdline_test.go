package cmdline_test

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// TestPrograms builds every program and checks what they share: --version
// and --help on stdout with exit 0, and a bad flag as one stderr line with
// exit 2 and nothing on stdout.
func TestPrograms(t *testing.T) {
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", dir+"/", "./cmd/...")
	build.Dir = corpus.Root()
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/...: %v\n%s", err, b)
	}
	progs, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(progs) < 8 {
		t.Fatalf("%d programs built, want at least 8", len(progs))
	}
	for _, p := range progs {
		name := filepath.Base(p)
		r := cmdtest.Run(t, p, "--version")
		if r.Code != 0 || r.Stderr != "" || !regexp.MustCompile(`^`+name+` \S.*\n$`).MatchString(r.Stdout) {
			t.Errorf("%s --version: %+v", name, r)
		}
		r = cmdtest.Run(t, p, "--help")
		if r.Code != 0 || r.Stderr != "" || !strings.Contains(r.Stdout, "USAGE:") {
			t.Errorf("%s --help: exit %d, stderr %q", name, r.Code, r.Stderr)
		}
		r = cmdtest.Run(t, p, "--no-such-flag", "x")
		if want := name + ": flag provided but not defined: -no-such-flag (see --help)\n"; r.Code != 2 || r.Stdout != "" || r.Stderr != want {
			t.Errorf("%s with a bad flag: %+v, want exit 2 and %q", name, r, want)
		}
	}
	// Subcommands report usage errors the same way: a bad flag of a
	// subcommand (urfave's own handler printed "Incorrect Usage:" and 25
	// lines of help, exit 1) and an unknown subcommand (urfave's "No help
	// topic for 'serv'").
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--port", "1"}, "crashd: flag provided but not defined: -port (see --help)\n"},
		{[]string{"token", "create", "--bogus"}, "crashd: flag provided but not defined: -bogus (see --help)\n"},
		{[]string{"serv"}, `crashd: no command "serv" (commands: serve, token, reprocess) (see --help)` + "\n"},
		{[]string{"token", "crate"}, `crashd: no command "crate" (commands: create, list, revoke) (see --help)` + "\n"},
		{nil, "crashd: no command given (commands: serve, token, reprocess) (see --help)\n"},
		{[]string{"token"}, "crashd: no command given (commands: create, list, revoke) (see --help)\n"},
	} {
		r := cmdtest.Run(t, filepath.Join(dir, "crashd"), c.args...)
		if r.Code != 2 || r.Stdout != "" || r.Stderr != c.want {
			t.Errorf("crashd %s: %+v, want exit 2 and %q", strings.Join(c.args, " "), r, c.want)
		}
	}
}
