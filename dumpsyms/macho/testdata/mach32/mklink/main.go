// Command mklink links one 32-bit Mach-O object file (i386 or armv7) into
// an executable, for the tests of dumpsyms/macho (make.sh runs it):
// ld64.lld-22 links no 32-bit Mach-O and Debian has no other Mach-O
// linker. It does what ld64 does for a self-contained object (no data, no
// external symbols), and no more:
//
//   - every section of the object that is not debugging information or
//     __LD,__compact_unwind keeps its place relative to the others: all
//     move by one delta, so PC-relative references and section
//     differences stay as the compiler resolved them, and an absolute
//     (VANILLA, non-PC-relative) relocation adds the delta;
//   - __unwind_info is made from __compact_unwind as ld64 makes it (one
//     regular second-level page): a function with an encoding of its own
//     loses its __eh_frame FDE, one without an entry gets DWARF mode with
//     its FDE's offset;
//   - the symbol table gets the debug map dsymutil reads (N_SO, N_OSO with
//     the object's name and time 0, N_BNSYM/N_FUN/N_FUN/N_ENSYM per
//     function) and the object's section symbols at their addresses;
//   - LC_UUID is the MD5 of the file written with a zero UUID.
//
// Usage: mklink OBJECT OUTPUT
package main

import (
	"bytes"
	"crypto/md5"
	"debug/macho"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

const (
	base    = 0x1000 // __TEXT's address (after a one-page __PAGEZERO)
	hdrRoom = 0x1000 // bytes before the object's first section: header and load commands
	delta   = base + hdrRoom
)

var le = binary.LittleEndian

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: mklink OBJECT OUTPUT")
		os.Exit(2)
	}
	if err := link(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "mklink:", err)
		os.Exit(1)
	}
}

type fn struct {
	name       string
	addr, size uint32 // object addresses
	desc       uint16
	ext        bool
	enc        uint32
	hasEnc     bool
}

