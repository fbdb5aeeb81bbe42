package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gobreakpad/gobreakpad/minidump"
)

// auxv and dynamic section values used to find the dynamic linker's state.
const (
	atPhdr    = 3
	atPhent   = 4
	atPhnum   = 5
	ptDynamic = 2
	ptPhdr    = 6
	dtNull    = 0
	dtDebug   = 21

	maxLinkMaps = 4096
	maxPhdrs    = 4096
	maxDynamic  = 64 << 10
	maxNameLen  = 4096
)

// LinkMap is one object in the dynamic linker's list (struct link_map).
type LinkMap struct {
	Addr uint64 // l_addr: the object's load bias
	Name string // l_name: its path; empty for the program itself
	LD   uint64 // l_ld: its dynamic section
}

// DSODebug is the dynamic linker's r_debug and its list of loaded objects,
// which Breakpad's MD_LINUX_DSO_DEBUG stream records.
type DSODebug struct {
	Version              int32
	Brk, LDBase, Dynamic uint64 // r_brk, r_ldbase, and the program's dynamic section
	LinkMaps             []LinkMap
}

// errStatic reports a program without dynamic linking: no DSO debug state.
var errStatic = errors.New("the program has no PT_DYNAMIC segment (statically linked)")

// readDSODebug follows the program's headers (auxv AT_PHDR), its PT_DYNAMIC
// section's DT_DEBUG entry, and r_debug's link_map list, all in the process's
// little-endian memory with word-sized pointers.
func readDSODebug(mem memoryReader, auxv []byte, word int) (*DSODebug, error) {
	get := func(b []byte) uint64 {
		if word == 4 {
			return uint64(binary.LittleEndian.Uint32(b))
		}
		return binary.LittleEndian.Uint64(b)
	}
	read := func(addr uint64, n int) ([]byte, error) { return mem.ReadMemory(addr, n) }
	var phdr, phent, phnum uint64
	for a := auxv; len(a) >= 2*word; a = a[2*word:] {
		switch get(a) {
		case atPhdr:
			phdr = get(a[word:])
		case atPhent:
			phent = get(a[word:])
		case atPhnum:
			phnum = get(a[word:])
		}
	}
	minEnt := uint64(32)
	if word == 8 {
		minEnt = 56
	}
	if phdr == 0 || phent < minEnt || phent > 2*minEnt || phnum == 0 || phnum > maxPhdrs {
		return nil, errors.New("auxv gives no usable program headers")
	}
	table, err := read(phdr, int(phent*phnum))
	if err != nil {
		return nil, fmt.Errorf("program headers: %w", err)
	}
	var bias, dynVaddr, dynSize uint64
	var haveBias, haveDyn bool
	for i := uint64(0); i < phnum; i++ {
		e := table[i*phent:]
		typ := binary.LittleEndian.Uint32(e)
		var vaddr, memsz uint64
		if word == 8 {
			vaddr, memsz = get(e[16:]), get(e[40:])
		} else {
			vaddr, memsz = get(e[8:]), get(e[20:])
		}
		switch typ {
		case ptPhdr:
			bias, haveBias = phdr-vaddr, true
		case ptDynamic:
			dynVaddr, dynSize, haveDyn = vaddr, memsz, true
		}
	}
	if !haveDyn {
		return nil, errStatic
	}
	if !haveBias {
		return nil, errors.New("the program has no PT_PHDR segment to find its load address")
	}
	d := &DSODebug{Dynamic: bias + dynVaddr}
	dyn, err := read(d.Dynamic, int(min(dynSize, maxDynamic)))
	if err != nil {
		return nil, fmt.Errorf("dynamic section: %w", err)
	}
	var rdebug uint64
	for e := dyn; len(e) >= 2*word && get(e) != dtNull; e = e[2*word:] {
		if get(e) == dtDebug {
			rdebug = get(e[word:])
		}
	}
	if rdebug == 0 {
		return nil, errors.New("DT_DEBUG is unset")
	}
	r, err := read(rdebug, 5*word)
	if err != nil {
		return nil, fmt.Errorf("r_debug: %w", err)
	}
	d.Version = int32(binary.LittleEndian.Uint32(r))
	lm := get(r[word:])
	d.Brk, d.LDBase = get(r[2*word:]), get(r[4*word:])
	seen := make(map[uint64]bool)
	for lm != 0 && !seen[lm] {
		if len(d.LinkMaps) == maxLinkMaps {
			return d, fmt.Errorf("link map list longer than %d", maxLinkMaps)
		}
		seen[lm] = true
		e, err := read(lm, 4*word)
		if err != nil {
			return d, fmt.Errorf("link map at %#x: %w", lm, err)
		}
		m := LinkMap{Addr: get(e), LD: get(e[2*word:])}
		if name := get(e[word:]); name != 0 {
			m.Name = readString(mem, name)
		}
		d.LinkMaps = append(d.LinkMaps, m)
		lm = get(e[3*word:])
	}
	return d, nil
}

// readString reads a NUL-terminated string of at most maxNameLen bytes,
// page by page so that it can end just before unreadable memory.
func readString(mem memoryReader, addr uint64) string {
	var s []byte
	for len(s) < maxNameLen {
		n := int(pageSize - addr%pageSize)
		b, err := mem.ReadMemory(addr, n)
		if err != nil {
			break
		}
		if i := bytes.IndexByte(b, 0); i >= 0 {
			return string(append(s, b[:i]...))
		}
		s = append(s, b...)
		addr += uint64(n)
	}
	return string(s[:min(len(s), maxNameLen)])
}

// addDSODebug records the dynamic linker's state, noting why when it cannot.
func (p *Process) addDSODebug(mem memoryReader) {
	if p.Auxv == nil {
		return
	}
	word := p.CPU.PointerSize()
	d, err := readDSODebug(mem, p.Auxv, word)
	if err != nil && !errors.Is(err, errStatic) {
		p.note("dso debug: %v", err)
	}
	p.DSODebug = d
}

// minidump converts d for minidump.Writer.LinuxDSODebug.
func (d *DSODebug) minidump() *minidump.DSODebug {
	md := &minidump.DSODebug{Version: uint32(d.Version), Brk: d.Brk, LDBase: d.LDBase, Dynamic: d.Dynamic,
		LinkMaps: make([]minidump.LinkMap, len(d.LinkMaps))}
	for i, m := range d.LinkMaps {
		md.LinkMaps[i] = minidump.LinkMap{Addr: m.Addr, Name: m.Name, LD: m.LD}
	}
	return md
}
