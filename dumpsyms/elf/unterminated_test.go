package elf

import (
	"debug/dwarf"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestUnterminatedAbbrevCode: a unit that ends in an unterminated LEB128
// abbreviation code made debug/dwarf's Reader return null entries without
// moving on, and the walk loop forever (through dieReader, which hands such
// a DIE to the Reader, and without it).
func TestUnterminatedAbbrevCode(t *testing.T) {
	abbrev := []byte{1, 0x11, 1, 0x03, 0x08, 0, 0, 0} // 1: compile_unit, children, name: string
	info := []byte{12, 0, 0, 0, 4, 0, 0, 0, 0, 0, 8, 1, 'a', 0, 0x80, 0x80}
	d, err := dwarf.New(abbrev, nil, nil, info, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, withDIEReader := range []bool{false, true} {
		var warnings []string
		dr := &dwarfReader{warn: func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) },
			inlines: true, blockInlines: true, files: &fileTable{index: map[string]int32{}}}
		src := &dwarfSource{data: d, order: binary.LittleEndian}
		if withDIEReader {
			src.info, src.abbrev = info, abbrev
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			dr.read(src)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("dieReader %v: the walk did not end", withDIEReader)
		}
		if !strings.Contains(strings.Join(warnings, "\n"), "unterminated abbreviation code") {
			t.Errorf("dieReader %v: warnings %q, want one on the unterminated abbreviation code", withDIEReader, warnings)
		}
	}
}
