package unwindinfo

import (
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// An epilog as Windows' x64 unwinder recognizes one by its code (x64
// unwind information does not describe epilogs): optionally
// "add rsp, imm" or "lea rsp, [frame register + disp]", then pops of
// registers, then "ret" (or "rep ret", "ret imm16") or a jump out of the
// function (a tail call: "jmp rel", "jmp [rip+disp]").
type epilog struct {
	start uint32   // offset of its first instruction
	ends  []uint32 // offset after each instruction, the last one's included
	adjRS bool     // it starts with the add or lea
	pops  []uint8  // registers popped, in order
}

// maxEpilogScan bounds the bytes of a function scanned for epilogs (a
// longer function's epilogs past it are left out).
const maxEpilogScan = 1 << 20

// findEpilogs decodes code (a function's bytes, from its start) from
// offset from on, instruction after instruction, and returns the epilogs
// whose first instruction starts after the prolog. Decoding stops at the
// first byte sequence that is no instruction (data in code).
func findEpilogs(code []byte, from uint32) []epilog {
	code = code[:min(len(code), maxEpilogScan)]
	type ins struct {
		off uint32
		in  x86asm.Inst
	}
	var all []ins
	for off := uint32(0); int(off) < len(code); {
		in, err := x86asm.Decode(code[off:], 64)
		if err != nil {
			break
		}
		all = append(all, ins{off, in})
		off += uint32(in.Len)
	}
	size := uint32(len(code))
	isPop := func(in x86asm.Inst) (uint8, bool) {
		if in.Op != x86asm.POP {
			return 0, false
		}
		r, ok := in.Args[0].(x86asm.Reg)
		if !ok || r < x86asm.RAX || r > x86asm.R15 {
			return 0, false
		}
		return uint8(r - x86asm.RAX), true
	}
	isEnd := func(i ins) bool {
		switch i.in.Op {
		case x86asm.RET:
			return true
		case x86asm.JMP:
			switch a := i.in.Args[0].(type) {
			case x86asm.Rel:
				t := int64(i.off) + int64(i.in.Len) + int64(a)
				return t < 0 || t >= int64(size)
			case x86asm.Mem:
				return a.Base == x86asm.RIP && a.Index == 0
			}
		}
		return false
	}
	var out []epilog
	for k := 0; k < len(all); k++ {
		i := all[k]
		if i.off < from {
			continue
		}
		e := epilog{start: i.off}
		j := k
		switch i.in.Op {
		case x86asm.ADD:
			if r, ok := i.in.Args[0].(x86asm.Reg); ok && r == x86asm.RSP {
				if _, ok := i.in.Args[1].(x86asm.Imm); ok {
					e.adjRS = true
				}
			}
		case x86asm.LEA:
			if r, ok := i.in.Args[0].(x86asm.Reg); ok && r == x86asm.RSP {
				if m, ok := i.in.Args[1].(x86asm.Mem); ok && m.Base >= x86asm.RAX && m.Base <= x86asm.R15 && m.Base != x86asm.RSP && m.Index == 0 {
					e.adjRS = true
				}
			}
		}
		if e.adjRS {
			e.ends = append(e.ends, i.off+uint32(i.in.Len))
			j++
		}
		for ; j < len(all); j++ {
			r, ok := isPop(all[j].in)
			if !ok {
				break
			}
			e.pops = append(e.pops, r)
			e.ends = append(e.ends, all[j].off+uint32(all[j].in.Len))
		}
		if j >= len(all) || !isEnd(all[j]) {
			continue
		}
		e.ends = append(e.ends, all[j].off+uint32(all[j].in.Len))
		if !e.adjRS && len(e.pops) == 0 {
			k = j // a lone ret: nothing to describe
			continue
		}
		out = append(out, e)
		k = j
	}
	return out
}

// epilogChanges returns the STACK CFI records of a function's epilogs: in
// an epilog, after its add or lea and after each pop (at its start too
// when it is pops alone), the CFA is RSP plus the pops left and the return
// address (what Windows' unwinder computes by running the rest of the
// epilog), and each register popped has its own value again; after the
// epilog's last instruction, when code of the function follows, the state
// after the prolog (post) again.
func epilogChanges(begin, size uint32, epilogs []epilog, post *ruleSet) []Change {
	var out []Change
	add := func(c Change) {
		if n := len(out); n > 0 && out[n-1].Address == c.Address {
			// The state after one epilog and the start of the next.
			var rs ruleSet
			rs.setAll(out[n-1].Rules)
			rs.setAll(c.Rules)
			out[n-1].Rules = rs.String()
			return
		}
		out = append(out, c)
	}
	for _, e := range epilogs {
		left := len(e.pops)
		k := 0
		if !e.adjRS {
			// Pops alone: RSP is at the registers they pop, whatever the
			// code before set it from (mov rsp, r11 in MSVC's code), as
			// Windows' unwinder assumes there.
			add(Change{begin + e.start, fmt.Sprintf(".cfa: $rsp %d +", 8*left+8)})
		}
		if e.adjRS {
			add(Change{begin + e.ends[0], fmt.Sprintf(".cfa: $rsp %d +", 8*left+8)})
			k = 1
		}
		for _, r := range e.pops {
			left--
			name := RegisterName(r)
			add(Change{begin + e.ends[k], fmt.Sprintf(".cfa: $rsp %d + %s: %s", 8*left+8, name, name)})
			k++
		}
		// e.ends[k] is the end of the ret or jump: the code after it (a
		// path that did not leave) is in the body's state.
		if end := e.ends[k]; end < size {
			add(Change{begin + end, post.String()})
		}
	}
	return out
}

// codeAt returns the bytes of [rva, rva+n), as many as the section has.
func (t *Table) codeAt(rva, n uint32) []byte {
	b, err := t.img.rest(rva)
	if err != nil {
		return nil
	}
	return b[:min(uint32(len(b)), n)]
}
