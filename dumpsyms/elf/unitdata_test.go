package elf

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/internal/mmap"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// TestUnitAtATime dumps corpus files (DWARF 4 and 5, 32 and 64 bits, dwz,
// split DWARF, damaged line tables; Debian's libc except under -race and
// -short) with the DWARF read a
// unit at a time and with one dwarf.New over everything: the records and
// the warnings are the same.
func TestUnitAtATime(t *testing.T) {
	root := corpus.Path()
	type input struct {
		path string
		dirs []string
	}
	ins := []input{
		{path: "elf/x64-dw5/full/inline_chain"}, {path: "elf/x64-dw4/full/inline_chain"},
		{path: "elf/x86/full/libshapes.so"}, {path: "elf/arm64/full/deep_chain"},
		{path: "elf/x64-dw5/dwz/inline_chain"}, {path: "elf/x64-dw5/split/inline_chain"},
		{path: "hostile/elf-line-file-dir-index.elf"}, {path: "hostile/elf-dw5-line-dir-count-huge.elf"},
		{path: "debian/libc/libc.so.6", dirs: []string{"debian/libc/usr-lib-debug/.build-id/93"}},
	}
	if testing.Short() || raceBuild {
		ins = ins[:len(ins)-1]
	}
	// The records, then the warnings sorted (the call frame information is
	// read concurrently: its warnings come in any order among the others).
	dump := func(path string, dirs []string) string {
		var b strings.Builder
		var warns []string
		s, err := Dump(path, dumpsyms.Options{Inlines: true, DebugDirs: dirs, Warn: func(f string, a ...any) {
			warns = append(warns, fmt.Sprintf(f, a...))
		}})
		if err != nil {
			return "error: " + err.Error()
		}
		if err := s.Write(&b); err != nil {
			t.Fatal(err)
		}
		slices.Sort(warns)
		return b.String() + strings.Join(warns, "\n")
	}
	var units, fulls int
	unitHook = func(full bool) {
		if full {
			fulls++
		} else {
			units++
		}
	}
	defer func() { unitAtATime, unitHook = true, nil }()
	used := 0
	for _, in := range ins {
		path := corpus.File(t, in.path)
		var dirs []string
		for _, d := range in.dirs {
			dirs = append(dirs, filepath.Join(root, d))
		}
		unitAtATime = true
		units, fulls = 0, 0
		got := dump(path, dirs)
		if units == 0 || fulls > 0 && !strings.HasPrefix(in.path, "hostile/") {
			t.Errorf("%s: %d units read alone, %d Data over all units", in.path, units, fulls)
		}
		unitAtATime = false
		want := dump(path, dirs)
		if got != want {
			t.Errorf("%s: a unit at a time: %d bytes of output, against %d with dwarf.New over all units", in.path, len(got), len(want))
		}
		if !strings.Contains(want, "\nFUNC ") {
			t.Errorf("%s: no FUNC records", in.path)
		}
		// The file read a unit at a time when its DWARF allows it.
		if f, err := elf.Open(path); err == nil {
			if hasDWARF(f) {
				unitAtATime = true
				sr := &sectionReader{}
				if src, err := loadDWARF(f, sr); err == nil && src.units != nil {
					used++
				}
				sr.free()
			}
			f.Close()
		}
	}
	if used < 3 {
		t.Errorf("only %d files read a unit at a time", used)
	}
}

// TestUnitsReadable checks the cases unitsReadable leaves to dwarf.New.
func TestUnitsReadable(t *testing.T) {
	abbrev := []byte{1, 0x11, 1, 0x03, 0x08, 0, 0, 0}
	// A DWARF 4 unit: length, version, abbreviation offset, address size,
	// a DW_TAG_compile_unit with its DW_AT_name, two null entries.
	unit := []byte{12, 0, 0, 0, 4, 0, 0, 0, 0, 0, 8, 1, 'a', 0, 0, 0}
	info := append(append([]byte{}, unit...), unit...)
	le := binary.ByteOrder(binary.LittleEndian)
	if !unitsReadable(info, abbrev, le) {
		t.Errorf("two plain units: not readable a unit at a time")
	}
	if unitsReadable(nil, abbrev, le) || unitsReadable(info, nil, le) {
		t.Errorf("no .debug_info or no .debug_abbrev: readable")
	}
	bad := append([]byte{}, abbrev...)
	bad[4] = 0x02 // a form debug/dwarf does not know
	if unitsReadable(info, bad, le) {
		t.Errorf("an unknown form: readable")
	}
	if unitsReadable(info, abbrev[:3], le) {
		t.Errorf("a table cut in its entry: readable")
	}
	u5 := []byte{12, 0, 0, 0, 5, 0, 1, 8, 0, 0, 0, 0, 1, 'a', 0, 0}
	if !unitsReadable(append(append([]byte{}, u5...), u5...), abbrev, le) {
		t.Errorf("two DWARF 5 units: not readable a unit at a time")
	}
	// The second unit says DWARF 5 but shares the first one's table.
	if unitsReadable(append(append([]byte{}, unit...), u5...), abbrev, le) {
		t.Errorf("a table shared by units of versions 4 and 5: readable")
	}
}

