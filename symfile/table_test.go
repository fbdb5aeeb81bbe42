package symfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func mustParse(t *testing.T, text string) *Table {
	t.Helper()
	tab, err := Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

const sample = `MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 my lib.so
INFO CODE_ID 89ABCDEF0123 my lib.so
INFO GENERATOR mozilla/dump_syms 2.3.4
FILE 0 /src/a file.cc
FILE 1 /src/inl.h
FILE 1 /src/duplicate-ignored.h
INLINE_ORIGIN 0 outer_inline(int)
INLINE_ORIGIN 1 inner_inline
FUNC 1000 40 8 ns::Func(int, char const*)
INLINE 0 10 0 0 1008 10
INLINE 1 20 1 1 100c 4
1000 8 5 0
1008 8 11 1
1010 30 6 0
FUNC m 1100 10 0 folded
1100 10 7 0
PUBLIC 1200 4 pub_after_funcs
PUBLIC 1200 0 pub_duplicate_ignored
PUBLIC m 1080 0 pub_inside_gap
PUBLIC 0 0 pub_at_zero_ignored
PUBLIC 0FF0 0 pub_before
STACK CFI INIT 1000 40 .cfa: $rsp 8 + .ra: .cfa -8 + ^
STACK CFI 1001 .cfa: $rsp 16 +
STACK CFI 1004 $rbp: .cfa -16 + ^
STACK CFI 1010 .cfa: $rbp 16 +
STACK WIN 4 2000 100 4 0 8 0 10 0 1 $T0 $ebp = $eip $T0 4 + ^ =
STACK WIN 4 2010 10 1 0 8 0 0 0 1 inner program
STACK WIN 0 2000 200 0 0 c 4 8 0 0 1
`

func TestTableSample(t *testing.T) {
	tab := mustParse(t, sample)
	if n := tab.NumErrors(); n != 0 {
		t.Fatalf("errors: %v", tab.Errors())
	}
	m, ok := tab.Module()
	if want := (Module{"Linux", "x86_64", "0123456789ABCDEF0123456789ABCDEF0", "my lib.so"}); !ok || m != want {
		t.Errorf("Module = %+v, want %+v", m, want)
	}
	if c, ok := tab.CodeID(); !ok || c != (CodeID{"89ABCDEF0123", "my lib.so"}) {
		t.Errorf("CodeID = %+v", c)
	}
	if in := tab.Infos(); len(in) != 1 || in[0] != (Info{"GENERATOR", "mozilla/dump_syms 2.3.4"}) {
		t.Errorf("Infos = %+v", in)
	}

	tests := []struct {
		addr uint64
		want Symbol
		ok   bool
	}{
		{0xfef, Symbol{}, false},
		{0xff0, Symbol{Name: "pub_before", Address: 0xff0, Public: true}, true},
		{0x1000, Symbol{Name: "ns::Func(int, char const*)", Address: 0x1000, Size: 0x40, ParamSize: 8,
			HasLine: true, File: "/src/a file.cc", Line: 5, LineAddress: 0x1000}, true},
		{0x1009, Symbol{Name: "ns::Func(int, char const*)", Address: 0x1000, Size: 0x40, ParamSize: 8,
			HasLine: true, File: "/src/inl.h", Line: 11, LineAddress: 0x1008,
			Inlines: []InlinedCall{{Name: "outer_inline(int)", Address: 0x1008, CallFile: "/src/a file.cc", CallLine: 10}}}, true},
		{0x100d, Symbol{Name: "ns::Func(int, char const*)", Address: 0x1000, Size: 0x40, ParamSize: 8,
			HasLine: true, File: "/src/inl.h", Line: 11, LineAddress: 0x1008,
			Inlines: []InlinedCall{
				{Name: "inner_inline", Address: 0x100c, CallFile: "/src/inl.h", CallLine: 20},
				{Name: "outer_inline(int)", Address: 0x1008, CallFile: "/src/a file.cc", CallLine: 10},
			}}, true},
		{0x103f, Symbol{Name: "ns::Func(int, char const*)", Address: 0x1000, Size: 0x40, ParamSize: 8,
			HasLine: true, File: "/src/a file.cc", Line: 6, LineAddress: 0x1010}, true},
		// Between functions: the PUBLIC above the FUNC below wins.
		{0x1090, Symbol{Name: "pub_inside_gap", Address: 0x1080, Multiple: true, Public: true}, true},
		{0x1105, Symbol{Name: "folded", Address: 0x1100, Size: 0x10, Multiple: true,
			HasLine: true, File: "/src/a file.cc", Line: 7, LineAddress: 0x1100}, true},
		// Past the last FUNC, below the next PUBLIC: the FUNC below is nearer
		// than the PUBLIC below it, so nothing.
		{0x1150, Symbol{}, false},
		{0x1201, Symbol{Name: "pub_after_funcs", Address: 0x1200, ParamSize: 4, Public: true}, true},
		{0xffffffff, Symbol{Name: "pub_after_funcs", Address: 0x1200, ParamSize: 4, Public: true}, true},
	}
	for _, tt := range tests {
		got, ok := tab.Lookup(tt.addr)
		if ok != tt.ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Lookup(%#x) = %+v, %v\nwant %+v, %v", tt.addr, got, ok, tt.want, tt.ok)
		}
	}

	sym, _ := tab.Lookup(0x100d)
	frames := sym.Frames()
	wantFrames := []Frame{
		{Name: "inner_inline", Address: 0x100c, File: "/src/inl.h", Line: 11, Inline: true},
		{Name: "outer_inline(int)", Address: 0x1008, File: "/src/inl.h", Line: 20, Inline: true},
		{Name: "ns::Func(int, char const*)", Address: 0x1000, File: "/src/a file.cc", Line: 10},
	}
	if !reflect.DeepEqual(frames, wantFrames) {
		t.Errorf("Frames = %+v\nwant %+v", frames, wantFrames)
	}
	// An old-form INLINE (no call-site file) shows the line record's file.
	old := Symbol{Name: "f", HasLine: true, File: "a.c", Line: 3, Inlines: []InlinedCall{{Name: "g", CallLine: 9}}}
	wantOld := []Frame{{Name: "g", File: "a.c", Line: 3, Inline: true}, {Name: "f", File: "a.c", Line: 9}}
	if got := old.Frames(); !reflect.DeepEqual(got, wantOld) {
		t.Errorf("old-form Frames = %+v\nwant %+v", got, wantOld)
	}

	cfiTests := []struct {
		addr   uint64
		deltas []uint64
	}{
		{0x1000, nil},
		{0x1003, []uint64{0x1001}},
		{0x1004, []uint64{0x1001, 0x1004}},
		{0x103f, []uint64{0x1001, 0x1004, 0x1010}},
	}
	for _, tt := range cfiTests {
		r, ok := tab.CFIRules(tt.addr)
		if !ok || r.Address != 0x1000 || r.Size != 0x40 || r.Init != ".cfa: $rsp 8 + .ra: .cfa -8 + ^" {
			t.Errorf("CFIRules(%#x) = %+v, %v", tt.addr, r, ok)
			continue
		}
		var got []uint64
		for _, d := range r.Deltas {
			got = append(got, d.Address)
		}
		if !reflect.DeepEqual(got, tt.deltas) {
			t.Errorf("CFIRules(%#x) deltas at %x, want %x", tt.addr, got, tt.deltas)
		}
	}
	if r, _ := tab.CFIRules(0x1004); r.Deltas[1].Rules != "$rbp: .cfa -16 + ^" {
		t.Errorf("delta rules %q", r.Deltas[1].Rules)
	}
	if _, ok := tab.CFIRules(0x1040); ok {
		t.Error("CFIRules past the INIT range found something")
	}

	winTests := []struct {
		addr uint64
		want StackWin
		ok   bool
	}{
		{0x1fff, StackWin{}, false},
		{0x2000, StackWin{Type: WinFrameData, RVA: 0x2000, CodeSize: 0x100, PrologSize: 4, ParamSize: 8, LocalSize: 0x10,
			HasProgramString: true, ProgramString: "$T0 $ebp = $eip $T0 4 + ^ ="}, true},
		{0x2012, StackWin{Type: WinFrameData, RVA: 0x2010, CodeSize: 0x10, PrologSize: 1, ParamSize: 8,
			HasProgramString: true, ProgramString: "inner program"}, true},
		// FPO only where no FrameData record covers the address.
		{0x2150, StackWin{Type: WinFPO, RVA: 0x2000, CodeSize: 0x200, ParamSize: 0xc, SavedRegisterSize: 4, LocalSize: 8,
			AllocatesBasePointer: true}, true},
	}
	for _, tt := range winTests {
		got, ok := tab.StackWin(tt.addr)
		if ok != tt.ok || got != tt.want {
			t.Errorf("StackWin(%#x) = %+v, %v\nwant %+v, %v", tt.addr, got, ok, tt.want, tt.ok)
		}
	}
}

func TestTableTextForms(t *testing.T) {
	// CRLF line ends, upper-case hex, 0x prefixes, runs of spaces, a blank
	// line and no final newline must all load as Breakpad loads them.
	text := "MODULE windows x86 ABCDEF1 test.pdb\r\n" +
		"FILE 3 c:\\src\\with space.cpp\r\n" +
		"\r\n" +
		"FUNC 1A2B 0x10  4 Class::Method(int)\r\n" +
		"1A2B  8 12 3\r\n" +
		"1A33 8 13 3\r\n" +
		"STACK  CFI INIT 1A2B 10 .cfa: $esp 4 +\r\n" +
		"STACK  CFI 1A2C .cfa: $esp 8 +\r\n" +
		"PUBLIC 2AB0 0 _start"
	tab := mustParse(t, text)
	if tab.NumErrors() != 0 {
		t.Fatalf("errors: %v", tab.Errors())
	}
	sym, ok := tab.Lookup(0x1a34)
	want := Symbol{Name: "Class::Method(int)", Address: 0x1a2b, Size: 0x10, ParamSize: 4,
		HasLine: true, File: `c:\src\with space.cpp`, Line: 13, LineAddress: 0x1a33}
	if !ok || !reflect.DeepEqual(sym, want) {
		t.Errorf("Lookup = %+v, want %+v", sym, want)
	}
	if r, ok := tab.CFIRules(0x1a2c); !ok || r.Init != ".cfa: $esp 4 +" || len(r.Deltas) != 1 || r.Deltas[0].Rules != ".cfa: $esp 8 +" {
		t.Errorf("CFIRules with two spaces after STACK = %+v, %v", r, ok)
	}
	if sym, ok := tab.Lookup(0x2ab5); !ok || sym.Name != "_start" {
		t.Errorf("PUBLIC without final newline: %+v, %v", sym, ok)
	}
}

func TestTableMalformedLines(t *testing.T) {
	text := `MODULE Linux x86 ID name
FUNC 1000 zz 0 broken
1000 10 1 0
FUNC 2000 10 0 good
2000 8 -1 0
2008 8 3 0
FILE x name
STACK WIN 9 0 0 0 0 0 0 0 0 0 0
INLINE 0 1 0
PUBLIC 3000 0 pub
3000 4 1 0
`
	tab := mustParse(t, text)
	var lines []int
	for _, e := range tab.Errors() {
		lines = append(lines, e.Line)
	}
	if want := []int{2, 3, 5, 7, 8, 9, 11}; !reflect.DeepEqual(lines, want) {
		t.Errorf("error lines %v, want %v (%v)", lines, want, tab.Errors())
	}
	if !tab.Corrupt() || tab.NumErrors() != 7 {
		t.Errorf("Corrupt = %v, NumErrors = %d", tab.Corrupt(), tab.NumErrors())
	}
	if e := tab.Errors()[0].Error(); !strings.HasPrefix(e, "line 2: FUNC") {
		t.Errorf("error text %q", e)
	}
	// The rest still loads.
	if sym, ok := tab.Lookup(0x2009); !ok || sym.Name != "good" || sym.Line != 3 {
		t.Errorf("Lookup after errors = %+v, %v", sym, ok)
	}
	if sym, ok := tab.Lookup(0x2001); !ok || sym.HasLine {
		t.Errorf("malformed line record was used: %+v, %v", sym, ok)
	}
	// Inline errors alone do not make a file corrupt, as in Breakpad.
	tab = mustParse(t, "MODULE a b c d\nFUNC 0 10 0 f\nINLINE x\n")
	if tab.Corrupt() || tab.NumErrors() != 1 {
		t.Errorf("INLINE error: Corrupt = %v, NumErrors = %d", tab.Corrupt(), tab.NumErrors())
	}
	if tab := mustParse(t, "FUNC 0 10 0 f\n"); !tab.Corrupt() {
		t.Error("file without MODULE is not corrupt")
	}
}

func TestTableOverlaps(t *testing.T) {
	// Breakpad keeps the first of overlapping FUNC, line and CFI records and
	// drops the later ones, even when they come before in address order.
	text := `MODULE Linux x86 ID name
FUNC 1000 100 0 first
1000 100 1 0
1000 10 2 0
FUNC 1080 100 0 overlaps_first
FUNC f00 200 0 overlaps_first_too
FUNC 1100 0 0 empty
FUNC 2000 10 0 after
2008 8 4 0
2000 8 3 0
2004 8 5 0
STACK CFI INIT 1000 10 first
STACK CFI INIT 1008 10 second
STACK CFI INIT 1010 10 third
`
	tab := mustParse(t, text)
	for addr, want := range map[uint64]string{0x1000: "first", 0x10ff: "first", 0x1100: "", 0x2000: "after"} {
		sym, ok := tab.Lookup(addr)
		if sym.Name != want || ok != (want != "") {
			t.Errorf("Lookup(%#x) = %q, %v, want %q", addr, sym.Name, ok, want)
		}
	}
	if sym, _ := tab.Lookup(0x1008); sym.Line != 1 {
		t.Errorf("line at 0x1008 = %d, want the first record's 1", sym.Line)
	}
	for addr, want := range map[uint64]int64{0x2000: 3, 0x2009: 4, 0x2004: 3} {
		if sym, _ := tab.Lookup(addr); sym.Line != want {
			t.Errorf("unordered lines: line at %#x = %d, want %d", addr, sym.Line, want)
		}
	}
	for addr, want := range map[uint64]string{0x1000: "first", 0x100f: "first", 0x1010: "third"} {
		if r, ok := tab.CFIRules(addr); !ok || r.Init != want {
			t.Errorf("CFIRules(%#x) = %q, %v, want %q", addr, r.Init, ok, want)
		}
	}
}

func TestStackWinConflicts(t *testing.T) {
	// A record partly overlapping an earlier one is dropped (the strncpy_s
	// case in Breakpad's test_app); nested ones are kept, innermost wins.
	text := `MODULE windows x86 ID a.pdb
STACK WIN 4 4242 1a a 0 0 0 0 0 1 first
STACK WIN 4 4243 2e 9 0 0 0 0 0 1 partial
STACK WIN 4 4242 1a a 0 0 0 0 0 1 equal
STACK WIN 4 4244 4 0 0 0 0 0 0 1 nested
`
	tab := mustParse(t, text)
	for addr, want := range map[uint64]string{0x4242: "first", 0x4244: "nested", 0x425b: "first", 0x425c: ""} {
		w, ok := tab.StackWin(addr)
		if w.ProgramString != want || ok != (want != "") {
			t.Errorf("StackWin(%#x) = %q, %v, want %q", addr, w.ProgramString, ok, want)
		}
	}
}

func TestStore(t *testing.T) {
	root1, root2 := t.TempDir(), t.TempDir()
	write := func(root, rel, text string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(root2, "app.pdb/ID1/app.sym", "MODULE windows x86 ID1 app.pdb\nFUNC 0 10 0 f\n")
	write(root1, "libc.so/ID2/libc.so.sym", "MODULE Linux x86 ID2 libc.so\nFUNC 0 10 zz f\n")
	write(root2, "libc.so/ID2/libc.so.sym", "MODULE Linux x86 ID2 libc.so\n")
	if err := os.MkdirAll(filepath.Join(root1, "unreadable.so/ID3/unreadable.so.sym"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := NewStore(root1, root2)

	tab, st, err := s.Load(`C:\build\out\App.PDB`, "ID1")
	if st != NotFound || err == nil || tab != nil {
		// App.PDB names the file "App.sym" in directory "App.PDB": not there.
		t.Errorf("case-changed name: %v, %v", st, err)
	}
	tab, st, err = s.Load(`C:\build\out\app.pdb`, "ID1")
	if st != Found || err != nil || tab == nil {
		t.Fatalf("Load app.pdb = %v, %v", st, err)
	}
	if sym, ok := tab.Lookup(5); !ok || sym.Name != "f" {
		t.Errorf("Lookup in loaded table = %+v", sym)
	}
	tab.Close()

	// The first root holding the file wins, even when it is corrupt.
	tab, st, err = s.Load("/usr/lib/libc.so", "ID2")
	if st != Corrupt || err == nil || tab == nil {
		t.Errorf("corrupt file: %v, %v", st, err)
	} else {
		tab.Close()
	}
	if _, st, err = s.Load("missing.so", "ID9"); st != NotFound || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v, %v", st, err)
	}
	for _, bad := range [][2]string{{"..", "ID1"}, {"a/..", "ID1"}, {"", "ID1"}, {"x\x00y", "ID1"}, {"app.pdb", ".."}, {"app.pdb", "../ID1"}, {"app.pdb", ""}, {`c:\dir\..`, "ID1"}} {
		if _, st, err := s.Load(bad[0], bad[1]); st != NotFound || !errors.Is(err, ErrBadName) {
			t.Errorf("Load(%q, %q) = %v, %v; want NotFound, ErrBadName", bad[0], bad[1], st, err)
		}
	}
}

func filepathIsLocal(p string) bool { return filepath.IsLocal(p) }
