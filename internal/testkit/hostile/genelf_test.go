//go:build linux

package hostile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ulikunitz/xz"
)

// elfSection is a section of a generated ELF file.
type elfSection struct {
	name  string
	typ   uint32
	flags uint64
	addr  uint64
	data  []byte
}

// writeELF writes a little-endian x86-64 ELF shared object holding the
// sections (after the null section; .shstrtab is added) into the test's
// temporary directory and returns its path.
func writeELF(t *testing.T, name string, secs []elfSection) string {
	t.Helper()
	le := binary.LittleEndian
	var shstr bytes.Buffer
	shstr.WriteByte(0)
	secs = append(secs, elfSection{name: ".shstrtab", typ: 3})
	nameOff := make([]uint32, len(secs))
	for i, s := range secs {
		nameOff[i] = uint32(shstr.Len())
		shstr.WriteString(s.name + "\x00")
	}
	secs[len(secs)-1].data = shstr.Bytes()
	var body bytes.Buffer
	body.Write(make([]byte, 64))
	offs := make([]uint64, len(secs))
	for i, s := range secs {
		for body.Len()%8 != 0 {
			body.WriteByte(0)
		}
		offs[i] = uint64(body.Len())
		body.Write(s.data)
	}
	for body.Len()%8 != 0 {
		body.WriteByte(0)
	}
	shoff := uint64(body.Len())
	body.Write(make([]byte, 64)) // the null section
	for i, s := range secs {
		var h [64]byte
		le.PutUint32(h[0:], nameOff[i])
		le.PutUint32(h[4:], s.typ)
		le.PutUint64(h[8:], s.flags)
		le.PutUint64(h[16:], s.addr)
		le.PutUint64(h[24:], offs[i])
		le.PutUint64(h[32:], uint64(len(s.data)))
		le.PutUint64(h[48:], 1)
		body.Write(h[:])
	}
	b := body.Bytes()
	copy(b, "\x7fELF\x02\x01\x01")
	le.PutUint16(b[16:], 3)  // ET_DYN
	le.PutUint16(b[18:], 62) // EM_X86_64
	le.PutUint32(b[20:], 1)
	le.PutUint64(b[40:], shoff)
	le.PutUint16(b[52:], 64)
	le.PutUint16(b[54:], 56)
	le.PutUint16(b[58:], 64)
	le.PutUint16(b[60:], uint16(len(secs)+1))
	le.PutUint16(b[62:], uint16(len(secs)))
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const (
	shtProgbits   = 1
	shfAlloc      = 0x2
	shfExec       = 0x4
	shfCompressed = 0x800
	textAddr      = 0x1000
)

// textSection is n bytes of code (int3) at textAddr.
func textSection(n int) elfSection {
	return elfSection{name: ".text", typ: shtProgbits, flags: shfAlloc | shfExec, addr: textAddr, data: bytes.Repeat([]byte{0xcc}, n)}
}

// compressed is an SHF_COMPRESSED section: its ELF64 compression header
// (type 1 zlib, 2 zstd) declaring size, then payload.
func compressed(name string, typ uint32, size uint64, payload []byte) elfSection {
	h := make([]byte, 24)
	binary.LittleEndian.PutUint32(h, typ)
	binary.LittleEndian.PutUint64(h[8:], size)
	binary.LittleEndian.PutUint64(h[16:], 1)
	return elfSection{name: name, typ: shtProgbits, flags: shfCompressed, data: append(h, payload...)}
}

// zstdZeros is a zstd frame (no declared content size) of n zero bytes
// made of RLE blocks: 4 bytes per 128 KiB.
func zstdZeros(n int) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58} // magic; single segment off, window 2^(10+11)
	const block = 128 << 10
	for n > 0 {
		k := min(n, block)
		n -= k
		h := uint32(k)<<3 | 1<<1 // RLE block
		if n == 0 {
			h |= 1 // last
		}
		b = append(b, byte(h), byte(h>>8), byte(h>>16), 0)
	}
	return b
}

