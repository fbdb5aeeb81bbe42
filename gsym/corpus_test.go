package gsym

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// llvmText formats a lookup as llvm-gsymutil --address prints it.
func llvmText(r LookupResult) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "0x%016x: ", r.Address)
	for i, l := range r.Locations {
		if i > 0 {
			sb.WriteString("\n" + strings.Repeat(" ", 20))
		}
		sb.WriteString(l.Name)
		if l.Offset > 0 {
			fmt.Fprintf(&sb, " + %d", l.Offset)
		}
		if l.Dir != "" || l.Base != "" {
			fmt.Fprintf(&sb, " @ %s:%d", l.Path(), l.Line)
		}
		if i+1 != len(r.Locations) {
			sb.WriteString(" [inlined]")
		}
	}
	return sb.String()
}

// readLookups reads a .lookups.txt file: blocks separated by blank lines,
// keyed by address.
func readLookups(t testing.TB, path string) ([]uint64, map[uint64]string) {
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var addrs []uint64
	m := map[uint64]string{}
	var cur []string
	flush := func() {
		if len(cur) == 0 {
			return
		}
		a, err := strconv.ParseUint(strings.TrimPrefix(strings.SplitN(cur[0], ":", 2)[0], "0x"), 16, 64)
		if err != nil {
			t.Fatalf("%s: %q: %v", path, cur[0], err)
		}
		addrs = append(addrs, a)
		m[a] = strings.Join(cur, "\n")
		cur = nil
	}
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if sc.Text() == "" {
			flush()
			continue
		}
		cur = append(cur, sc.Text())
	}
	flush()
	return addrs, m
}

// TestLLVMLookups checks our lookups against llvm-gsymutil-22's at every
// address of every function, in the files of LLVM 22 and LLVM 14.
func TestLLVMLookups(t *testing.T) {
	dir := filepath.Join(corpus.Dir(t), "gsym")
	lookups, _ := filepath.Glob(filepath.Join(dir, "*.lookups.txt"))
	if len(lookups) == 0 {
		t.Skip("no gsym lookups in the corpus")
	}
	total := 0
	for i, lp := range lookups {
		if raceBuild && i%4 != 0 {
			continue // a sample: -race is slow
		}
		stem := strings.TrimSuffix(filepath.Base(lp), ".lookups.txt")
		addrs, want := readLookups(t, lp)
		for _, v := range []string{"llvm22", "llvm14"} {
			f, err := Open(filepath.Join(dir, stem+"."+v+".gsym"))
			if err != nil {
				t.Fatal(err)
			}
			bad := 0
			for _, a := range addrs {
				r, err := f.Lookup(a)
				got := fmt.Sprintf("0x%016x: error: %v", a, err)
				if err == nil {
					got = llvmText(r)
				}
				if got != want[a] {
					if bad++; bad <= 5 {
						t.Errorf("%s.%s:\n got %s\nwant %s", stem, v, got, want[a])
					}
				}
			}
			if bad > 0 {
				t.Errorf("%s.%s: %d of %d addresses differ", stem, v, bad, len(addrs))
			}
			total += len(addrs)
			f.Close()
		}
	}
	t.Logf("%d lookups compared", total)
}

// TestLibcAgainstLLVM: in LLVM 22's GSYM of Debian's libc, and in one made
// here with merged-function and call-site chunks, our lookups of each
// function's first bytes, middle and last byte equal llvm-gsymutil-22's
// (run here; skipped without it), and every entry decodes.
func TestLibcAgainstLLVM(t *testing.T) {
	path := corpus.File(t, "gsym/debian-libc.llvm22.gsym")
	tool, err := exec.LookPath("llvm-gsymutil-22")
	if err != nil {
		t.Skip("llvm-gsymutil-22 not installed (Debian package llvm-22)")
	}
	paths := []string{path}
	debug, _ := filepath.Glob(filepath.Join(corpus.Dir(t), "debian", "libc", "usr-lib-debug", ".build-id", "*", "*.debug"))
	if len(debug) == 1 {
		merged := filepath.Join(t.TempDir(), "libc-merged.gsym")
		if out, err := exec.Command(tool, "--quiet", "--convert", debug[0], "--merged-functions", "--dwarf-callsites", "-o", merged).CombinedOutput(); err != nil {
			t.Fatalf("%s --convert: %v\n%s", tool, err, out)
		}
		paths = append(paths, merged)
	}
	if raceBuild && len(paths) > 1 {
		paths = paths[1:] // a sample: -race is slow; the merged file is the harder one
	}
	for _, path := range paths {
		libcAgainstLLVM(t, tool, path)
	}
}

func libcAgainstLLVM(t *testing.T, tool, path string) {
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var in strings.Builder
	var addrs []uint64
	merged, callSites := 0, 0
	for i := 0; i < f.NumFunctions(); i++ {
		fi, err := f.FunctionAt(i)
		if err != nil {
			t.Fatal(err)
		}
		merged += len(fi.Merged)
		if fi.CallSites != nil {
			callSites++
		}
		if raceBuild && i%4 != 0 {
			continue // a sample: -race is slow
		}
		for _, d := range []uint64{0, 1, 4, uint64(fi.Size) / 2, uint64(fi.Size) - 1} {
			if d >= uint64(fi.Size) && d > 0 {
				continue
			}
			addrs = append(addrs, fi.Start+d)
			fmt.Fprintf(&in, "%#x %s\n", fi.Start+d, path)
		}
	}
	cmd := exec.Command(tool, "--addresses-from-stdin")
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(strings.TrimSpace(strings.ReplaceAll(string(out), path, "FILE")), "\n\n")
	if len(blocks) != len(addrs) {
		t.Fatalf("%d results for %d addresses", len(blocks), len(addrs))
	}
	bad := 0
	for i, a := range addrs {
		r, err := f.Lookup(a)
		got := fmt.Sprintf("error: %v", err)
		if err == nil {
			got = llvmText(r)
		}
		if got != blocks[i] {
			if bad++; bad <= 5 {
				t.Errorf("%s:\ngot\n%s\nwant\n%s", path, got, blocks[i])
			}
		}
	}
	t.Logf("%s: %d addresses of %d functions (%d merged functions, %d with call sites) agree with llvm-gsymutil-22",
		filepath.Base(path), len(addrs)-bad, f.NumFunctions(), merged, callSites)
}
