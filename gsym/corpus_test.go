package gsym

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/corpus"
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
	for _, lp := range lookups {
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