// TestGeneratedCompressionBombs runs dump_syms on ELF files whose
// .debug_info is a zstd bomb (4 GiB of zeros declared, 128 KiB of RLE
// blocks) and whose .gnu_debugdata is an xz bomb (72 MiB of zeros): each
// section is refused with a message naming it and the sizes, the rest of
// the file dumped.
func TestGeneratedCompressionBombs(t *testing.T) {
	zst := writeELF(t, "zstd-bomb.elf", []elfSection{textSection(16),
		compressed(".debug_info", 2, 4<<30, zstdZeros(4<<30)),
		compressed(".debug_abbrev", 2, 1<<40, zstdZeros(1<<20))})
	run{name: "zstd bomb", prog: "dump_syms", args: []string{"-v", zst},
		stderr: []string{"section .debug_info: compressed 131102 bytes declare 4294967296 decompressed, over the limit of 67108864"},
		stdout: []string{"MODULE Linux x86_64"}}.do(t)

	// A zstd section declaring less than it holds: debug/elf reads only
	// the declared size.
	liar := writeELF(t, "zstd-liar.elf", []elfSection{textSection(16),
		compressed(".debug_info", 2, 16, zstdZeros(1<<30))})
	run{name: "zstd section holding more than it declares", prog: "dump_syms", args: []string{"-v", liar},
		stdout: []string{"MODULE Linux x86_64"}}.do(t)

	// 72 concatenated xz streams of 1 MiB of zeros each (encoding 72 MiB
	// once would take the test seconds, minutes under -race).
	var one bytes.Buffer
	w, err := xz.NewWriter(&one)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(make([]byte, 1<<20))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	xzb := bytes.NewBuffer(nil)
	for range 72 {
		xzb.Write(one.Bytes())
	}
	xzf := writeELF(t, "xz-bomb.elf", []elfSection{textSection(16),
		{name: ".gnu_debugdata", typ: shtProgbits, data: xzb.Bytes()}})
	run{name: fmt.Sprintf("xz bomb (%d bytes)", xzb.Len()), prog: "dump_syms", args: []string{"-v", xzf},
		stderr: []string{".gnu_debugdata: " + fmt.Sprint(xzb.Len()) + " compressed bytes decompress to more than the limit of 67108864", "skipped"},
		stdout: []string{"MODULE Linux x86_64"}}.do(t)
}

// DWARF vocabulary for the generated units.
const (
	tagClass    = 0x02
	tagBlock    = 0x0b
	tagStruct   = 0x13
	tagUnion    = 0x17
	tagInlined  = 0x1d
	tagSub      = 0x2e
	tagNS       = 0x39
	tagCU       = 0x11
	formAddr    = 0x01
	formData1   = 0x0b
	formData2   = 0x05
	formData4   = 0x06
	formString  = 0x08
	formRef4    = 0x13
	attrName    = 0x03
	attrLang    = 0x13
	attrLow     = 0x11
	attrHigh    = 0x12
	attrInline  = 0x20
	attrOrigin  = 0x31
	attrCallF   = 0x58
	attrCallL   = 0x59
	langCPlusPl = 0x04
)

// Abbreviation codes of dwarfAbbrev.
const (
	abCU = 1 + iota
	abScope
	abBlock
	abFunc     // with code and children
	abLeaf     // with code, no children
	abAbstract // an inlined function's abstract instance, no code
	abInlined
	abClass
	abStruct
	abUnion
)

