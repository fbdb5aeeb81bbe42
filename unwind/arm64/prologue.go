package arm64

import (
	"encoding/binary"

	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// frameState decodes the AArch64 code of the function covering pc from
// its start (unwind.FunctionCode) up to pc, and returns how far sp
// moved (cfa: the caller's sp is sp + cfa), where x30 and the callee-saved
// registers were stored (distance below the caller's sp), and whether x30
// still holds the return address (lrLive). It fails when the function has
// made its frame record (mov x29, sp / add x29, sp, #n: the frame-pointer
// rule holds from there), when an instruction before pc leaves the straight
// path (b, br, ret) or moves sp or writes x30 in a way it does not follow,
// or when the code is not in the dump. innermost says pc is the
// interrupted instruction (else a return address, the call before it
// included).
func frameState(env unwind.Env, pc uint64, innermost bool) (cfa uint64, saved map[int]uint64, lrLive, ok bool) {
	code, found := functionCode(env, pc, innermost)
	if !found {
		return 0, nil, false, false
	}
	lrLive = true
	saved = map[int]uint64{}
	if len(code) == 0 { // pc is the function's start
		return 0, saved, true, true
	}
	save := func(reg int, below uint64) {
		if reg < 19 || reg > 30 {
			return
		}
		if _, seen := saved[reg]; !seen {
			saved[reg] = below
		}
	}
	for i := 0; i+4 <= len(code); i += 4 {
		w := binary.LittleEndian.Uint32(code[i:])
		rt, rn, rt2 := int(w&31), int(w>>5&31), int(w>>10&31)
		imm7 := int64(int32(w<<10)>>25) * 8
		switch {
		case w&0xffc00000 == 0xa9800000 && rn == 31: // stp xt, xt2, [sp, #imm]!
			cfa -= uint64(imm7)
			save(rt, cfa)
			save(rt2, cfa-8)
		case w&0xffc00000 == 0xa9000000 && rn == 31: // stp xt, xt2, [sp, #imm]
			save(rt, cfa-uint64(imm7))
			save(rt2, cfa-uint64(imm7)-8)
		case w&0xffe00c00 == 0xf8000c00 && rn == 31: // str xt, [sp, #imm9]!
			cfa -= uint64(int64(int32(w<<11) >> 23))
			save(rt, cfa)
		case w&0xffc00000 == 0xf9000000 && rn == 31: // str xt, [sp, #imm12*8]
			save(rt, cfa-uint64(w>>10&0xfff)*8)
		case w&0xff800000 == 0xd1000000 && rt == 31 && rn == 31: // sub sp, sp, #imm
			cfa += addImm(w)
		case w&0xff800000 == 0x91000000 && rt == 31 && rn == 31: // add sp, sp, #imm
			cfa -= addImm(w)
		case w&0xff800000 == 0x91000000 && rt == 29 && rn == 31: // mov x29, sp / add x29, sp, #imm
			return 0, nil, false, false
		case w&0xfc000000 == 0x94000000, w&0xfffffc1f == 0xd63f0000, w&0xfefff800 == 0xd63f0800: // bl, blr, blraa...
			if _, s := saved[30]; !s {
				lrLive = false
			}
		case w&0xfc000000 == 0x14000000, w&0xfffffc1f == 0xd61f0000, w&0xfffffc1f == 0xd65f0000,
			w&0xfefff800 == 0xd61f0800, w&0xfffffbff == 0xd65f0bff: // b, br, ret, braa..., retaa/retab
			return 0, nil, false, false
		default:
			if writesSPOrLR(w) {
				return 0, nil, false, false
			}
		}
		if int64(cfa) < 0 || cfa > 1<<20 {
			return 0, nil, false, false
		}
	}
	if _, s := saved[30]; !s && !(innermost && lrLive) {
		return 0, nil, false, false
	}
	return cfa, saved, lrLive, true
}

// functionCode is unwind.FunctionCode for AArch64: whole instructions
// from the function's start up to pc.
func functionCode(env unwind.Env, pc uint64, innermost bool) ([]byte, bool) {
	code, ok := unwind.FunctionCode(env, pc, innermost, 4)
	return code, ok && len(code)%4 == 0
}

// addImm is the immediate of an ADD/SUB (immediate), shifted.
func addImm(w uint32) uint64 {
	imm := uint64(w >> 10 & 0xfff)
	if w>>22&1 == 1 {
		imm <<= 12
	}
	return imm
}

// writesSPOrLR reports, for the instructions frameState does not follow,
// whether one may change sp or x30 (or x29 into a frame record): loads
// into x29/x30, writeback addressing on sp, and the data-processing forms
// whose destination 31 is sp. It errs on the side of yes.
func writesSPOrLR(w uint32) bool {
	rt, rn := int(w&31), int(w>>5&31)
	switch {
	case w&0x0a000000 == 0x08000000: // loads and stores
		load := w>>22&1 == 1
		pair := w&0x38000000 == 0x28000000
		writeback := pair && (w>>23&3 == 1 || w>>23&3 == 3) ||
			!pair && w&0x3b200400 == 0x38000400 // ldr/str (imm9) pre/post-index
		if writeback && rn == 31 {
			return true
		}
		if load && (rt == 30 || rt == 29 || pair && (int(w>>10&31) == 30 || int(w>>10&31) == 29)) {
			return true
		}
		return false
	case w&0x1f000000 == 0x11000000: // add/sub (immediate): rd 31 is sp
		return rt == 31 || rt == 30 || rt == 29
	case w&0x1fe00000 == 0x0b200000: // add/sub (extended register): rd 31 is sp
		return rt == 31 || rt == 30 || rt == 29
	}
	// Other data processing: destination 31 is xzr; x29 and x30 may be
	// written (mov x30, x0; orr x29, ...).
	if w&0x1c000000 == 0x10000000 || w&0x0e000000 == 0x0a000000 { // data processing (immediate / register)
		return rt == 30 || rt == 29
	}
	return false
}

// byFrameState finds the caller of a frame without CFI in a function
// that has made no frame record at its pc (built without frame pointers,
// or before its prologue made one), from the function's code decoded
// from its start (frameState): the return address is in lr (the context
// frame, before the function saved it) or where the function stored it,
// sp moves back by what the function took, and x19-x29 come from where
// the function stored them. The frame-pointer rule would follow a frame
// record of some outer function and skip the frames between.
func (u *Unwinder) byFrameState(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	if !last.Has(arm64.RegSP) {
		return nil
	}
	innermost := unwind.Innermost(last)
	cfa, saved, lrLive, ok := frameState(env, last.Regs[arm64.RegPC], innermost)
	if !ok {
		return nil
	}
	sp := last.Regs[arm64.RegSP] + cfa
	var pc uint64
	if off, s := saved[30]; s {
		if pc, ok = unwind.Read64(env, sp-off); !ok {
			return nil
		}
	} else if lrLive && innermost && last.Has(arm64.RegLR) {
		pc = last.Regs[arm64.RegLR]
	} else {
		return nil
	}
	pc = u.strip(env, pc)
	if !env.SeemsValid(pc-4) || callBefore(env, pc) == unwind.NoCallBefore {
		return nil
	}
	f := unwind.NewCaller(env, last, unwind.TrustPrologue)
	f.Valid &= calleeSaved
	for reg, off := range saved {
		if reg == 30 {
			continue
		}
		if v, ok := unwind.Read64(env, sp-off); ok {
			f.Set(reg, v)
		}
	}
	f.Set(arm64.RegPC, pc)
	f.Set(arm64.RegSP, sp)
	// The caller's lr is unknown (the call clobbered it). Its registers
	// are its own, not shifted as Breakpad's frame-pointer rule makes
	// them (lr its return address, fp its caller's record): the rule
	// steps from it as from a frame past a wild call (pastWildLeaf).
	f.Regs[arm64.RegLR] = 0
	f.Valid &^= 1 << arm64.RegLR
	return f
}
