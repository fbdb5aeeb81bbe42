package dumptext_test

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/dumptext"
)

// dumpPath opens a file and prints it, returning the output and whether
// Breakpad's minidump_dump would succeed (exit status 0).
func dumpPath(t *testing.T, path string, hexdump bool) (string, bool) {
	t.Helper()
	f, err := minidump.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	var out bytes.Buffer
	err = dumptext.Write(&out, f, dumptext.Options{Hexdump: hexdump})
	return out.String(), err == nil
}

// The generated cases' dump.txt were made before the paths inside the dumps
// were rewritten from /tmp/oracle-work to /srv/crash-tests (same length);
// the rewrite reached the text of dump.txt but not its hex dumps of memory.
// Undo it in our hex output so the rest is compared byte for byte.
var (
	rewrittenHex = hex.EncodeToString([]byte("/srv/crash-tests"))
	originalHex  = hex.EncodeToString([]byte("/tmp/oracle-work"))
)

func TestCorpusMatchesBreakpad(t *testing.T) {
	root := corpus.Dir(t)
	type tc struct{ name, dump, want string }
	var cases []tc
	tsv, err := os.ReadFile(filepath.Join(root, "cases.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(tsv)), "\n") {
		f := strings.Split(line, "\t")
		want := filepath.Join(root, "breakpad", "expected", f[0]+".dump.txt")
		if _, err := os.Stat(want); err == nil {
			cases = append(cases, tc{f[0], filepath.Join(root, f[1]), want})
		}
	}
	gen, _ := filepath.Glob(filepath.Join(root, "generated", "*", "dump.txt"))
	for _, want := range gen {
		dir := filepath.Dir(want)
		cases = append(cases, tc{"generated/" + filepath.Base(dir), filepath.Join(dir, "crash.dmp"), want})
	}
	if len(cases) == 0 {
		t.Skip("no expected minidump_dump outputs in the corpus")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, err := os.ReadFile(c.want)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := dumpPath(t, c.dump, false)
			if wantOK := breakpadStatus(string(want)); ok != wantOK {
				t.Errorf("success = %v, Breakpad's = %v", ok, wantOK)
			}
			if log, err := os.ReadFile(filepath.Join(filepath.Dir(c.want), "dump.log")); err == nil {
				// Breakpad logs an ERROR from minidump_dump.cc exactly when it counts a failure.
				if logOK := !strings.Contains(string(log), "minidump_dump.cc") || !strings.Contains(string(log), ": ERROR: "); ok != logOK {
					t.Errorf("success = %v, Breakpad's log says %v", ok, logOK)
				}
			}
			if strings.HasPrefix(c.name, "generated/") {
				got = strings.ReplaceAll(got, rewrittenHex, originalHex)
			}
			if got == string(want) {
				return
			}
			gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
			for i := 0; i < len(gl) || i < len(wl); i++ {
				var g, w string
				if i < len(gl) {
					g = gl[i]
				}
				if i < len(wl) {
					w = wl[i]
				}
				if g != w {
					t.Fatalf("line %d differs (%d vs %d lines)\n got: %.200s\nwant: %.200s", i+1, len(gl), len(wl), g, w)
				}
			}
		})
	}
}

// breakpadStatus infers Breakpad's exit status from its output: it fails
// exactly when the dump cannot be read (no output) or one of the streams it
// requires is not printed. (A raw Linux stream that cannot be read also
// fails; no reference dump has one.)
func breakpadStatus(out string) bool {
	for _, h := range []string{"MDRawHeader\n", "\nMinidumpThreadList\n", "\nMinidumpModuleList\n",
		"\nMinidumpMemoryList\n", "\nMDRawSystemInfo\n", "\nMDRawMiscInfo\n", "\nMinidumpMemoryInfoList\n"} {
		if !strings.Contains(out, h) {
			return false
		}
	}
	return true
}
