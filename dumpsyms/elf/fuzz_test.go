package elf

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// FuzzDWARF walks fuzzed DWARF sections (.debug_abbrev, .debug_info,
// .debug_line, .debug_str) as the dumper does: names, ranges, lines with
// Breakpad's file names, inlines; and feeds the .dwp readers (unit index,
// GNU form rewrite) the same bytes.
func FuzzDWARF(f *testing.F) {
	// Seeds: the sections of a small real program, when the corpus is there.
	for _, p := range []string{"elf/x64-dw4/full/inline_chain", "elf/x86/full/inline_chain"} {
		if ef, err := elf.Open(filepath.Join(corpus.Path(), p)); err == nil {
			f.Add((&sectionReader{}).data(ef, ".debug_abbrev"), (&sectionReader{}).data(ef, ".debug_info"), (&sectionReader{}).data(ef, ".debug_line"), (&sectionReader{}).data(ef, ".debug_str"))
			ef.Close()
		}
	}
	f.Add([]byte{1, 0x11, 1, 0x03, 0x08, 0, 0, 0}, []byte{12, 0, 0, 0, 4, 0, 0, 0, 0, 0, 8, 1, 'a', 0, 0}, []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, abbrev, info, line, str []byte) {
		d, err := dwarf.New(abbrev, nil, nil, info, line, nil, nil, str)
		if err != nil {
			return
		}
		files := &fileTable{index: map[string]int32{}}
		dr := &dwarfReader{warn: func(string, ...any) {}, inlines: true, blockInlines: true, files: files}
		dr.read(&dwarfSource{data: d, line: line, str: str, order: binary.LittleEndian})
		// Again through dieReader.
		dr = &dwarfReader{warn: func(string, ...any) {}, inlines: true, blockInlines: true, files: files}
		dr.read(&dwarfSource{data: d, line: line, str: str, order: binary.LittleEndian, info: info, abbrev: abbrev})
		want := funcsText(dr.funcs)
		// Again a unit at a time, when the sections allow it: the same
		// functions.
		if unitsReadable(info, abbrev, binary.LittleEndian) {
			dr = &dwarfReader{warn: func(string, ...any) {}, inlines: true, blockInlines: true, files: files}
			dr.read(&dwarfSource{units: &unitSections{abbrev: abbrev, info: info, line: line, str: str}, line: line, str: str, order: binary.LittleEndian, info: info, abbrev: abbrev})
			if got := funcsText(dr.funcs); got != want {
				t.Errorf("a unit at a time:\n%s\nwith dwarf.New over all units:\n%s", got, want)
			}
		}
		lineFileNames(line, 0, binary.LittleEndian, ".", str, str)
		// The .dwp pieces: a unit index and the abbreviation rewrite.
		parseCUIndex(line, binary.LittleEndian)
		if ab, err := rewriteGNUForms(abbrev); err == nil {
			dwarf.New(ab, nil, nil, info, nil, nil, nil, str)
		}
	})
}

// FuzzDump runs the whole dumper on a fuzzed ELF file. To explore, each
// run must be cheap: the seed is a small ELF file of the corpus (27 KB; the
// 67 KB arm64 one made every mutation slower), the decompression floors
// are lowered to 1 MiB (a mutated compressed section declaring a few MiB
// took milliseconds to inflate at the real 64 MiB floor), and no temporary
// directory is made per run. The expensive parts have their own targets:
// the DWARF reader FuzzDWARF, the xz-compressed .gnu_debugdata (whose
// decoder allocates its dictionary per run) FuzzMiniDebugInfo.
func FuzzDump(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join(corpus.Path(), "elf/x64-dw4/full/deep_chain")); err == nil {
		f.Add(b)
	}
	minInflateLimit, maxMiniDebugInfo = 1<<20, 1<<20
	f.Fuzz(fuzzDump)
}

// FuzzMiniDebugInfo is FuzzDump on a file with an xz-compressed
// .gnu_debugdata (14 KB).
func FuzzMiniDebugInfo(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join(corpus.Path(), "elf/x86/minidebuginfo/libshapes.so")); err == nil {
		f.Add(b)
	}
	minInflateLimit, maxMiniDebugInfo = 1<<20, 1<<20
	f.Fuzz(fuzzDump)
}

// fuzzDump dumps data as an image, then as a file.
func fuzzDump(t *testing.T, data []byte) {
	// As an image in memory (a vDSO in a dump), then as a file.
	if s, err := DumpImage(bytes.NewReader(data), dumpsyms.Options{Name: "fuzzed"}); err == nil {
		if err := s.Write(io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	ef, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return
	}
	// A path in no directory: no debug file is found beside it.
	s, err := dumpFile(ef, "/nonexistent-gobreakpad-fuzz/fuzzed", dumpsyms.Options{Inlines: true})
	if err != nil {
		return
	}
	if err := s.Write(io.Discard); err != nil {
		t.Fatal(err)
	}
}

// funcsText renders the walk's functions with their names, ranges, lines
// and inlines, for comparing two walks.
func funcsText(funcs []*funcRec) string {
	var b strings.Builder
	for _, fn := range funcs {
		fmt.Fprintf(&b, "%s %v %v\n", qualifiedName(fn.node), fn.ranges, fn.lines)
		for _, in := range fn.inlines {
			fmt.Fprintf(&b, "  %s %d %d %d %v\n", nameOf(in.origin), in.depth, in.callLine, in.callFile, in.ranges)
		}
	}
	return b.String()
}
