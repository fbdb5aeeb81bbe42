package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbols"
)

const sym = "../../testdata/capture/x64-segv/symbols/crasher-x64/18BAFF1081380C82C6A55BB5BDB2732F0/crasher-x64.sym"

func runCmd(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := newCommand(strings.NewReader(stdin), &out, &errb).Run(context.Background(), append([]string{"symlookup"}, args...))
	return out.String(), err
}

func TestLookup(t *testing.T) {
	out, err := runCmd(t, "", sym, "1252", "0x12c0", "0")
	if err != nil {
		t.Fatal(err)
	}
	want := "0x1252:\n    crash_here+0x50 ././testdata/capture/crasher.c:54\n0x12c0:\n    level3+0xc ././testdata/capture/crasher.c:57\n0x0:\n    ??\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	out, err = runCmd(t, "1252\n 0\n", "--json", sym, "-")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || lines[0] != `{"address":"0x1252","frames":[{"function":"crash_here","offset":80,"file":"././testdata/capture/crasher.c","line":54}]}` ||
		lines[1] != `{"address":"0x0","frames":[]}` {
		t.Errorf("--json from stdin:\n%s", out)
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("invalid JSON line %q", l)
		}
	}
	if _, err := runCmd(t, "", sym, "xyz"); err == nil || !strings.Contains(err.Error(), "not a hex number") {
		t.Errorf("bad address: err %v", err)
	}
}

// inlined answers with two inlined calls at every address.
type inlined struct{}

func (inlined) Lookup(rel uint64, _ bool) (symbols.Symbol, bool) {
	return symbols.Symbol{Function: "outer", FunctionBase: 0x100, File: "o.c", Line: 9, Inlines: []symbols.InlineFrame{
		{Function: "inner", Base: 0x120, File: "i.h", Line: 3}, {Function: "mid", Base: 0x110, File: "m.h", Line: 5}}}, true
}

func TestFramesInnermostFirst(t *testing.T) {
	got := Frames(inlined{}, 0x124)
	want := []Frame{{"inner", 4, "i.h", 3}, {"mid", 0x14, "m.h", 5}, {"outer", 0x24, "o.c", 9}}
	if len(got) != len(want) {
		t.Fatalf("frames %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("frame %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestSymCacheSnapshotLookup: symlookup --json on symbolic's macos.symc
// gives the frames of symbolic's test_cache__lookup snapshot.
func TestSymCacheSnapshotLookup(t *testing.T) {
	p := filepath.Join(corpus.Path(), "symbolic/symcache/current/macos.symc")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("corpus file %s not found: skipping", p)
	}
	out, err := runCmd(t, "", "--json", p, fmt.Sprintf("%x", 4_458_187_797-4_458_131_456))
	if err != nil {
		t.Fatal(err)
	}
	dir := "/Users/travis/build/getsentry/breakpad-tools/macos/main.cpp"
	want := `{"address":"0xdc15","frames":[{"function":"_ZN12_GLOBAL__N_15crashEv","offset":0,"file":"` + dir + `","line":21},` +
		`{"function":"_ZN12_GLOBAL__N_15startEv","offset":0,"file":"` + dir + `","line":25},` +
		`{"function":"main","offset":117,"file":"` + dir + `","line":32}]}` + "\n"
	if out != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
}

// TestNotAFile: a directory or an empty file is named as such.
func TestNotAFile(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.bin")
	os.WriteFile(empty, nil, 0o644)
	for in, want := range map[string]string{dir: dir + " is a directory, not a symbol or debug file", empty: "(empty file)"} {
		if _, err := runCmd(t, "", in, "1234"); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "starts with )") {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}
