package elf

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
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
				if src, err := loadDWARF(f, &sectionReader{}); err == nil && src.units != nil {
					used++
				}
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
