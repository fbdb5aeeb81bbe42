package capture

import "encoding/binary"

// atSysinfoEHDR is the auxv entry giving the vDSO's ELF header.
const atSysinfoEHDR = 33

// maxVDSO bounds the vDSO image a capture keeps whole (a few KiB in
// practice: one or two pages of code, symbols and .eh_frame).
const maxVDSO = 64 << 10

// vdsoPath is the name /proc/PID/maps gives the vDSO.
const vdsoPath = "[vdso]"

// auxvWord returns the value of the first auxv entry of type typ in an
// auxiliary vector of word-sized pairs in byte order bo.
func auxvWord(auxv []byte, bo binary.ByteOrder, word int, typ uint64) (uint64, bool) {
	get := func(b []byte) uint64 {
		if word == 4 {
			return uint64(bo.Uint32(b))
		}
		return bo.Uint64(b)
	}
	for a := auxv; len(a) >= 2*word; a = a[2*word:] {
		switch get(a) {
		case typ:
			return get(a[word:]), true
		case atNull:
			return 0, false
		}
	}
	return 0, false
}

// nameVDSO names the mapping holding the vDSO (auxv AT_SYSINFO_EHDR)
// "[vdso]" when nothing else names it, as in cores, whose file notes leave
// it out: it is then listed as a module and its image kept whole.
func (p *Process) nameVDSO() {
	word := p.CPU.PointerSize()
	if p.Auxv == nil || word != 4 && word != 8 {
		return
	}
	base, ok := auxvWord(p.Auxv, binary.LittleEndian, word, atSysinfoEHDR)
	if !ok || base == 0 {
		return
	}
	for i := range p.Maps {
		m := &p.Maps[i]
		if m.Start == base && m.Path == "" {
			m.Path = vdsoPath
		}
	}
}

// maxCodePages bounds how many unnamed one-page code mappings a capture
// keeps whole.
const maxCodePages = 4

// vdsoSpans returns the images a capture keeps whole, for collectMemory:
// the vDSO and the kernel's signal page ("[sigpage]", 32-bit arm), whose
// symbols, .eh_frame and signal trampolines the walker reads from the
// dump, and unnamed executable mappings of one page, such as the signal
// trampoline page of qemu-user, which its cores do not name.
func (p *Process) vdsoSpans() []span {
	var out []span
	pages := 0
	for _, m := range p.Maps {
		if !m.Readable() || m.End <= m.Start {
			continue
		}
		switch {
		case (m.Path == vdsoPath || m.Path == "[sigpage]") && m.End-m.Start <= maxVDSO:
			out = append(out, span{m.Start, m.End})
		case m.Path == "" && m.Executable() && m.End-m.Start <= pageSize && pages < maxCodePages:
			pages++
			out = append(out, span{m.Start, m.End})
		}
	}
	return out
}