// dwarfAbbrev is the abbreviation table of the generated units.
func dwarfAbbrev() []byte {
	var b []byte
	ab := func(code, tag int, children bool, attrs ...int) {
		b = append(b, byte(code), byte(tag))
		if children {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		for _, a := range attrs {
			b = append(b, byte(a))
		}
		b = append(b, 0, 0)
	}
	ab(abCU, tagCU, true, attrName, formString, attrLang, formData2)
	ab(abScope, tagNS, true, attrName, formString)
	ab(abBlock, tagBlock, true, attrLow, formAddr, attrHigh, formData4)
	ab(abFunc, tagSub, true, attrName, formString, attrLow, formAddr, attrHigh, formData4)
	ab(abLeaf, tagSub, false, attrName, formString, attrLow, formAddr, attrHigh, formData4)
	ab(abAbstract, tagSub, false, attrName, formString, attrInline, formData1)
	ab(abInlined, tagInlined, true, attrOrigin, formRef4, attrLow, formAddr, attrHigh, formData4, attrCallF, formData1, attrCallL, formData1)
	ab(abClass, tagClass, true, attrName, formString)
	ab(abStruct, tagStruct, true, attrName, formString)
	ab(abUnion, tagUnion, true, attrName, formString)
	return append(b, 0)
}

// dieWriter builds one DWARF 4 unit.
type dieWriter struct{ b []byte }

func newUnit() *dieWriter {
	w := &dieWriter{b: []byte{0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 8}}
	w.code(abCU)
	w.str("gen.cc")
	w.b = binary.LittleEndian.AppendUint16(w.b, langCPlusPl)
	return w
}
func (w *dieWriter) code(c int)        { w.b = append(w.b, byte(c)) }
func (w *dieWriter) str(s string)      { w.b = append(append(w.b, s...), 0) }
func (w *dieWriter) addr(a uint64)     { w.b = binary.LittleEndian.AppendUint64(w.b, a) }
func (w *dieWriter) u32(v uint32)      { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *dieWriter) end(n int)         { w.b = append(w.b, make([]byte, n)...) }
func (w *dieWriter) offset() uint32    { return uint32(len(w.b)) }
func (w *dieWriter) code2(lo, n int64) { w.addr(uint64(lo)); w.u32(uint32(n)) }

// bytes closes the unit (its own null entry) and sets its length.
func (w *dieWriter) bytes() []byte {
	w.end(1)
	binary.LittleEndian.PutUint32(w.b, uint32(len(w.b)-4))
	return w.b
}

// dwarfELF writes an ELF file of n+64 bytes of code and the unit.
func dwarfELF(t *testing.T, name string, n int, unit []byte) string {
	return writeELF(t, name, []elfSection{textSection(n + 64),
		{name: ".debug_abbrev", typ: shtProgbits, data: dwarfAbbrev()},
		{name: ".debug_info", typ: shtProgbits, data: unit}})
}

// TestGeneratedDeepNesting runs dump_syms -d on units nesting each DIE kind
// that can nest 30,000 deep: namespaces, classes, structures, unions around
// a function; lexical blocks and inlined subroutines inside a function;
// functions (each with code) inside functions. Time, memory and output stay
// linear in the depth.
func TestGeneratedDeepNesting(t *testing.T) {
	const depth = 30000
	for _, c := range []struct {
		kind string
		code int
	}{{"namespace", abScope}, {"class", abClass}, {"struct", abStruct}, {"union", abUnion}} {
		w := newUnit()
		for range depth {
			w.code(c.code)
			w.str("s")
		}
		w.code(abLeaf)
		w.str("f")
		w.code2(textAddr, 16)
		w.end(depth)
		p := dwarfELF(t, c.kind+".elf", 16, w.bytes())
		run{name: c.kind + " nesting", prog: "dump_syms", args: []string{"-d", p},
			stdout: []string{"FUNC 1000 10 0 s::s::s::"}, check: func(t *testing.T, out string) {
				if n := strings.Count(out, "s::"); n != depth {
					t.Errorf("the function's name has %d scopes, want %d", n, depth)
				}
			}}.do(t)
	}

	// Lexical blocks in a function, around an inline.
	{
		w := newUnit()
		origin := w.offset()
		w.code(abAbstract)
		w.str("g")
		w.b = append(w.b, 1)
		w.code(abFunc)
		w.str("f")
		w.code2(textAddr, 16)
		for range depth {
			w.code(abBlock)
			w.code2(textAddr, 16)
		}
		w.code(abInlined)
		w.u32(origin)
		w.code2(textAddr+4, 4)
		w.b = append(w.b, 0, 7)
		w.end(1 + depth + 1)
		p := dwarfELF(t, "blocks.elf", 16, w.bytes())
		run{name: "lexical block nesting", prog: "dump_syms", args: []string{"-d", p},
			stdout: []string{"FUNC 1000 10 0 f\n", "INLINE_ORIGIN 0 g\n", "INLINE 0 7 -1 0 1004 4\n"}}.do(t)
	}

	// Inlined subroutines in inlined subroutines: an INLINE record per
	// level, each one line.
	{
		w := newUnit()
		origin := w.offset()
		w.code(abAbstract)
		w.str("g")
		w.b = append(w.b, 1)
		w.code(abFunc)
		w.str("f")
		w.code2(textAddr, depth+16)
		for i := range depth {
			w.code(abInlined)
			w.u32(origin)
			w.code2(textAddr+int64(i), int64(depth-i))
			w.b = append(w.b, 0, 7)
		}
		w.end(depth + 1)
		p := dwarfELF(t, "inlines.elf", depth+16, w.bytes())
		run{name: "inlined subroutine nesting", prog: "dump_syms", args: []string{"-d", p}, maxOut: 2 << 20,
			stdout: []string{"INLINE 0 7 -1 0 1000 7530\n", "INLINE 1 7 -1 0 1001 752f\n"}, check: func(t *testing.T, out string) {
				if n := strings.Count(out, "\nINLINE "); n != depth {
					t.Errorf("%d INLINE records, want %d", n, depth)
				}
			}}.do(t)
	}

	// Functions, each with code, in functions: names are cut to their
	// last maxNestedName (1 KiB) bytes of enclosing names, with a warning;
	// output about 1 KiB per function rather than O(depth) (2.7 GB).
	{
		w := newUnit()
		for i := range depth {
			w.code(abFunc)
			w.str("f")
			w.code2(textAddr+int64(i), 1)
		}
		w.end(depth)
		p := dwarfELF(t, "functions.elf", depth, w.bytes())
		run{name: "function nesting", prog: "dump_syms", args: []string{"-v", "-d", p}, maxOut: 40 << 20,
			stdout: []string{"FUNC 1000 1 0 f\n", "FUNC 1001 1 0 f::f\n", "FUNC 1258 1 0 ..."},
			stderr: []string{"functions nested in functions have enclosing names over 1024 bytes: cut to their last 1024 bytes"}}.do(t)
	}
}
