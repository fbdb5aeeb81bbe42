// Package mips is the MIPS and MIPS64 stack unwinder: it finds each caller
// frame the way Breakpad's processor (StackwalkerMIPS) does, over the
// register file and names of arch/mips and the shared machinery of package
// unwind: STACK CFI, then stack scanning; MIPS has no frame-pointer chain
// Breakpad follows.
//
// Breakpad's MIPS specifics are kept: a caller's pc is its return address
// less two instructions (8 bytes on mips, 16 on mips64, as Breakpad
// subtracts two words), and that pc is the frame's instruction (no further
// adjustment); every general register's value, valid or not, is given to
// CFI rules; gp is callee-saved on mips64 but not on mips (o32); a scan
// skips the four argument words of a non-leaf mips frame and takes the word
// below a return address for the caller's fp, scanning on while that fp is
// a kilobyte or more above the found stack pointer.
package mips

import (
	"github.com/gobreakpad/gobreakpad/arch/mips"
	"github.com/gobreakpad/gobreakpad/cfi"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// Validity bits Breakpad keeps for a MIPS frame (StackFrameMIPS's
// ContextValidity): the printed registers gp, sp, fp, ra, pc and s0-s7.
const tracked = 1<<mips.NumPrinted - 1

// calleeSaved32 and calleeSaved64 are the registers kept from the callee
// when CFI does not mention them: s0-s7, sp and fp, and gp on mips64.
const (
	calleeSaved32 = 0xff<<mips.RegS0 | 1<<mips.RegSP | 1<<mips.RegFP
	calleeSaved64 = calleeSaved32 | 1<<mips.RegGP
)

// iregs is the mask of the 32 general registers' slots: every slot but pc.
const iregs = (1<<mips.NumRegs - 1) &^ (1 << mips.RegPC)

// Scan limits of Breakpad's MIPS walker: one frame's stack is at most
// maxFrameStackSize bytes, and a non-leaf mips (o32) frame reserves
// minArgsOnStack argument words.
const (
	maxFrameStackSize = 1024
	minArgsOnStack    = 4
)

// Unwinder walks MIPS stacks; Is64 selects mips64 (8-byte words).
type Unwinder struct {
	Is64 bool
}

// NewUnwinder returns the unwinder for a context: mips64 unless its flags
// carry the 32-bit MIPS bit, as Breakpad decides.
func NewUnwinder(c *mips.Context) Unwinder { return Unwinder{Is64: c != nil && c.Is64()} }

// CFINames implements unwind.CPU.
func (Unwinder) CFINames() []string { return mips.CFIRegisterNames }

// PC implements unwind.CPU.
func (Unwinder) PC() int { return mips.RegPC }

// SP implements unwind.CPU.
func (Unwinder) SP() int { return mips.RegSP }

// WordSize implements unwind.CPU.
func (u Unwinder) WordSize() int {
	if u.Is64 {
		return 8
	}
	return 4
}

// CallTarget implements unwind.CPU: MIPS calls are not decoded for tail
// call frames (not available).
func (Unwinder) CallTarget(unwind.Env, uint64) (uint64, bool) { return 0, false }

// InstructionAdjust implements unwind.CPU: a caller's pc is already two
// instructions before its return address.
func (Unwinder) InstructionAdjust() uint64 { return 0 }

func (u Unwinder) mask(v uint64) uint64 {
	if u.Is64 {
		return v
	}
	return uint64(uint32(v))
}

// ContextFrame implements unwind.CPU; raw must be a *mips.Context. All the
// general registers are stored, the printed ones marked known.
func (u Unwinder) ContextFrame(raw any, env unwind.Env) (*unwind.Frame, error) {
	c, err := unwind.ContextAs[mips.Context](raw)
	if err != nil {
		return nil, err
	}
	f := &unwind.Frame{Trust: unwind.TrustContext}
	for i, v := range c.Iregs {
		f.Regs[mips.Slot(i)] = v
	}
	f.Regs[mips.RegPC] = c.EPC
	f.Valid = tracked
	return f, nil
}

// Caller implements unwind.CPU: CFI, then scanning.
func (u Unwinder) Caller(env unwind.Env, frames []*unwind.Frame, scanAllowed bool) *unwind.Frame {
	last := frames[len(frames)-1]
	var f *unwind.Frame
	if rules := env.CFI(last.Regs[mips.RegPC]); unwind.Outermost(rules) {
		return nil
	} else if rules != nil {
		f = u.byCFI(env, last, rules)
	}
	if f == nil && scanAllowed {
		f = u.byScan(env, frames)
	}
	if f == nil {
		return nil
	}
	if unwind.TerminateWalk(f.Regs[mips.RegPC], f.Regs[mips.RegSP], last.Regs[mips.RegSP], last.Trust == unwind.TrustContext) {
		return nil
	}
	return f
}

// byCFI applies the rules as Breakpad's GetCallerByCFIFrameInfo: the rules
// see every general register of the callee (known or not), sp is the CFA
// and ra the return address whatever rules say of them, pc is ra less two
// words, and only the printed registers are marked known.
func (u Unwinder) byCFI(env unwind.Env, last *unwind.Frame, rules *cfi.RuleSet) *unwind.Frame {
	var in, out cfi.Registers
	for i := 0; i < mips.NumRegs; i++ {
		in.Values[i] = u.mask(last.Regs[i])
	}
	in.Valid = iregs
	cfa, ra, err := rules.FindCallerRegs(&in, env, &out)
	if err != nil {
		return nil
	}
	saved := uint64(calleeSaved32)
	if u.Is64 {
		saved = calleeSaved64
	}
	f := unwind.NewFrame(env)
	f.Trust = unwind.TrustCFI
	for i := 0; i < mips.NumRegs; i++ {
		if i == mips.RegPC {
			continue
		}
		bit := uint64(1) << uint(i)
		if v, ok := out.Get(i); ok {
			f.Regs[i] = v
			f.Valid |= bit & tracked
		} else if saved&bit != 0 && last.Has(i) {
			f.Regs[i] = last.Regs[i]
			f.Valid |= bit
		}
	}
	word := uint64(u.WordSize())
	f.Set(mips.RegSP, cfa)
	f.Set(mips.RegRA, ra)
	f.Set(mips.RegPC, u.mask(ra-2*word))
	return f
}

// byScan looks for a return address as Breakpad's GetCallerByStackScan: at
// most a kilobyte of stack, past a mips caller's four argument words, and
// on past candidates whose saved fp (the word below) is a kilobyte or more
// above them. The caller keeps the callee's registers, with pc, sp, fp and
// ra known.
func (u Unwinder) byScan(env unwind.Env, frames []*unwind.Frame) *unwind.Frame {
	last := frames[len(frames)-1]
	size := u.WordSize()
	word := uint64(size)
	lastSP := u.mask(last.Regs[mips.RegSP])
	count := maxFrameStackSize / size
	if !u.Is64 && len(frames) > 1 {
		lastSP = u.mask(lastSP + minArgsOnStack*word)
		count -= minArgsOnStack
	}
	var callerSP, callerPC, callerFP uint64
	for {
		loc, ip, ok := unwind.ScanForReturnAddress(env, lastSP, count, size)
		if !ok {
			return nil
		}
		callerSP, callerPC = loc, ip
		if callerFP, ok = unwind.ReadWord(env, u.mask(callerSP-word), size); !ok {
			return nil
		}
		count -= int(u.mask(callerSP-lastSP) / word)
		lastSP = u.mask(callerSP + word)
		if u.mask(callerFP-callerSP) < maxFrameStackSize || count <= 0 {
			break
		}
	}
	if count == 0 {
		return nil
	}
	callerSP = u.mask(callerSP + word)
	callerPC = u.mask(callerPC - 2*word)
	f := unwind.NewCaller(env, last, unwind.TrustScan)
	f.Valid = 0
	f.Set(mips.RegPC, callerPC)
	f.Set(mips.RegSP, callerSP)
	f.Set(mips.RegFP, callerFP)
	f.Set(mips.RegRA, u.mask(callerPC+2*word))
	return f
}
