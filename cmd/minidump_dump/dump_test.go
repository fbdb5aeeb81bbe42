package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
)

// dumpPath runs dumpFile on a file and returns its output and status.
func dumpPath(t *testing.T, path string, hexdump bool) (string, bool) {
	t.Helper()
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	ok := dumpFile(w, devnull, path, hexdump)
	w.Flush()
	return out.String(), ok
}

func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"empty":     nil,
		"not-mdmp":  []byte("ELF\x7fxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
		"truncated": []byte("MDMP\x93\xa7\x00\x00\x05\x00\x00\x00\x20\x00\x00\x00"),
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, data, 0o644)
		out, ok := dumpPath(t, p, false)
		if ok || out != "" {
			t.Errorf("%s: ok=%v output %q; want failure and no output", name, ok, out)
		}
	}
	if _, ok := dumpPath(t, filepath.Join(dir, "missing"), false); ok {
		t.Error("missing file succeeded")
	}
}

func TestRunUsage(t *testing.T) {
	if got := run([]string{"minidump_dump"}); got != 2 {
		t.Errorf("no arguments: status %d, want 2", got)
	}
}

// writeSynth writes a synthetic Linux dump with threads of the given ids
// (no misc info or memory info list) and returns its path.
func writeSynth(t *testing.T, ids ...uint32) string {
	t.Helper()
	b := synth.New(arch.AMD64, minidump.PlatformLinux)
	for _, id := range ids {
		b.AddThread(id, synth.AMD64(&amd64.Context{ContextFlags: amd64.ContextFull}), nil)
	}
	p := filepath.Join(t.TempDir(), "x.dmp")
	if err := b.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMain(m *testing.M) { cmdtest.Main(m) }

// TestStatus runs the built program: a sound dump lacking streams Breakpad
// requires is printed and exits 0 (Breakpad exits 1), with a note per
// missing stream; a damaged stream exits 1; usage errors exit 2.
func TestStatus(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	r := cmdtest.Run(t, prog, writeSynth(t, 7))
	if r.Code != 0 || !strings.Contains(r.Stdout, "  thread_id                   = 0x7\n") ||
		r.Stderr != "minidump_dump: note: misc info: stream not present\nminidump_dump: note: MD_MEMORY_INFO_LIST_STREAM: stream not present\n" {
		t.Errorf("missing streams: exit %d, stderr %q, stdout:\n%.300s", r.Code, r.Stderr, r.Stdout)
	}
	r = cmdtest.Run(t, prog, writeSynth(t, 7, 7))
	if r.Code != 1 || !strings.Contains(r.Stderr, "thread") || strings.Contains(r.Stdout, "thread_id") {
		t.Errorf("repeated thread id: exit %d, stderr %q", r.Code, r.Stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "minidump_dump: missing minidump file (see --help)\n"},
		{[]string{"a", "b"}, "minidump_dump: one minidump file at a time (2 given) (see --help)\n"},
		{[]string{"-q", "a"}, "minidump_dump: flag provided but not defined: -q (see --help)\n"},
	} {
		if r := cmdtest.Run(t, prog, c.args...); r.Code != 2 || r.Stdout != "" || r.Stderr != c.want {
			t.Errorf("%q: %+v, want exit 2 and %q", c.args, r, c.want)
		}
	}
	if r := cmdtest.Run(t, prog, "--version"); r.Code != 0 || !strings.HasPrefix(r.Stdout, "minidump_dump ") {
		t.Errorf("--version: %+v", r)
	}
}
