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
	size := uint32(len(code))
	var (
		out  []epilog
		cur  epilog
		open bool // cur holds an epilog's instructions so far
	)
	for off := uint32(0); off < size; {
		in, err := x86asm.Decode(code[off:], 64)
		if err != nil {
			break
		}
		end := off + uint32(in.Len)
		switch {
		case off < from:
			open = false
		case isPop(in):
			if !open {
				cur, open = epilog{start: off}, true
			}
			cur.pops = append(cur.pops, uint8(in.Args[0].(x86asm.Reg)-x86asm.RAX))
			cur.ends = append(cur.ends, end)
		case isEpilogEnd(in, off, size):
			if open {
				cur.ends = append(cur.ends, end)
				out = append(out, cur)
			}
			open = false
		case isRSPRestore(in):
			cur, open = epilog{start: off, adjRS: true, ends: []uint32{end}}, true
		default:
			open = false
		}
		off = end
	}
	return out
}

// isPop reports whether in pops a general register other than RSP.
func isPop(in x86asm.Inst) bool {
	r, ok := in.Args[0].(x86asm.Reg)
	return in.Op == x86asm.POP && ok && r >= x86asm.RAX && r <= x86asm.R15 && r != x86asm.RSP
}

// isRSPRestore reports whether in is an epilog's first instruction:
// add rsp, imm or lea rsp, [reg + disp].
func isRSPRestore(in x86asm.Inst) bool {
	if r, ok := in.Args[0].(x86asm.Reg); !ok || r != x86asm.RSP {
		return false
	}
	switch in.Op {
	case x86asm.ADD:
		_, ok := in.Args[1].(x86asm.Imm)
		return ok
	case x86asm.LEA:
		m, ok := in.Args[1].(x86asm.Mem)
		return ok && m.Base >= x86asm.RAX && m.Base <= x86asm.R15 && m.Base != x86asm.RSP && m.Index == 0
	}
	return false
}

// isEpilogEnd reports whether in, at off in a function of size bytes,
// ends an epilog: a return, or a jump out of the function.
func isEpilogEnd(in x86asm.Inst, off, size uint32) bool {
	switch in.Op {
	case x86asm.RET:
		return true
	case x86asm.JMP:
		switch a := in.Args[0].(type) {
		case x86asm.Rel:
			t := int64(off) + int64(in.Len) + int64(a)
			return t < 0 || t >= int64(size)
		case x86asm.Mem:
			return a.Base == x86asm.RIP && a.Index == 0
		}
	}
	return false
}

// epilogChanges returns the STACK CFI records of a function's epilogs: in
// an epilog, after its add or lea and after each pop (at its start too
// when it is pops alone), the CFA is RSP plus the pops left and the return
// address (what Windows' unwinder computes by running the rest of the
// epilog), and each register popped has its own value again; after the
// epilog's last instruction, when code of the function follows, the state
// after the prolog (post) again, for the rules the epilog changed.
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
		// path that did not leave) is in the body's state again: the CFA
		// and the popped registers' rules (the others did not change).
		if end := e.ends[k]; end < size {
			var back ruleSet
			back.set(post.rules[".cfa"])
			for _, r := range e.pops {
				if rule, ok := post.rules[RegisterName(r)]; ok {
					back.set(rule)
				} else {
					// Popped but not saved by the prolog: its own value.
					back.set(RegisterName(r) + ": " + RegisterName(r))
				}
			}
			add(Change{begin + end, back.String()})
		}
	}
	return out
}

// codeAt returns the bytes of [rva, rva+n), as many as the section has.
func (t *Table) codeAt(rva, n uint32) []byte {
	b, err := t.img.Rest(rva)
	if err != nil {
		return nil
	}
	return b[:min(uint32(len(b)), n)]
}
