package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/gsym"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/formats"
	symgsym "github.com/gobreakpad/gobreakpad/symbols/gsym"
)

// llvmText formats frames as llvm-gsymutil --address prints a lookup.
func llvmText(addr uint64, frames []Frame) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "0x%016x: ", addr)
	for i, f := range frames {
		if i > 0 {
			sb.WriteString("\n" + strings.Repeat(" ", 20))
		}
		sb.WriteString(f.Function)
		if f.Offset > 0 {
			fmt.Fprintf(&sb, " + %d", f.Offset)
		}
		if f.File != "" {
			fmt.Fprintf(&sb, " @ %s:%d", f.File, f.Line)
		}
		if i+1 != len(frames) {
			sb.WriteString(" [inlined]")
		}
	}
	return sb.String()
}

// readLLVMLookups reads llvm-gsymutil's results, one block per address.
func readLLVMLookups(t testing.TB, path string) ([]uint64, map[uint64]string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var addrs []uint64
	m := map[uint64]string{}
	for _, block := range strings.Split(strings.TrimSpace(string(data)), "\n\n") {
		a, err := strconv.ParseUint(strings.TrimPrefix(strings.SplitN(block, ":", 2)[0], "0x"), 16, 64)
		if err != nil {
			t.Fatalf("%s: %q: %v", path, block, err)
		}
		addrs = append(addrs, a)
		m[a] = block
	}
	return addrs, m
}

func openLookups(t testing.TB, path string) symbols.Lookuper {
	t.Helper()
	f, err := formats.Sniff(path)
	if err != nil {
		t.Fatal(err)
	}
	l, c, err := f.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return l
}

// TestGSYMAgreesWithLLVM: symlookup --json's frames for every address of
// every function of the corpus GSYM files, made by LLVM 22 and by LLVM 14,
// are llvm-gsymutil-22's.
func TestGSYMAgreesWithLLVM(t *testing.T) {
	dir := filepath.Join(corpus.Dir(t), "gsym")
	lookups, _ := filepath.Glob(filepath.Join(dir, "*.lookups.txt"))
	if len(lookups) == 0 {
		t.Skipf("no *.lookups.txt in %s", dir)
	}
	n := 0
	for i, lp := range lookups {
		if raceBuild && i%4 != 0 {
			continue // a sample: -race is slow
		}
		stem := strings.TrimSuffix(filepath.Base(lp), ".lookups.txt")
		addrs, want := readLLVMLookups(t, lp)
		var stdin strings.Builder
		for _, a := range addrs {
			fmt.Fprintf(&stdin, "%x\n", a)
		}
		for _, v := range []string{"llvm22", "llvm14"} {
			out, err := runCmd(t, stdin.String(), "--json", filepath.Join(dir, stem+"."+v+".gsym"), "-")
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != len(addrs) {
				t.Fatalf("%s.%s: %d results for %d addresses", stem, v, len(lines), len(addrs))
			}
			bad := 0
			for i, a := range addrs {
				var res struct {
					Address string  `json:"address"`
					Frames  []Frame `json:"frames"`
				}
				if err := json.Unmarshal([]byte(lines[i]), &res); err != nil || res.Address != fmt.Sprintf("0x%x", a) {
					t.Fatalf("%s.%s: result %d: %q: %v", stem, v, i, lines[i], err)
				}
				if got := llvmText(a, res.Frames); got != want[a] {
					if bad++; bad <= 3 {
						t.Errorf("%s.%s:\n got %s\nwant %s", stem, v, got, want[a])
					}
				}
			}
			if bad > 0 {
				t.Errorf("%s.%s: %d of %d addresses differ", stem, v, bad, len(addrs))
			}
			n += len(addrs)
		}
	}
	t.Logf("%d addresses agree (%d files of each LLVM version)", n, len(lookups))
}

// symFiles returns the corpus .sym files the conversion tests use: dump_syms
// outputs of the elf/ programs (with and without inlines) and the symbols of
// the generated crash cases.
func symFiles(t testing.TB) []string {
	root := corpus.Dir(t)
	var out []string
	a, _ := filepath.Glob(filepath.Join(root, "breakpad", "expected-dump_syms", "*.sym"))
	b, _ := filepath.Glob(filepath.Join(root, "generated", "*", "symbols", "*", "*", "*.sym"))
	for _, p := range append(a, b...) {
		if strings.Contains(filepath.Base(p), "debian-libc") {
			continue // big: the benchmarks' business
		}
		out = append(out, p)
	}
	return out
}

