package arm

import (
	"github.com/gobreakpad/gobreakpad/arch/unwind"
)

// Register slots of an unwind.Context for 32-bit ARM, in Breakpad's print
// order: r0-r10, r12, then fp (r11), sp, lr and pc.
const (
	SlotR12 = 11
	SlotFP  = 12
	SlotSP  = 13
	SlotLR  = 14
	SlotPC  = 15
	NumRegs = 16
)

var names = []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10",
	"r12", "fp", "sp", "lr", "pc"}

var cfiNames = []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10",
	"r12", "r11", "sp", "lr", "pc"}

// slotOf maps an Iregs index to its slot.
var slotOf = [16]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, SlotFP, SlotR12, SlotSP, SlotLR, SlotPC}

// calleeSaved: r4-r11 are kept from the callee when CFI does not mention them.
const calleeSaved = 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<SlotFP

const allValid = 1<<NumRegs - 1

// Unwinder walks 32-bit ARM stacks the way Breakpad's StackwalkerARM does:
// CFI (except on iOS), then (iOS only) the r7 frame pointer, then scanning.
type Unwinder struct {
	// IOS selects iOS conventions: r7 is the frame pointer and CFI is not
	// trusted, as in Breakpad.
	IOS bool
}

// Names implements unwind.CPU.
func (Unwinder) Names() []string { return names }

// CFINames implements unwind.CPU.
func (Unwinder) CFINames() []string { return cfiNames }

// PrintAlways implements unwind.CPU.
func (Unwinder) PrintAlways() uint64 { return allValid }

// PC implements unwind.CPU.
func (Unwinder) PC() int { return SlotPC }

// SP implements unwind.CPU.
func (Unwinder) SP() int { return SlotSP }

// WordSize implements unwind.CPU.
func (Unwinder) WordSize() int { return 4 }

// ReportsPC implements unwind.CPU: ARM frames print their instruction address.
func (Unwinder) ReportsPC() bool { return false }

// InstructionAdjust implements unwind.CPU: enough to land inside a Thumb
// or ARM call instruction.
func (Unwinder) InstructionAdjust() uint64 { return 2 }

// ContextFrame implements unwind.CPU; raw must be a *Context.
func (Unwinder) ContextFrame(raw any, _ unwind.Env) (*unwind.Frame, error) {
	c, err := unwind.ContextAs[Context](raw)
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

// Caller implements unwind.CPU.
func (u Unwinder) Caller(env unwind.Env, frames []*unwind.Frame, scanAllowed bool) *unwind.Frame {
	last := frames[len(frames)-1]
	addr := unwind.RuleAddress(last, SlotPC, 2)
	var f *unwind.Frame
	if !u.IOS {
		if rules := env.CFI(addr); rules != nil {
			f = unwind.CallerByCFI(env, &last.Context, rules, NumRegs, calleeSaved, SlotSP, SlotPC)
			if f != nil && (!f.Has(SlotSP) || !f.Has(SlotPC)) {
				f = nil
			}
			if f != nil {
				f.Trust = unwind.TrustCFI
			}
		}
	}
	if f == nil && u.IOS {
		f = byFramePointer(env, last)
	}
	if f == nil && scanAllowed {
		f = unwind.CallerByScan(env, last, SlotPC, SlotSP, unwind.ScanWords(last.Trust), 4, unwind.TrustScan)
	}
	if f == nil {
		return nil
	}
	if unwind.TerminateWalk(f.Regs[SlotPC], f.Regs[SlotSP], last.Regs[SlotSP], last.Trust == unwind.TrustContext) {
		return nil
	}
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
	sp := last.Regs[SlotSP]
	if lastFP != 0 {
		sp = uint64(uint32(lastFP) + 8)
	}
	f := &unwind.Frame{Context: last.Context, Trust: unwind.TrustFP}
	f.Regs[fp], f.Regs[SlotSP], f.Regs[SlotPC], f.Regs[SlotLR] = uint64(callerFP), sp, last.Regs[SlotLR], uint64(callerLR)
	f.Valid = 1<<SlotPC | 1<<SlotLR | 1<<fp | 1<<SlotSP
	return f
}