// TestUnitPagesGivenBack walks a .debug_info of many units (a small
// program's units repeated) read a unit at a time from memory whose pages
// the walk gives back behind it, with and without a panic in a late unit
// (after which the walk reads .debug_info again, refilled): the functions
// are those of a walk with dwarf.New over everything.
func TestUnitPagesGivenBack(t *testing.T) {
	f, err := elf.Open(corpus.File(t, "elf/x64-dw5/full/inline_chain"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sr := &sectionReader{}
	sec := func(n string) []byte { return sr.data(f, ".debug_"+n) }
	one := sec("info")
	var info []byte
	for range 40 {
		info = append(info, one...)
	}
	sections := func() *unitSections {
		return &unitSections{abbrev: sec("abbrev"), info: info, line: sec("line"), str: sec("str"),
			addr: sec("addr"), lineStr: sec("line_str"), strOffsets: sec("str_offsets"), rnglists: sec("rnglists")}
	}
	u := sections()
	var seen func(e *dwarf.Entry)
	walk := func(units bool, panicAt dwarf.Offset) (string, *unitSections) {
		src := &dwarfSource{line: u.line, str: u.str, lineStr: u.lineStr, addr: u.addr, order: f.ByteOrder, abbrev: u.abbrev}
		var us *unitSections
		if units {
			b, free, err := mmap.Anon(len(info))
			if err != nil {
				t.Fatal(err)
			}
			defer free()
			us = sections()
			us.info = b
			us.refill = func() error { copy(b, info); return nil }
			us.refill()
			src.units, src.info = us, b
		} else {
			data, err := u.newData(info)
			if err != nil {
				t.Fatal(err)
			}
			src.data, src.info = data, info
		}
		var warns []string
		dieHook = func(e *dwarf.Entry) {
			if seen != nil {
				seen(e)
			}
			if e.Offset == panicAt && e.Tag != 0 {
				panic("at the chosen entry")
			}
		}
		defer func() { dieHook = nil }()
		dr := &dwarfReader{warn: func(f string, a ...any) { warns = append(warns, fmt.Sprintf(f, a...)) }, inlines: true, blockInlines: true,
			files: &fileTable{index: map[string]int32{}}}
		dr.read(src)
		return funcsText(dr.funcs) + strings.Join(warns, "\n"), us
	}
	old := releaseStep
	releaseStep = 1
	defer func() { releaseStep = old }()
	want, _ := walk(false, 0)
	got, us := walk(true, 0)
	if got != want {
		t.Errorf("a unit at a time, pages given back:\n%.2000s\nwith dwarf.New over all units:\n%.2000s", got, want)
	}
	if mmap.Supported && runtime.GOOS == "linux" && us.released == 0 {
		t.Errorf("no page of .debug_info given back")
	}
	// A panic in a subprogram of the 31st copy of the units.
	var at dwarf.Offset
	seen = func(e *dwarf.Entry) {
		if at == 0 && e.Tag == dwarf.TagSubprogram && int(e.Offset) > 30*len(one) {
			at = e.Offset
		}
	}
	walk(false, 0)
	seen = nil
	if at == 0 {
		t.Fatal("no subprogram in the 31st copy")
	}
	want, _ = walk(false, at)
	got, us = walk(true, at)
	if !strings.Contains(want, "at the chosen entry") {
		t.Errorf("no warning on the panic: %q", want)
	}
	if got != want {
		t.Errorf("a unit at a time, pages given back, panic at %#x:\n%.2000s\nwith dwarf.New over all units:\n%.2000s", at, got, want)
	}
	if us.full == nil || us.released != 0 {
		t.Errorf("after the panic: Data over all units %v, pages given back below %d (want a refilled .debug_info)", us.full != nil, us.released)
	}
}