// TestSymToGSYM: a .sym converted to GSYM (symconv's path) gives the same
// lookups as the .sym at the address of every line record, inlined calls
// included: symlookup's frames (whose inlined offsets count, for GSYM, from
// the call's first range as llvm-gsymutil's do, so are left out) and the
// walker's symbols (symbols/gsym's adapter against symbols/breakpad's, all
// fields).
func TestSymToGSYM(t *testing.T) {
	syms := symFiles(t)
	if len(syms) == 0 {
		t.Skip("no .sym files in the corpus")
	}
	bp, _ := formats.ByName("breakpad")
	gs, _ := formats.ByName("gsym")
	tmp := t.TempDir()
	n, files := 0, 0
	for i, p := range syms {
		if raceBuild && i%4 != 0 {
			continue // a sample: -race is slow
		}
		m, err := bp.Read(p, nil)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if len(m.Funcs) == 0 && len(m.Publics) == 0 {
			continue // nothing to look up (dwz's common file); GSYM refuses it
		}
		out := filepath.Join(tmp, fmt.Sprintf("%d.gsym", i))
		fh, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(fh)
		if err := gs.Write(w, m, formats.WriteOptions{}); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		fh.Close()
		want, got := openLookups(t, p), openLookups(t, out)
		gf, err := gsym.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		walkGot := &symgsym.Lookuper{File: gf}
		bad := 0
		for _, f := range m.Funcs {
			for _, l := range f.Lines {
				w, g := Frames(want, l.Address), Frames(got, l.Address)
				for i := 0; i+1 < len(w) && i+1 < len(g); i++ {
					w[i].Offset, g[i].Offset = 0, 0
				}
				ws, _ := want.Lookup(l.Address, true)
				gs, _ := walkGot.Lookup(l.Address, true)
				if !reflect.DeepEqual(w, g) || !reflect.DeepEqual(ws, gs) {
					if bad++; bad <= 3 {
						t.Errorf("%s at %#x:\n got %+v\n     %+v\nwant %+v\n     %+v", p, l.Address, g, gs, w, ws)
					}
				}
				n++
			}
		}
		gf.Close()
		files++
	}
	t.Logf("%d line-record addresses of %d .sym files agree", n, files)
}

// TestGSYMToSym: LLVM's GSYM files converted to .sym (symconv's path) give
// the same frames (functions, files, lines; inlined offsets aside, which
// count from different places in the two formats) at every address
// llvm-gsymutil looked up.
func TestGSYMToSym(t *testing.T) {
	dir := filepath.Join(corpus.Dir(t), "gsym")
	lookups, _ := filepath.Glob(filepath.Join(dir, "*.lookups.txt"))
	if len(lookups) == 0 {
		t.Skipf("no *.lookups.txt in %s", dir)
	}
	gs, _ := formats.ByName("gsym")
	bp, _ := formats.ByName("breakpad")
	tmp := t.TempDir()
	n := 0
	for _, lp := range lookups {
		stem := strings.TrimSuffix(filepath.Base(lp), ".lookups.txt")
		in := filepath.Join(dir, stem+".llvm22.gsym")
		m, err := gs.Read(in, nil)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		out := filepath.Join(tmp, stem+".sym")
		fh, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := bp.Write(fh, m, formats.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		fh.Close()
		want, got := openLookups(t, in), openLookups(t, out)
		addrs, _ := readLLVMLookups(t, lp)
		bad := 0
		for _, a := range addrs {
			w, g := Frames(want, a), Frames(got, a)
			for i := 0; i+1 < len(w) && i+1 < len(g); i++ {
				w[i].Offset, g[i].Offset = 0, 0
			}
			if !reflect.DeepEqual(w, g) {
				if bad++; bad <= 3 {
					t.Errorf("%s at %#x:\n got %+v\nwant %+v", stem, a, g, w)
				}
			}
			n++
		}
	}
	t.Logf("%d addresses of %d GSYM files agree after conversion to .sym", n, len(lookups))
}
