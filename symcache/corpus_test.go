package symcache

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// snapshot returns an insta snapshot's body (after its second "---" line).
func snapshot(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(corpus.File(t, "symbolic/symcache-snapshots/"+name))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.SplitN(string(b), "---\n", 3)
	if len(parts) != 3 {
		t.Fatalf("%s: not an insta snapshot", name)
	}
	return parts[2]
}

// functionsDebug prints the functions as symbolic's FunctionsDebug does.
func functionsDebug(c *Reader) string {
	fs := c.Functions()
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].EntryPC != fs[j].EntryPC {
			return fs[i].EntryPC < fs[j].EntryPC
		}
		return fs[i].Name < fs[j].Name
	})
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%16x %s\n", f.EntryPC, f.Name)
	}
	return b.String()
}

func TestFixtureHeaders(t *testing.T) {
	for _, tc := range []struct {
		name, id                                string
		files, funcs, locs, ranges, stringBytes uint32
	}{
		{"linux", "C0BCC3F19827FE653058404B2831D9E60", 55, 697, 8236, 6762, 52180},
		{"macos", "67E9247C814E392BA027DBDE6748FCBF0", 36, 639, 6033, 4591, 42829},
	} {
		c, err := Open(corpus.File(t, "symbolic/symcache/current/"+tc.name+".symc"))
		if err != nil {
			t.Fatal(err)
		}
		h := c.Header
		if h.Version != 7 || h.DebugID.String() != tc.id || h.Arch != ArchAmd64 || h.NumFiles != tc.files ||
			h.NumFunctions != tc.funcs || h.NumSourceLocations != tc.locs || h.NumRanges != tc.ranges || h.StringBytes != tc.stringBytes {
			t.Errorf("%s: header %+v", tc.name, h)
		}
		if got, want := functionsDebug(c), snapshot(t, "test_cache__functions_"+tc.name+".snap"); got != want {
			t.Errorf("%s: functions differ from the snapshot:\n%s", tc.name, firstDiff(got, want))
		}
		c.Close()
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d: got %q, want %q", i+1, a, b)
		}
	}
	return "equal"
}

// SnapshotLookups parses test_cache__lookup.snap: (file, line, name, entry_pc).
func snapshotLookups(t *testing.T) []Location {
	re := regexp.MustCompile(`\(\s*"([^"]*)",\s*(\d+),\s*Function \{\s*name: "([^"]*)",\s*entry_pc: (\d+),`)
	var out []Location
	for _, m := range re.FindAllStringSubmatch(snapshot(t, "test_cache__lookup.snap"), -1) {
		line, _ := strconv.Atoi(m[2])
		pc, _ := strconv.ParseUint(m[4], 10, 32)
		out = append(out, Location{File: m[1], Line: uint32(line), Function: m[3], EntryPC: uint32(pc)})
	}
	return out
}

func TestFixtureLookup(t *testing.T) {
	c, err := Open(corpus.File(t, "symbolic/symcache/current/macos.symc"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := snapshotLookups(t)
	if len(want) != 3 {
		t.Fatalf("snapshot parsed into %d frames", len(want))
	}
	got := c.Lookup(4_458_187_797 - 4_458_131_456)
	if len(got) != len(want) {
		t.Fatalf("lookup: %d frames %+v, want %+v", len(got), got, want)
	}
	for i := range want {
		g := got[i]
		if g.File != want[i].File || g.Line != want[i].Line || g.Function != want[i].Function || g.EntryPC != want[i].EntryPC {
			t.Errorf("frame %d: %+v, want %+v", i, g, want[i])
		}
	}
}

func TestCompatV1Rejected(t *testing.T) {
	b, err := os.ReadFile(corpus.File(t, "symbolic/symcache/compat/v1.symc"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(b); err == nil || !strings.Contains(err.Error(), "version 1") {
		t.Errorf("v1: err %v", err)
	}
}

func TestReencodeIdentical(t *testing.T) {
	for _, name := range []string{"linux", "macos"} {
		b, err := os.ReadFile(corpus.File(t, "symbolic/symcache/current/"+name+".symc"))
		if err != nil {
			t.Fatal(err)
		}
		c, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		if _, err := c.Raw().WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		if out.String() != string(b) {
			t.Errorf("%s: re-encoded %d bytes differ from the %d read", name, out.Len(), len(b))
		}
	}
}
