package elf

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
)

// compile builds a test program from testdata/e2e with the given compiler,
// skipping the test when the compiler is absent.
func compile(t *testing.T, compiler, src string, flags ...string) string {
	t.Helper()
	cc, err := exec.LookPath(compiler)
	if err != nil {
		t.Skipf("%s not found: skipping the end-to-end test", compiler)
	}
	abs, err := filepath.Abs(filepath.Join("testdata", "e2e", src))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, strings.TrimSuffix(src, filepath.Ext(src)))
	args := append([]string{"-O2", "-g", "-o", out, abs}, flags...)
	cmd := exec.Command(cc, args...)
	cmd.Dir = dir // split DWARF: the .dwo files go beside the binary
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("%s %v failed (%v): %s", cc, args, err, b)
	}
	return out
}

// dwarfTruth is what the DWARF itself says, read with debug/dwarf: the
// line table rows (address, file, line) of non-empty rows, and the
// subprograms with code.
type dwarfTruth struct {
	rows  []dwarf.LineEntry
	funcs map[uint64]string // low_pc -> DW_AT_name
}

func readTruth(t *testing.T, path string) dwarfTruth {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	tr := dwarfTruth{funcs: map[uint64]string{}}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		switch e.Tag {
		case dwarf.TagCompileUnit:
			lr, err := d.LineReader(e)
			if err != nil || lr == nil {
				continue
			}
			var prev dwarf.LineEntry
			have := false
			for {
				var le dwarf.LineEntry
				if err := lr.Next(&le); err != nil {
					if !errors.Is(err, io.EOF) {
						t.Fatal(err)
					}
					break
				}
				if have && le.Address > prev.Address {
					tr.rows = append(tr.rows, prev)
				}
				prev, have = le, !le.EndSequence
			}
		case dwarf.TagSubprogram:
			if low, ok := e.Val(dwarf.AttrLowpc).(uint64); ok && low != 0 {
				tr.funcs[low] = dieName(t, d, e)
			}
		}
	}
	return tr
}

// dieName is a DIE's DW_AT_name, or that of the DIE its
// DW_AT_specification or DW_AT_abstract_origin names.
func dieName(t *testing.T, d *dwarf.Data, e *dwarf.Entry) string {
	for range 4 {
		if name, ok := e.Val(dwarf.AttrName).(string); ok {
			return name
		}
		off, ok := e.Val(dwarf.AttrSpecification).(dwarf.Offset)
		if !ok {
			if off, ok = e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); !ok {
				return ""
			}
		}
		r := d.Reader()
		r.Seek(off)
		var err error
		if e, err = r.Next(); err != nil || e == nil {
			t.Fatalf("DIE at %#x: %v", off, err)
		}
	}
	return ""
}

// checkAgainstDWARF checks that every DWARF function has its FUNC, that
// every line table row inside a FUNC is found by a lookup of its address
// in our line records, and that every FUNC is covered by STACK CFI.
func checkAgainstDWARF(t *testing.T, s *dumpsyms.Model, tr dwarfTruth) {
	t.Helper()
	byAddr := map[uint64]*dumpsyms.Function{}
	for i := range s.Funcs {
		for _, r := range s.Funcs[i].Ranges {
			byAddr[r.Address] = &s.Funcs[i]
		}
	}
	for low, name := range tr.funcs {
		f := byAddr[low]
		if f == nil {
			t.Errorf("no FUNC at %#x for %s", low, name)
			continue
		}
		if baseName(f.Name) != name {
			t.Errorf("FUNC at %#x is %q, DWARF name %q", low, f.Name, name)
		}
	}
	checked := 0
	for _, row := range tr.rows {
		fn, line, _ := lookup(s, row.Address)
		if fn == nil {
			continue // code outside any function (e.g. crt files without DWARF)
		}
		checked++
		if line == nil {
			t.Errorf("%#x: no line record, DWARF %s:%d", row.Address, row.File.Name, row.Line)
			continue
		}
		if line.line != int64(row.Line) || line.file != row.File.Name {
			t.Errorf("%#x: line %s:%d, DWARF %s:%d", row.Address, line.file, line.line, row.File.Name, row.Line)
		}
	}
	if checked < 10 {
		t.Errorf("only %d line rows inside functions", checked)
	}
	for _, f := range s.Funcs {
		covered := false
		for _, c := range s.CFI {
			if f.Ranges[0].Address-c.Init.Address < c.Init.Size {
				covered = true
			}
		}
		if !covered {
			t.Errorf("FUNC %s at %#x has no STACK CFI", f.Name, f.Ranges[0].Address)
		}
	}
	t.Logf("%d functions, %d line rows checked", len(tr.funcs), checked)
}