func link(objPath, out string) error {
	f, err := macho.Open(objPath)
	if err != nil {
		return err
	}
	defer f.Close()
	if f.Type != macho.TypeObj || f.Magic != macho.Magic32 {
		return errors.New("not a 32-bit object file")
	}
	var text, eh, cu *macho.Section
	var keep []*macho.Section
	end := uint32(0)
	for _, s := range f.Sections {
		end = max(end, uint32(s.Addr+s.Size))
		switch {
		case s.Seg == "__DWARF" || strings.HasPrefix(s.Name, "__apple_"):
		case s.Seg == "__LD" && s.Name == "__compact_unwind":
			cu = s
		case s.Seg == "__TEXT":
			if s.Name == "__text" {
				text = s
			}
			if s.Name == "__eh_frame" {
				eh = s
			}
			keep = append(keep, s)
		default:
			return fmt.Errorf("section %s,%s: only __TEXT sections are linked", s.Seg, s.Name)
		}
	}
	if text == nil || text.Addr != 0 {
		return errors.New("no __text at address 0")
	}
	// Section contents, absolute relocations moved by delta.
	data := map[*macho.Section][]byte{}
	for _, s := range keep {
		b, err := s.Data()
		if err != nil {
			return err
		}
		for _, r := range s.Relocs {
			switch {
			case r.Type != 0: // SECTDIFF, LOCAL_SECTDIFF, PAIR, branches: all PC-relative or differences
				if r.Type == 8 || r.Type == 9 { // ARM_RELOC_HALF, ARM_RELOC_HALF_SECTDIFF
					return fmt.Errorf("section %s: movw/movt relocation not supported", s.Name)
				}
			case r.Extern:
				return fmt.Errorf("section %s: external relocation at %#x (the object must be self-contained)", s.Name, r.Addr)
			case !r.Pcrel:
				if r.Len != 2 {
					return fmt.Errorf("section %s: %d-byte absolute relocation", s.Name, 1<<r.Len)
				}
				le.PutUint32(b[r.Addr:], le.Uint32(b[r.Addr:])+delta)
			}
		}
		data[s] = b
	}
	// Functions: the __text symbols.
	var fns []*fn
	for _, s := range f.Symtab.Syms {
		if s.Type&0xe0 == 0 && s.Type&0x0e == 0x0e && s.Sect == 1 {
			fns = append(fns, &fn{name: s.Name, addr: uint32(s.Value), desc: s.Desc, ext: s.Type&1 != 0})
		}
	}
	slices.SortFunc(fns, func(a, b *fn) int { return int(a.addr) - int(b.addr) })
	for i, g := range fns {
		next := uint32(text.Size)
		if i+1 < len(fns) {
			next = fns[i+1].addr
		}
		g.size = next - g.addr
	}
	if cu != nil {
		b, err := cu.Data()
		if err != nil {
			return err
		}
		for off := 0; off+20 <= len(b); off += 20 {
			addr, enc := le.Uint32(b[off:]), le.Uint32(b[off+8:])
			for _, g := range fns {
				if g.addr == addr {
					g.enc, g.hasEnc = enc, true
				}
			}
		}
	}
	// __eh_frame without the FDEs of functions with encodings of their
	// own; fdeOff: the new offset of each kept function's FDE.
	fdeOff := map[uint32]uint32{}
	if eh != nil {
		b, err := rewriteEH(data[eh], uint32(eh.Addr), fns, fdeOff)
		if err != nil {
			return fmt.Errorf("__eh_frame: %w", err)
		}
		data[eh] = b
	}
	var unwind []byte
	if cu != nil {
		unwind = unwindInfo(fns, fdeOff, uint32(text.Size))
	}
	uAddr := (end + 3) &^ 3

	// Symbol table: the debug map, then the section symbols.
	type nlist struct {
		name  string
		typ   uint8
		sect  uint8
		desc  uint16
		value uint32
	}
	const nSO, nOSO, nBNSYM, nENSYM, nFUN = 0x64, 0x66, 0x2e, 0x4e, 0x24
	abs, err := filepath.Abs(objPath)
	if err != nil {
		return err
	}
	syms := []nlist{{name: "/src/", typ: nSO}, {name: strings.TrimSuffix(filepath.Base(objPath), filepath.Ext(objPath)) + ".c", typ: nSO},
		{name: filepath.Base(abs), typ: nOSO, sect: 0, desc: 1}}
	for _, g := range fns {
		a := g.addr + delta
		syms = append(syms, nlist{typ: nBNSYM, sect: 1, value: a}, nlist{name: g.name, typ: nFUN, sect: 1, value: a},
			nlist{typ: nFUN, value: g.size}, nlist{typ: nENSYM, sect: 1, value: g.size})
	}
	syms = append(syms, nlist{typ: nSO, sect: 1})
	for _, g := range fns {
		t := uint8(0x0e)
		if g.ext {
			t |= 1
		}
		syms = append(syms, nlist{name: g.name, typ: t, sect: 1, desc: g.desc, value: g.addr + delta})
	}
	var symtab, strtab bytes.Buffer
	strtab.WriteString(" \x00")
	for _, s := range syms {
		var e [12]byte
		le.PutUint32(e[0:], 1) // "": the NUL after the leading space, as ld64 writes
		if s.name != "" {
			le.PutUint32(e[0:], uint32(strtab.Len()))
			strtab.WriteString(s.name + "\x00")
		}
		e[4], e[5] = s.typ, s.sect
		le.PutUint16(e[6:], s.desc)
		le.PutUint32(e[8:], s.value)
		symtab.Write(e[:])
	}

	// Layout: header and load commands, the sections at hdrRoom + their
	// object address, __unwind_info, then __LINKEDIT.
	textEnd := uint32(hdrRoom) + uAddr + uint32(len(unwind))
	textSize := (textEnd + 0xfff) &^ 0xfff
	linkOff := textSize
	linkSize := uint32(symtab.Len() + strtab.Len())
	file := make([]byte, linkOff+linkSize)
	type sect struct {
		name       string
		addr, size uint32
		align      uint32
		flags      uint32
	}
	var sects []sect
	for _, s := range keep {
		copy(file[hdrRoom+uint32(s.Addr):], data[s])
		sects = append(sects, sect{s.Name, uint32(s.Addr) + delta, uint32(len(data[s])), s.Align, s.Flags})
	}
	if unwind != nil {
		copy(file[hdrRoom+uAddr:], unwind)
		sects = append(sects, sect{"__unwind_info", uAddr + delta, uint32(len(unwind)), 2, 0})
	}
	copy(file[linkOff:], symtab.Bytes())
	copy(file[linkOff+uint32(symtab.Len()):], strtab.Bytes())

	var lc bytes.Buffer
	ncmds := 0
	name16 := func(s string) []byte { b := make([]byte, 16); copy(b, s); return b }
	segment := func(name string, vmaddr, vmsize, fileoff, filesize uint32, prot uint32, ss []sect) {
		ncmds++
		binary.Write(&lc, le, [2]uint32{1, uint32(56 + 68*len(ss))})
		lc.Write(name16(name))
		binary.Write(&lc, le, [8]uint32{vmaddr, vmsize, fileoff, filesize, prot, prot, uint32(len(ss)), 0})
		for _, s := range ss {
			lc.Write(name16(s.name))
			lc.Write(name16(name))
			binary.Write(&lc, le, [9]uint32{s.addr, s.size, s.addr - base, s.align, 0, 0, s.flags, 0, 0})
		}
	}
	segment("__PAGEZERO", 0, base, 0, 0, 0, nil)
	segment("__TEXT", base, textSize, 0, textSize, 5, sects)
	segment("__LINKEDIT", base+textSize, (linkSize+0xfff)&^0xfff, linkOff, linkSize, 1, nil)
	ncmds++
	binary.Write(&lc, le, [6]uint32{2 /* LC_SYMTAB */, 24, linkOff, uint32(len(syms)), linkOff + uint32(symtab.Len()), uint32(strtab.Len())})
	ncmds++
	uuidAt := 28 + lc.Len() + 8
	binary.Write(&lc, le, [2]uint32{0x1b /* LC_UUID */, 24})
	lc.Write(make([]byte, 16))
	ncmds++
	if f.Cpu == macho.Cpu386 {
		binary.Write(&lc, le, [4]uint32{0x24 /* LC_VERSION_MIN_MACOSX */, 16, 10<<16 | 13<<8, 0})
	} else {
		binary.Write(&lc, le, [4]uint32{0x25 /* LC_VERSION_MIN_IPHONEOS */, 16, 9 << 16, 0})
	}
	if 28+lc.Len() > hdrRoom {
		return errors.New("load commands too big")
	}
	binary.Write(bytes.NewBuffer(file[:0]), le, [7]uint32{0xfeedface, uint32(f.Cpu), f.SubCpu, 2 /* MH_EXECUTE */, uint32(ncmds), uint32(lc.Len()), 1 /* MH_NOUNDEFS */})
	copy(file[28:], lc.Bytes())
	sum := md5.Sum(file)
	copy(file[uuidAt:], sum[:])
	return os.WriteFile(out, file, 0o755)
}

