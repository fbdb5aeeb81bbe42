package remote

import (
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/symtest"
	"os"
)

// TestDebuginfodSplit serves a stripped program and its separate debug file
// (Debian's .build-id layout) from debuginfod: the symbols made from its
// /executable and /debuginfo answer as those of the unstripped build.
func TestDebuginfodSplit(t *testing.T) {
	dir := corpus.File(t, "elf/x64-dw4")
	buildID := symtest.BuildID(t, filepath.Join(dir, "buildid/deep_chain"))
	url := cmdtest.Debuginfod(t, filepath.Join(dir, "buildid"), buildID)

	c := newClient(t)
	src := NewDebuginfod(url, c)
	defer src.Close()
	m := symbols.Module{CodeFile: "/usr/bin/deep_chain", CodeID: buildID, DebugFile: "deep_chain", DebugID: "whatever"}
	got, err := src.Load(m)
	if err != nil {
		t.Fatal(err)
	}
	if symtest.Same(t, got, symtest.ELF(t, filepath.Join(dir, "full/deep_chain")), 0x3000) == 0 {
		t.Fatal("no address with a line: nothing compared")
	}
	// A second source over the same cache converts nothing and asks nothing.
	c2 := &Client{Cache: c.Cache}
	src2 := NewDebuginfod(url, c2)
	defer src2.Close()
	if _, err := src2.Load(m); err != nil || c2.Requests() != 0 {
		t.Errorf("second load: %v, %d requests", err, c2.Requests())
	}
	onlyCache(t, c)
}

// TestDebugDir fetches a stripped program's debug file from debuginfod into
// a debug directory (.build-id/xx/rest.debug), and fetches nothing for a
// program with DWARF, a file that is not ELF, or without servers.
func TestDebugDir(t *testing.T) {
	dir := corpus.File(t, "elf/x64-dw4")
	stripped := filepath.Join(dir, "stripped/deep_chain")
	buildID := symtest.BuildID(t, stripped)
	warn := func(format string, args ...any) { t.Logf(format, args...) }
	for _, p := range []string{filepath.Join(dir, "full/deep_chain"), filepath.Join(dir, "README.md"), stripped} {
		urls := []string{"http://127.0.0.1:1"}
		if p == stripped {
			urls = nil
		}
		if d, _, err := DebugDir(p, t.TempDir(), urls, nil, warn); d != "" || err != nil {
			t.Errorf("%s: %q, %v; want nothing fetched", p, d, err)
		}
	}
	url := cmdtest.Debuginfod(t, filepath.Join(dir, "buildid"), buildID)
	d, cleanup, err := DebugDir(stripped, t.TempDir(), []string{url}, nil, warn)
	if err != nil || d == "" {
		t.Fatalf("DebugDir: %q, %v", d, err)
	}
	link := filepath.Join(d, ".build-id", buildID[:2], buildID[2:]+".debug")
	if st, err := os.Stat(link); err != nil || !st.Mode().IsRegular() {
		t.Errorf("%s: %v", link, err)
	}
	cleanup()
	if _, err := os.Stat(d); !os.IsNotExist(err) {
		t.Errorf("cleanup left %s", d)
	}
}
