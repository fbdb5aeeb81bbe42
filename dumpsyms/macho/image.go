package macho

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"encoding/binary"
	"fmt"
	"strings"
)

// The ELF reader (dumpsyms/elf) reads DWARF, symbol tables and call frame
// information; the Mach-O reader shares all of that code by handing it an
// ELF image of the Mach-O data it needs: the Mach-O sections under their
// ELF names at their addresses (__debug_info as .debug_info, __eh_frame as
// .eh_frame, ...), the segments as PT_LOAD program headers (so the first,
// __TEXT, is the address records are relative to, as in Breakpad's Mac
// dump_syms), and the symbol table's section symbols as .symtab functions.
// The image holds copies of the sections' bytes, not the whole file.

// elfSection is one section of the image.
type elfSection struct {
	name   string
	typ    elf.SectionType
	addr   uint64
	data   []byte
	nobits uint64 // the size of a SHT_NOBITS section
	link   uint32
	info   uint32
	entsz  uint64
}

// elfSymbol is one symbol of the image's .symtab.
type elfSymbol struct {
	name  string
	value uint64
}

type elfImage struct {
	machine  elf.Machine
	segments []*macho.Segment
	sections []elfSection
	symbols  []elfSymbol
	buildID  []byte
}

// elfName returns the ELF name of a Mach-O section, "" for those the ELF
// reader has no use for.
func elfName(seg, sect string) string {
	switch {
	case sect == "__text" && seg == "__TEXT":
		return ".text"
	case sect == "__eh_frame":
		return ".eh_frame"
	case sect == "__got":
		return ".got"
	case sect == "__debug_str_offs": // Mach-O names stop at 16 bytes
		return ".debug_str_offsets"
	case seg == "__DWARF" && strings.HasPrefix(sect, "__debug_"):
		return "." + sect[2:]
	}
	return ""
}

// elfLayout is the sizes of one ELF class's structures and of its word
// (addresses, offsets, sizes).
type elfLayout struct {
	class                             elf.Class
	word, ehsize, phsize, shsize, sym uint64
}

var (
	layout64 = elfLayout{elf.ELFCLASS64, 8, 64, 56, 64, 24}
	layout32 = elfLayout{elf.ELFCLASS32, 4, 52, 32, 40, 16}
)

