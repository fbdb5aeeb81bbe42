package symbfile

import (
	"debug/elf"

	"golang.org/x/arch/arm64/arm64asm"
	"golang.org/x/arch/x86/x86asm"

	"github.com/gobreakpad/gobreakpad/symbfile"
)

// returnPads decodes the instructions of every function range of fr (the
// model's, as Write collected them) in the ELF file at path and
// returns a return pad for each call instruction: the inline stack at the
// return address minus one, as the ranges in t answer it. Machines other than x86-64, i386 and arm64 get none; so do files
// that cannot be read.
func returnPads(fr []funcRanges, path string, t *symbfile.Table) []symbfile.ReturnPad {
	f, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var next func(code []byte) (n int, call bool)
	switch f.Machine {
	case elf.EM_X86_64, elf.EM_386:
		mode := 64
		if f.Machine == elf.EM_386 {
			mode = 32
		}
		next = func(code []byte) (int, bool) {
			in, err := x86asm.Decode(code, mode)
			if err != nil || in.Len == 0 {
				return 1, false
			}
			return in.Len, in.Op == x86asm.CALL
		}
	case elf.EM_AARCH64:
		next = func(code []byte) (int, bool) {
			in, err := arm64asm.Decode(code)
			if err != nil {
				return 4, false
			}
			return 4, in.Op == arm64asm.BL || in.Op == arm64asm.BLR
		}
	default:
		return nil
	}
	// Model addresses are relative to the load address (dump_syms's): the
	// first PT_LOAD segment at file offset 0.
	var base uint64
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Off == 0 {
			base = p.Vaddr
			break
		}
	}
	type text struct {
		addr uint64
		data []byte
	}
	var texts []text
	for _, sec := range f.Sections {
		if sec.Type != elf.SHT_PROGBITS || sec.Flags&elf.SHF_EXECINSTR == 0 {
			continue
		}
		if d, err := sec.Data(); err == nil {
			texts = append(texts, text{sec.Addr - base, d})
		}
	}
	var pads []symbfile.ReturnPad
	for _, f := range fr {
		for _, r := range f.ranges {
			for _, tx := range texts {
				if r.Address < tx.addr || r.Address-tx.addr >= uint64(len(tx.data)) {
					continue
				}
				lo := r.Address - tx.addr
				hi := min(lo+r.Size, uint64(len(tx.data)))
				for off := lo; off < hi; {
					n, call := next(tx.data[off:hi])
					off += uint64(n)
					if !call || off > hi {
						continue
					}
					at := tx.addr + off - 1 // the return address minus one
					fs := t.Lookup(at)
					if len(fs) == 0 {
						continue
					}
					p := symbfile.ReturnPad{Addr: at, Frames: make([]symbfile.PadFrame, len(fs))}
					for i, fr := range fs { // innermost first -> outermost first
						p.Frames[len(fs)-1-i] = symbfile.PadFrame{Func: fr.Func, File: fr.File, Line: fr.Line}
					}
					pads = append(pads, p)
				}
				break
			}
		}
	}
	return pads
}
