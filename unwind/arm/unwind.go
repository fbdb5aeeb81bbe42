// Package arm is the 32-bit ARM stack unwinder: it finds each caller frame
// the way Breakpad's processor does for this CPU, over the register file and
// names of arch/arm and the shared machinery of package unwind.
package arm

import (
	"github.com/gobreakpad/gobreakpad/arch/arm"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// slotOf maps an arm.Iregs index to its slot.
var slotOf = [16]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, arm.SlotFP, arm.SlotR12, arm.SlotSP, arm.SlotLR, arm.SlotPC}

// calleeSaved: r4-r11 are kept from the callee when CFI does not mention them.
const calleeSaved = 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<arm.SlotFP

const allValid = 1<<arm.NumRegs - 1

// Unwinder walks 32-bit ARM stacks the way Breakpad's StackwalkerARM does:
// CFI (except on iOS), then (iOS only) the r7 frame pointer, then scanning.
type Unwinder struct {
	// IOS selects iOS conventions: r7 is the frame pointer and CFI is not
	// trusted, as in Breakpad.
	IOS bool
}

// CFINames implements unwind.CPU.
func (Unwinder) CFINames() []string { return arm.CFIRegisterNames }

// PC implements unwind.CPU.
func (Unwinder) PC() int { return arm.SlotPC }

// SP implements unwind.CPU.
func (Unwinder) SP() int { return arm.SlotSP }

// WordSize implements unwind.CPU.
func (Unwinder) WordSize() int { return 4 }

// InstructionAdjust implements unwind.CPU: enough to land inside a Thumb
// or ARM call instruction.
func (Unwinder) InstructionAdjust() uint64 { return 2 }

// ContextFrame implements unwind.CPU; raw must be a *arm.Context.
func (Unwinder) ContextFrame(raw any, _ unwind.Env) (*unwind.Frame, error) {
	c, err := unwind.ContextAs[arm.Context](raw)
	if err != nil {
		return nil, err
	}
	f := &unwind.Frame{Trust: unwind.TrustContext}
	for i, v := range c.Iregs {
		f.Regs[slotOf[i]] = uint64(v)
	}
	f.Valid = allValid
	return f, nil
}

// Caller implements unwind.CPU: the registers a signal frame saved (when
// last is a signal trampoline), then CFI, then lr for a wild pc, then
// (iOS) the frame pointer, then scanning.
func (u Unwinder) Caller(env unwind.Env, frames []*unwind.Frame, scanAllowed bool) *unwind.Frame {
	last := frames[len(frames)-1]
	if f := bySignalFrame(env, last); f != nil {
		return f
	}
	addr := unwind.RuleAddress(last, arm.SlotPC, 2)
	var f *unwind.Frame
	if !u.IOS {
		if rules := env.CFI(addr); unwind.Outermost(rules) {
			return nil
		} else if rules != nil {
			f = unwind.CallerByCFI(env, &last.Context, rules, arm.NumRegs, calleeSaved, arm.SlotSP, arm.SlotPC)
			if f != nil && (!f.Has(arm.SlotSP) || !f.Has(arm.SlotPC)) {
				f = nil
			}
			if f != nil {
				f.Trust = unwind.TrustCFI
			}
		}
	}
	if f == nil {
		f = unwind.CallerOfWildLeaf(env, last, arm.SlotPC, arm.SlotLR, calleeSaved|1<<arm.SlotSP|1<<7)
	}
	if f == nil && u.IOS {
		f = byFramePointer(env, last)
	}
	if f == nil && scanAllowed {
		f = unwind.CallerByScanChecked(env, last, arm.SlotPC, arm.SlotSP, unwind.ScanWords(last.Trust), 4, unwind.TrustScan, callBefore)
	}
	if f == nil {
		return nil
	}
	if unwind.TerminateWalk(f.Regs[arm.SlotPC], f.Regs[arm.SlotSP], last.Regs[arm.SlotSP], unwind.Innermost(last)) {
		return nil
	}
	unwind.MarkTrampoline(env, f, f.Regs[arm.SlotPC]&^1, arm.SlotPC, arm.SlotSP, trampolines)
	return f
}

// byFramePointer follows iOS's r7 frame records: [r7] = caller r7,
// [r7+4] = caller lr; the caller's pc is the callee's lr.
func byFramePointer(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	const fp = 7
	if !last.Has(fp) {
		return nil
	}
	lastFP := last.Regs[fp]
	var callerFP, callerLR uint32
	if lastFP != 0 {
		var ok bool
		if callerFP, ok = unwind.Read32(env, lastFP); !ok {
			return nil
		}
		if callerLR, ok = unwind.Read32(env, lastFP+4); !ok {
			return nil
		}
	}
	sp := last.Regs[arm.SlotSP]
	if lastFP != 0 {
		sp = uint64(uint32(lastFP) + 8)
	}
	f := unwind.NewCaller(env, last, unwind.TrustFP)
	f.Regs[fp], f.Regs[arm.SlotSP], f.Regs[arm.SlotPC], f.Regs[arm.SlotLR] = uint64(callerFP), sp, last.Regs[arm.SlotLR], uint64(callerLR)
	f.Valid = 1<<arm.SlotPC | 1<<arm.SlotLR | 1<<fp | 1<<arm.SlotSP
	return f
}
