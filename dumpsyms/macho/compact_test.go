package macho

import (
	"bytes"
	"debug/macho"
	"encoding/binary"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// TestCompactUnwindCorpus checks that every function with a compact unwind
// entry in the corpus binaries has STACK CFI (its own rules, or its
// __eh_frame entry's in DWARF mode), and the rules of the frameless
// functions against their prologues (read with llvm-objdump's and x86asm's
// disassembly: big_frame: sub rsp, 0xbc8 (STACK_IND); many_regs: six
// pushes and push rax (STACK_IMMD)).
func TestCompactUnwindCorpus(t *testing.T) {
	root := filepath.Join(corpus.Dir(t), "macos")
	want := map[string]map[uint64]string{
		"built/libframeless-x86_64.dylib": {
			0x510: ".cfa: $rsp 3024 + .ra: .cfa -8 + ^",
			0x5f0: "$r12: .cfa -48 + ^ $r13: .cfa -40 + ^ $r14: .cfa -32 + ^ $r15: .cfa -24 + ^ $rbp: .cfa -16 + ^ $rbx: .cfa -56 + ^ .cfa: $rsp 64 + .ra: .cfa -8 + ^",
		},
		"built/hello-x86_64": {
			0x3e0: "$r14: .cfa -24 + ^ $rbp: .cfa -16 + ^ $rbx: .cfa -32 + ^ .cfa: $rbp 16 + .ra: .cfa -8 + ^",
		},
		"built/hello-arm64": {
			0x3d8: ".cfa: sp 0 + .ra: x30",
			0x46c: ".cfa: x29 16 + .ra: .cfa -8 + ^ x19: .cfa -24 + ^ x20: .cfa -32 + ^ x21: .cfa -40 + ^ x22: .cfa -48 + ^ x29: .cfa -16 + ^",
		},
		"built/libframeless-arm64.dylib": nil,
		"symbolic/crash":                 nil,
	}
	for rel, rules := range want {
		t.Run(strings.ReplaceAll(rel, "/", "_"), func(t *testing.T) {
			p := filepath.Join(root, rel)
			if _, err := os.Stat(p); err != nil {
				t.Skipf("%s: %v", p, err)
			}
			m, err := Dump(p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := map[uint64]string{}
			for _, c := range m.CFI {
				got[c.Init.Address] = c.Init.Rules
			}
			f, err := macho.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			b, err := f.Section("__unwind_info").Data()
			if err != nil {
				t.Fatal(err)
			}
			ents, err := ParseUnwindInfo(b)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, e := range ents {
				if e.Encoding&modeMask == 0 || e.End == e.Func {
					continue
				}
				n++
				if _, ok := got[uint64(e.Func)]; !ok {
					t.Errorf("function at %#x (encoding %#x): no STACK CFI", e.Func, e.Encoding)
				}
			}
			for a, r := range rules {
				if got[a] != r {
					t.Errorf("%#x: rules %q, want %q", a, got[a], r)
				}
			}
			t.Logf("%d compact unwind entries with unwind information, all with STACK CFI", n)
		})
	}
}

// encodePermutation is ld64's encoding of the registers a frameless
// function saved (compact_unwind_encoding.h's renumbering).
func encodePermutation(saved []uint32) uint32 {
	r := make([]uint32, len(saved))
	for i, s := range saved {
		less := uint32(0)
		for _, p := range saved[:i] {
			if p < s {
				less++
			}
		}
		r[i] = s - 1 - less
	}
	switch len(saved) {
	case 6, 5:
		return 120*r[0] + 24*r[1] + 6*r[2] + 2*r[3] + r[4]
	case 4:
		return 60*r[0] + 12*r[1] + 3*r[2] + r[3]
	case 3:
		return 20*r[0] + 4*r[1] + r[2]
	case 2:
		return 5*r[0] + r[1]
	case 1:
		return r[0]
	}
	return 0
}

// TestPermutation decodes every ordered choice of 1 to 6 of the six
// registers as ld64 encodes it.
func TestPermutation(t *testing.T) {
	var rec func(prefix []uint32, n int)
	count := 0
	rec = func(prefix []uint32, n int) {
		if len(prefix) == n {
			got, err := permutation(uint32(n), encodePermutation(prefix))
			if err != nil || !slices.Equal(got, prefix) {
				t.Fatalf("%v: decoded %v, %v", prefix, got, err)
			}
			count++
			return
		}
		for r := uint32(1); r <= 6; r++ {
			if !slices.Contains(prefix, r) {
				rec(append(slices.Clone(prefix), r), n)
			}
		}
	}
	for n := 1; n <= 6; n++ {
		rec(nil, n)
	}
	if _, err := permutation(7, 0); err == nil {
		t.Error("7 registers: no error")
	}
	t.Logf("%d register orders", count)
}

// unwindInfo builds an __unwind_info section: one common encoding, index
// entries (function offset, page offset) and the pages' bytes at their
// offsets.
func unwindInfo(index [][2]uint32, pages map[uint32][]byte, size int) []byte {
	b := make([]byte, size)
	le := binary.LittleEndian
	le.PutUint32(b, 1)
	le.PutUint32(b[4:], 28)
	le.PutUint32(b[8:], 1)
	le.PutUint32(b[28:], x86RBPFrame)
	le.PutUint32(b[20:], 32)
	le.PutUint32(b[24:], uint32(len(index)))
	for i, e := range index {
		le.PutUint32(b[32+12*i:], e[0])
		le.PutUint32(b[32+12*i+4:], e[1])
	}
	for off, p := range pages {
		copy(b[off:], p)
	}
	return b
}

func regularPage(ents ...[2]uint32) []byte {
	p := make([]byte, 8+8*len(ents))
	binary.LittleEndian.PutUint32(p, pageRegular)
	binary.LittleEndian.PutUint16(p[4:], 8)
	binary.LittleEndian.PutUint16(p[6:], uint16(len(ents)))
	for i, e := range ents {
		binary.LittleEndian.PutUint32(p[8+8*i:], e[0])
		binary.LittleEndian.PutUint32(p[12+8*i:], e[1])
	}
	return p
}

func compressedPage(encIdx []uint8, offs []uint32) []byte {
	p := make([]byte, 12+4*len(offs))
	binary.LittleEndian.PutUint32(p, pageCompressed)
	binary.LittleEndian.PutUint16(p[4:], 12)
	binary.LittleEndian.PutUint16(p[6:], uint16(len(offs)))
	binary.LittleEndian.PutUint16(p[8:], uint16(len(p)))
	for i, o := range offs {
		binary.LittleEndian.PutUint32(p[12+4*i:], uint32(encIdx[i])<<24|o)
	}
	return p
}

func TestParseUnwindInfo(t *testing.T) {
	// Good: a regular page and a compressed one.
	b := unwindInfo([][2]uint32{{0x1000, 0x100}, {0x2000, 0x200}, {0x3000, 0}},
		map[uint32][]byte{0x100: regularPage([2]uint32{0x1000, x86StackImmd | 2<<16}, [2]uint32{0x1800, 0}),
			0x200: compressedPage([]uint8{0, 0}, []uint32{0, 0x40})}, 0x300)
	ents, err := ParseUnwindInfo(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []UnwindEntry{{0x1000, 0x1800, x86StackImmd | 2<<16}, {0x1800, 0x2000, 0}, {0x2000, 0x2040, x86RBPFrame}, {0x2040, 0x3000, x86RBPFrame}}
	if !slices.Equal(ents, want) {
		t.Errorf("entries %x, want %x", ents, want)
	}
	bad := []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "header truncated"},
		{"page past the section", unwindInfo([][2]uint32{{0x1000, 0x1000}, {0x2000, 0}}, nil, 0x100), "past the"},
		{"page listed twice", unwindInfo([][2]uint32{{0x1000, 0x80}, {0x1800, 0x80}, {0x2000, 0}},
			map[uint32][]byte{0x80: regularPage([2]uint32{0x1000, 0})}, 0x100), "already listed"},
		{"index past the section", func() []byte {
			b := unwindInfo(nil, nil, 0x40)
			binary.LittleEndian.PutUint32(b[24:], 0xffffffff)
			return b
		}(), "index entries"},
		{"entries past the section", unwindInfo([][2]uint32{{0x1000, 0x80}, {0x2000, 0}},
			map[uint32][]byte{0x80: {pageRegular, 0, 0, 0, 8, 0, 0xff, 0xff}}, 0x100), "run past"},
		{"encoding index", unwindInfo([][2]uint32{{0x1000, 0x80}, {0x2000, 0}},
			map[uint32][]byte{0x80: compressedPage([]uint8{9}, []uint32{0})}, 0x100), "encoding index 9"},
		{"page kind", unwindInfo([][2]uint32{{0x1000, 0x80}, {0x2000, 0}}, map[uint32][]byte{0x80: {7}}, 0x100), "of kind 7"},
		{"index out of order", unwindInfo([][2]uint32{{0x2000, 0x80}, {0x1000, 0}},
			map[uint32][]byte{0x80: regularPage()}, 0x100), "after the next"},
	}
	for _, c := range bad {
		if _, err := ParseUnwindInfo(c.b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

func FuzzParseUnwindInfo(f *testing.F) {
	f.Add(unwindInfo([][2]uint32{{0x1000, 0x100}, {0x2000, 0x200}, {0x3000, 0}},
		map[uint32][]byte{0x100: regularPage([2]uint32{0x1000, x86StackInd | 2<<16 | 3<<10 | 7}),
			0x200: compressedPage([]uint8{0, 0}, []uint32{0, 0x40})}, 0x300))
	f.Fuzz(func(t *testing.T, b []byte) {
		ents, err := ParseUnwindInfo(b)
		if err != nil {
			return
		}
		for _, e := range ents {
			for _, cpu := range []macho.Cpu{macho.CpuAmd64, macho.CpuArm64, macho.Cpu386, macho.CpuArm} {
				Rules(cpu, e.Encoding, e.Func, func(uint32) (uint32, bool) { return 0x100, true })
			}
		}
	})
}

// FuzzParseCompactUnwind decodes arbitrary __LD,__compact_unwind
// sections of 32- and 64-bit objects and their rules.
func FuzzParseCompactUnwind(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0x52, 0, 0, 0, 0x16, 0x11, 0x08, 0x02, 0, 0, 0, 0, 0, 0, 0, 0}, false)
	f.Fuzz(func(t *testing.T, b []byte, is64 bool) {
		ents, err := ParseCompactUnwind(b, is64, func(off uint32) uint64 { return uint64(off) * 3 })
		if err != nil {
			return
		}
		for _, e := range ents {
			if e.End < e.Func {
				t.Fatalf("entry %+v ends before it starts", e)
			}
			Rules(macho.Cpu386, e.Encoding, e.Func, func(uint32) (uint32, bool) { return 0x100, true })
			Rules(macho.CpuArm, e.Encoding, e.Func, nil)
		}
	})
}

// FuzzDump runs the whole reader on a mutated Mach-O file, read from
// memory (dumpBytes: no temporary file, no dSYM lookup). The seeds are
// small files of each shape packed to their contents (fuzzSeeds: 3 to 8
// KB, not the corpus's 9 to 17 KB files with their page padding); the
// parsers it goes through have their own faster targets (FuzzParseUnwindInfo,
// FuzzParseCompactUnwind, FuzzExactX86 here, FuzzDWARF and FuzzCFI for the
// ELF reader's DWARF and CFI).
func FuzzDump(f *testing.F) {
	seeds := fuzzSeeds(f)
	for _, name := range slices.Sorted(maps.Keys(seeds)) {
		f.Add(seeds[name])
	}
	f.Add(fatHeader(1, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := dumpBytes("f", b, Options{Options: dumpsyms.Options{Inlines: true}, Exact: len(b)%2 == 0})
		if err == nil {
			m.Write(&bytes.Buffer{})
		}
	})
}
