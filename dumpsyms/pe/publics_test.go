package pe

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/pdb"
)

// llvmPDBUtil returns LLVM's llvm-pdbutil (llvm-22's, else any), or
// skips the test.
func llvmPDBUtil(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"llvm-pdbutil-22", "llvm-pdbutil"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("llvm-pdbutil not installed (apt-get install llvm-22): the public symbols' reference")
	return ""
}

var (
	pubName = regexp.MustCompile("^ *[0-9]+ \\| S_PUB32 \\[size = [0-9]+\\] `(.*)`$")
	pubAddr = regexp.MustCompile(`addr = ([0-9]{4}):([0-9]+)$`)
	// An i386 C decoration: _name (cdecl), _name@N (stdcall), @name@N
	// (fastcall).
	x86Decoration = regexp.MustCompile(`^(?:_([^@]+)|_([^@]+)@[0-9]+|@([^@]+)@[0-9]+)$`)
)

// pdbPublics returns the names of a PDB's S_PUB32 symbols by RVA as
// llvm-pdbutil's dump --publics lists them (the RVA from the PDB's
// section headers), and whether the PDB is i386's.
func pdbPublics(t *testing.T, util, path string) (map[uint32][]string, bool) {
	t.Helper()
	out, err := exec.Command(util, "dump", "--publics", path).Output()
	if err != nil {
		t.Fatalf("%s dump --publics %s: %v", util, path, err)
	}
	_, d, secs := openPDB(t, path)
	byRVA := map[uint32][]string{}
	name := ""
	for l := range strings.SplitSeq(string(out), "\n") {
		if m := pubName.FindStringSubmatch(l); m != nil {
			name = m[1]
			continue
		}
		if m := pubAddr.FindStringSubmatch(l); m != nil && name != "" {
			seg, _ := strconv.Atoi(m[1])
			off, _ := strconv.ParseUint(m[2], 10, 32)
			if seg > 0 && seg <= len(secs) {
				rva := secs[seg-1].VirtualAddress + uint32(off)
				byRVA[rva] = append(byRVA[rva], name)
			}
			name = ""
		}
	}
	return byRVA, d.Header.Machine == pdb.MachineI386
}

// TestPublicNamesAsPDB: every PUBLIC record's name is the name of a
// public symbol at its address as llvm-pdbutil's dump --publics lists it
// (C++-decorated names aside: those are demangled), less its C decoration
// on i386 only (_name, _name@N, @name@N). x64 names have no decoration:
// __std_exception_destroy and _CxxThrowException stay whole, where
// Breakpad's and Mozilla's dump_syms strip one underscore (issue 28, item
// 3; docs/dump_syms.md).
func TestPublicNamesAsPDB(t *testing.T) {
	util := llvmPDBUtil(t)
	for _, c := range []struct {
		path    string
		corpus  bool
		x64Kept int // x64 names starting with "_" checked, at least
	}{
		{"windows/symbolic/CrashWithException.pdb", true, 20},
		{"windows/breakpad/dump_syms_regtest64.pdb", true, 0},
		{"windows/mozilla/dump_syms_regtest64.pdb", true, 0},
		{"windows/breakpad/dump_syms_regtest.pdb", true, 0},
		{"windows/symbolic/crash.pdb", true, 0},
		{"windows/mozilla/basic32-min.pdb", true, 0},
	} {
		t.Run(c.path, func(t *testing.T) {
			path := c.path
			if c.corpus {
				path = corpus.File(t, path)
			}
			pubs, x86 := pdbPublics(t, util, path)
			checked, kept := 0, 0
			for l := range strings.SplitSeq(dumpText(t, path, dumpsyms.Options{}), "\n") {
				f := strings.Fields(l)
				if len(f) < 4 || f[0] != "PUBLIC" || strings.HasPrefix(l, "PUBLIC ") && strings.Contains(l, "<unknown in ") {
					continue
				}
				if f[1] == "m" {
					f = f[1:]
				}
				a, err := strconv.ParseUint(f[1], 16, 32)
				if err != nil {
					t.Fatalf("%q: %v", l, err)
				}
				got := strings.Join(f[3:], " ")
				var want []string
				for _, n := range pubs[uint32(a)] {
					if strings.HasPrefix(n, "?") {
						continue // demangled
					}
					if m := x86Decoration.FindStringSubmatch(n); x86 && m != nil {
						n = m[1] + m[2] + m[3]
					}
					want = append(want, n)
				}
				if len(want) == 0 {
					continue
				}
				checked++
				if !x86 && strings.HasPrefix(got, "_") {
					kept++
				}
				found := false
				for _, w := range want {
					found = found || w == got
				}
				if !found {
					t.Errorf("%q: want the name of a public there: %q", l, want)
				}
			}
			if checked == 0 || kept < c.x64Kept {
				t.Errorf("%d PUBLIC records checked, %d x64 names with a leading underscore; want some, at least %d", checked, kept, c.x64Kept)
			}
		})
	}
}