// bytes lays the image out: header, program headers, section contents,
// section headers. The image is ELFCLASS32 for 32-bit machines (i386,
// ARM: their DWARF and CFI use 4-byte addresses, as the ELF reader takes
// them from the class), ELFCLASS64 otherwise.
func (im *elfImage) bytes() []byte {
	lay := layout64
	if im.machine == elf.EM_386 || im.machine == elf.EM_ARM {
		lay = layout32
	}
	le := binary.LittleEndian
	// word writes a class-sized word (addresses, offsets, sizes).
	word := func(b []byte, v uint64) {
		if lay.class == elf.ELFCLASS32 {
			le.PutUint32(b, uint32(v))
		} else {
			le.PutUint64(b, v)
		}
	}
	secs := []elfSection{{}} // SHT_NULL
	secs = append(secs, im.sections...)
	if im.buildID != nil {
		var n bytes.Buffer
		binary.Write(&n, binary.LittleEndian, [3]uint32{4, uint32(len(im.buildID)), 3 /* NT_GNU_BUILD_ID */})
		n.WriteString("GNU\x00")
		n.Write(im.buildID)
		secs = append(secs, elfSection{name: ".note.gnu.build-id", typ: elf.SHT_NOTE, data: n.Bytes()})
	}
	// .symtab, .strtab
	var str bytes.Buffer
	str.WriteByte(0)
	var sym bytes.Buffer
	sym.Write(make([]byte, lay.sym))
	textIndex := uint16(1)
	for i, s := range secs {
		if s.name == ".text" {
			textIndex = uint16(i)
		}
	}
	info := byte(elf.STB_GLOBAL)<<4 | byte(elf.STT_FUNC)
	e := make([]byte, lay.sym) // one entry's bytes, reused
	for _, s := range im.symbols {
		clear(e)
		le.PutUint32(e[0:], uint32(str.Len()))
		if lay.class == elf.ELFCLASS32 { // name, value, size, info, other, shndx
			le.PutUint32(e[4:], uint32(s.value))
			e[12] = info
			le.PutUint16(e[14:], textIndex)
		} else { // name, info, other, shndx, value, size
			e[4] = info
			le.PutUint16(e[6:], textIndex)
			le.PutUint64(e[8:], s.value)
		}
		sym.Write(e)
		str.WriteString(s.name)
		str.WriteByte(0)
	}
	symIdx := uint32(len(secs))
	secs = append(secs, elfSection{name: ".symtab", typ: elf.SHT_SYMTAB, data: sym.Bytes(), link: symIdx + 1, info: 1, entsz: lay.sym},
		elfSection{name: ".strtab", typ: elf.SHT_STRTAB, data: str.Bytes()})
	var shstr bytes.Buffer
	shstr.WriteByte(0)
	nameOff := make([]uint32, len(secs)+1)
	for i, s := range secs {
		if i > 0 {
			nameOff[i] = uint32(shstr.Len())
			shstr.WriteString(s.name)
			shstr.WriteByte(0)
		}
	}
	nameOff[len(secs)] = uint32(shstr.Len())
	shstr.WriteString(".shstrtab\x00")
	secs = append(secs, elfSection{name: ".shstrtab", typ: elf.SHT_STRTAB, data: shstr.Bytes()})

	var loads []*macho.Segment
	for _, s := range im.segments {
		if s.Name == "__PAGEZERO" || s.Memsz == 0 {
			continue
		}
		loads = append(loads, s)
	}
	phoff := lay.ehsize
	off := phoff + uint64(len(loads))*lay.phsize
	offs := make([]uint64, len(secs))
	for i, s := range secs {
		off = (off + 7) &^ 7
		offs[i] = off
		off += uint64(len(s.data))
	}
	shoff := (off + 7) &^ 7
	out := make([]byte, shoff+uint64(len(secs))*lay.shsize)
	copy(out, "\x7fELF")
	out[4], out[5], out[6] = byte(lay.class), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	le.PutUint16(out[16:], uint16(elf.ET_DYN))
	le.PutUint16(out[18:], uint16(im.machine))
	le.PutUint32(out[20:], uint32(elf.EV_CURRENT))
	// e_entry, e_phoff, e_shoff are words; the rest follows them.
	w := lay.word
	word(out[24+w:], phoff)
	word(out[24+2*w:], shoff)
	rest := out[24+3*w+4:] // after e_flags
	le.PutUint16(rest[0:], uint16(lay.ehsize))
	le.PutUint16(rest[2:], uint16(lay.phsize))
	le.PutUint16(rest[4:], uint16(len(loads)))
	le.PutUint16(rest[6:], uint16(lay.shsize))
	le.PutUint16(rest[8:], uint16(len(secs)))
	le.PutUint16(rest[10:], uint16(len(secs)-1))
	for i, s := range loads {
		p := out[phoff+uint64(i)*lay.phsize:]
		le.PutUint32(p[0:], uint32(elf.PT_LOAD))
		if lay.class == elf.ELFCLASS32 { // type, offset, vaddr, paddr, filesz, memsz, flags, align
			le.PutUint32(p[8:], uint32(s.Addr))
			le.PutUint32(p[12:], uint32(s.Addr))
			le.PutUint32(p[20:], uint32(s.Memsz))
			le.PutUint32(p[24:], uint32(elf.PF_R))
			le.PutUint32(p[28:], 0x1000)
		} else { // type, flags, offset, vaddr, paddr, filesz, memsz, align
			le.PutUint32(p[4:], uint32(elf.PF_R))
			le.PutUint64(p[16:], s.Addr)
			le.PutUint64(p[24:], s.Addr)
			le.PutUint64(p[40:], s.Memsz)
			le.PutUint64(p[48:], 0x1000)
		}
	}
	for i, s := range secs {
		copy(out[offs[i]:], s.data)
		if i == 0 {
			continue
		}
		h := out[shoff+uint64(i)*lay.shsize:]
		le.PutUint32(h[0:], nameOff[i])
		le.PutUint32(h[4:], uint32(s.typ))
		// flags, addr, offset, size are words; link, info are 32-bit;
		// addralign, entsize words.
		var flags uint64
		if s.typ == elf.SHT_PROGBITS || s.typ == elf.SHT_NOBITS {
			flags = uint64(elf.SHF_ALLOC)
		}
		size := uint64(len(s.data))
		if s.typ == elf.SHT_NOBITS {
			size = s.nobits
		}
		word(h[8:], flags)
		word(h[8+w:], s.addr)
		word(h[8+2*w:], offs[i])
		word(h[8+3*w:], size)
		le.PutUint32(h[8+4*w:], s.link)
		le.PutUint32(h[12+4*w:], s.info)
		word(h[16+4*w:], 1)
		word(h[16+5*w:], s.entsz)
	}
	return out
}

// elfMachine returns the ELF machine of a Mach-O CPU whose DWARF register
// numbers are the ELF ones (but for i386's __eh_frame, whose esp and ebp
// numbers are swapped: darwinI386EH).
func elfMachine(cpu macho.Cpu) (elf.Machine, error) {
	switch cpu {
	case macho.CpuAmd64:
		return elf.EM_X86_64, nil
	case macho.CpuArm64:
		return elf.EM_AARCH64, nil
	case macho.Cpu386:
		return elf.EM_386, nil
	case macho.CpuArm:
		return elf.EM_ARM, nil
	}
	return 0, fmt.Errorf("%s objects are not read (x86_64, arm64, i386 and arm only)", archName(cpu, 0))
}