func TestEndToEndC(t *testing.T) {
	bin := compile(t, "gcc", "prog.c")
	s, err := Dump(bin, dumpsyms.Options{Inlines: true})
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstDWARF(t, s, readTruth(t, bin))
	// parse's unlikely branch is moved to a cold part: a function of two
	// ranges, both written as FUNC records.
	var parse *dumpsyms.Function
	for i := range s.Funcs {
		if s.Funcs[i].Name == "parse" {
			parse = &s.Funcs[i]
		}
	}
	if parse == nil {
		t.Fatal("no FUNC parse")
	}
	if len(parse.Ranges) < 2 {
		t.Logf("parse has %d range(s); this gcc did not split it", len(parse.Ranges))
	}
	// square is inlined into sum_squares inlined into main.
	var origins []string
	for _, o := range s.Origins {
		origins = append(origins, o.Name)
	}
	for _, want := range []string{"square", "sum_squares"} {
		found := false
		for _, o := range origins {
			found = found || o == want
		}
		if !found {
			t.Errorf("no INLINE_ORIGIN %s (have %v)", want, origins)
		}
	}
	nested := false
	for _, f := range s.Funcs {
		for _, in := range f.Inlines {
			nested = nested || in.Depth > 0
		}
	}
	if !nested {
		t.Error("no nested INLINE records (square inside sum_squares)")
	}
}

func TestEndToEndCXX(t *testing.T) {
	bin := compile(t, "g++", "shapes.cc")
	s, err := Dump(bin, dumpsyms.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstDWARF(t, s, readTruth(t, bin))
	names := map[string]bool{}
	for _, f := range s.Funcs {
		names[f.Name] = true
	}
	for _, want := range []string{
		"geo::Shape::Perimeter(int) const",
		"geo::Shape::Count(int)",
		"geo::Area(int, int)",
		"geo::Area(double)",
		"int geo::Twice<int>(int)",
	} {
		if !names[want] {
			t.Errorf("no FUNC %q", want)
		}
	}
}

// TestEndToEndSplitDWARF checks split DWARF as gcc writes it without a
// package: loose GNU DWARF 4 .dwo files (GNU index forms) and DWARF 5 ones.
func TestEndToEndSplitDWARF(t *testing.T) {
	for _, version := range []string{"-gdwarf-4", "-gdwarf-5"} {
		t.Run(version, func(t *testing.T) {
			bin := compile(t, "gcc", "prog.c", version, "-gsplit-dwarf")
			if dwos, _ := filepath.Glob(filepath.Join(filepath.Dir(bin), "*.dwo")); len(dwos) == 0 {
				t.Skip("gcc wrote no .dwo file")
			}
			s, err := Dump(bin, dumpsyms.Options{Inlines: true})
			if err != nil {
				t.Fatal(err)
			}
			names := map[string]bool{}
			inlines := 0
			for _, f := range s.Funcs {
				names[f.Name] = true
				inlines += len(f.Inlines)
			}
			for _, want := range []string{"main", "parse", "fib"} {
				if !names[want] {
					t.Errorf("no FUNC %s (have %v)", want, names)
				}
			}
			if inlines == 0 {
				t.Error("no INLINE records from the split unit")
			}
			// The line records come from the skeleton's line table.
			fn, line, _ := lookup(s, s.Funcs[0].Ranges[0].Address)
			if fn == nil || line == nil || !strings.HasSuffix(line.file, "prog.c") {
				t.Errorf("no line record at the first function's start: %+v", line)
			}
		})
	}
}
