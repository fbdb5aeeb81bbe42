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

// bytes lays the image out: header, program headers, section contents,
// section headers.
func (im *elfImage) bytes() []byte {
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
	sym.Write(make([]byte, 24))
	textIndex := uint16(1)
	for i, s := range secs {
		if s.name == ".text" {
			textIndex = uint16(i)
		}
	}
	for _, s := range im.symbols {
		var e [24]byte
		binary.LittleEndian.PutUint32(e[0:], uint32(str.Len()))
		e[4] = byte(elf.STB_GLOBAL)<<4 | byte(elf.STT_FUNC)
		binary.LittleEndian.PutUint16(e[6:], textIndex)
		binary.LittleEndian.PutUint64(e[8:], s.value)
		sym.Write(e[:])
		str.WriteString(s.name)
		str.WriteByte(0)
	}
	symIdx := uint32(len(secs))
	secs = append(secs, elfSection{name: ".symtab", typ: elf.SHT_SYMTAB, data: sym.Bytes(), link: symIdx + 1, info: 1, entsz: 24},
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
	phoff := uint64(64)
	off := phoff + uint64(len(loads))*56
	offs := make([]uint64, len(secs))
	for i, s := range secs {
		off = (off + 7) &^ 7
		offs[i] = off
		off += uint64(len(s.data))
	}
	shoff := (off + 7) &^ 7
	out := make([]byte, shoff+uint64(len(secs))*64)
	le := binary.LittleEndian
	copy(out, "\x7fELF")
	out[4], out[5], out[6] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	le.PutUint16(out[16:], uint16(elf.ET_DYN))
	le.PutUint16(out[18:], uint16(im.machine))
	le.PutUint32(out[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(out[32:], phoff)
	le.PutUint64(out[40:], shoff)
	le.PutUint16(out[52:], 64)
	le.PutUint16(out[54:], 56)
	le.PutUint16(out[56:], uint16(len(loads)))
	le.PutUint16(out[58:], 64)
	le.PutUint16(out[60:], uint16(len(secs)))
	le.PutUint16(out[62:], uint16(len(secs)-1))
	for i, s := range loads {
		p := out[phoff+uint64(i)*56:]
		le.PutUint32(p[0:], uint32(elf.PT_LOAD))
		le.PutUint32(p[4:], uint32(elf.PF_R))
		le.PutUint64(p[16:], s.Addr)
		le.PutUint64(p[24:], s.Addr)
		le.PutUint64(p[40:], s.Memsz)
		le.PutUint64(p[48:], 0x1000)
	}
	for i, s := range secs {
		copy(out[offs[i]:], s.data)
		if i == 0 {
			continue
		}
		h := out[shoff+uint64(i)*64:]
		le.PutUint32(h[0:], nameOff[i])
		le.PutUint32(h[4:], uint32(s.typ))
		if s.typ == elf.SHT_PROGBITS || s.typ == elf.SHT_NOBITS {
			le.PutUint64(h[8:], uint64(elf.SHF_ALLOC))
		}
		le.PutUint64(h[16:], s.addr)
		le.PutUint64(h[24:], offs[i])
		size := uint64(len(s.data))
		if s.typ == elf.SHT_NOBITS {
			size = s.nobits
		}
		le.PutUint64(h[32:], size)
		le.PutUint32(h[40:], s.link)
		le.PutUint32(h[44:], s.info)
		le.PutUint64(h[48:], 1)
		le.PutUint64(h[56:], s.entsz)
	}
	return out
}

// elfMachine returns the ELF machine of a Mach-O CPU whose DWARF register
// numbers are the ELF ones.
func elfMachine(cpu macho.Cpu) (elf.Machine, error) {
	switch cpu {
	case macho.CpuAmd64:
		return elf.EM_X86_64, nil
	case macho.CpuArm64:
		return elf.EM_AARCH64, nil
	}
	return 0, fmt.Errorf("%s objects are not read (64-bit x86_64 and arm64 only)", archName(cpu, 0))
}
