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
	if got := run([]string{"minidump_dump"}); got != 1 {
		t.Errorf("no arguments: status %d, want 1", got)
	}
}

// TestStatus checks that a dump lacking streams Breakpad requires is
// printed and fails (the output itself is tested in minidump/dumptext).
func TestStatus(t *testing.T) {
	b := synth.New(arch.AMD64, minidump.PlatformLinux)
	b.AddThread(7, synth.AMD64(&amd64.Context{ContextFlags: amd64.ContextFull}), nil)
	data, err := b.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "x.dmp")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, ok := dumpPath(t, p, false)
	if ok {
		t.Error("dump without misc info and memory info list succeeded; Breakpad exits 1")
	}
	if !strings.Contains(out, "  thread_id                   = 0x7\n") {
		t.Errorf("thread not printed:\n%s", out)
	}
}