// rewriteEH drops the FDEs of functions with compact encodings of their
// own (not DWARF mode) from an __eh_frame at addr whose pointers are
// 4-byte PC-relative, moving the rest down (their CIE pointers and
// pc_begin adjusted); fdeOff gets the kept FDEs' new offsets by function.
func rewriteEH(b []byte, addr uint32, fns []*fn, fdeOff map[uint32]uint32) ([]byte, error) {
	own := map[uint32]bool{}
	for _, g := range fns {
		if g.hasEnc && g.enc&0x0f000000 != 0x04000000 && g.enc != 0 {
			own[g.addr] = true
		}
	}
	out := make([]byte, 0, len(b))
	cieNew := map[uint32]uint32{}
	for off := uint32(0); off+8 <= uint32(len(b)); {
		n := le.Uint32(b[off:])
		if n == 0 || n == 0xffffffff || off+4+n > uint32(len(b)) {
			break
		}
		ent := b[off : off+4+n]
		id := le.Uint32(ent[4:])
		if id == 0 { // CIE
			if !bytes.HasPrefix(ent[9:], []byte("zR\x00")) {
				return nil, fmt.Errorf("CIE at %#x: augmentation %q, want zR", off, ent[9:12])
			}
			cieNew[off] = uint32(len(out))
			out = append(out, ent...)
			off += 4 + n
			continue
		}
		cie := off + 4 - id
		nc, ok := cieNew[cie]
		if !ok {
			return nil, fmt.Errorf("FDE at %#x: CIE at %#x not before it", off, cie)
		}
		pc := addr + off + 8 + le.Uint32(ent[8:]) // pcrel
		if own[pc] {
			off += 4 + n
			continue
		}
		no := uint32(len(out))
		e := slices.Clone(ent)
		le.PutUint32(e[4:], no+4-nc)
		le.PutUint32(e[8:], le.Uint32(ent[8:])+(off-no))
		fdeOff[pc] = no
		out = append(out, e...)
		off += 4 + n
	}
	out = append(out, 0, 0, 0, 0)
	return out, nil
}

// unwindInfo makes __unwind_info: no common encodings or personalities,
// an index of one regular second-level page and the end sentinel.
func unwindInfo(fns []*fn, fdeOff map[uint32]uint32, textEnd uint32) []byte {
	var b bytes.Buffer
	const page = 28 + 24
	binary.Write(&b, le, [7]uint32{1, 28, 0, 28, 0, 28, 2})
	first := uint32(hdrRoom) + fns[0].addr
	binary.Write(&b, le, [6]uint32{first, page, page, uint32(hdrRoom) + textEnd, 0, page})
	binary.Write(&b, le, [1]uint32{2})
	binary.Write(&b, le, [2]uint16{8, uint16(len(fns))})
	for _, g := range fns {
		enc := g.enc
		if o, ok := fdeOff[g.addr]; ok && (!g.hasEnc || enc&0x0f000000 == 0x04000000) {
			enc = 0x04000000 | o
		}
		binary.Write(&b, le, [2]uint32{uint32(hdrRoom) + g.addr, enc})
	}
	return b.Bytes()
}
