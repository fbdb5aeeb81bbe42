// Package arm64 is the AArch64 stack unwinder: it finds each caller frame
// the way Breakpad's processor does for this CPU, over the register file and
// names of arch/arm64 and the shared machinery of package unwind.
package arm64

import (
	"github.com/gobreakpad/gobreakpad/arch/arm64"

	"github.com/gobreakpad/gobreakpad/unwind"
)

// calleeSaved: x19-x29 are kept from the callee when CFI does not mention them.
const calleeSaved = (1<<30 - 1) &^ (1<<19 - 1)

const allValid = 1<<arm64.NumRegs - 1

// Unwinder walks arm64 stacks the way Breakpad's StackwalkerARM64 does.
// Pointer-authentication bits are stripped from return addresses using
// a mask derived from the highest loaded module, as Breakpad does.
type Unwinder struct {
	// AddressMask keeps the bits a code address can have; zero means all.
	AddressMask uint64
}

// NewUnwinder returns an unwinder whose pointer-authentication mask covers
// addresses up to highestModuleEnd (the end of the last module in the dump's
// list); zero keeps all bits.
func NewUnwinder(highestModuleEnd uint64) *Unwinder {
	if highestModuleEnd == 0 {
		return &Unwinder{}
	}
	m := highestModuleEnd
	m |= m >> 1
	m |= m >> 2
	m |= m >> 4
	m |= m >> 8
	m |= m >> 16
	m |= m >> 32
	return &Unwinder{AddressMask: m}
}

// strip removes pointer-authentication bits when what remains is inside a module.
func (u *Unwinder) strip(env unwind.Env, p uint64) uint64 {
	if u.AddressMask == 0 {
		return p
	}
	s := p & u.AddressMask
	if env.InModule(s) {
		return s
	}
	return p
}

// CFINames implements unwind.CPU.
func (*Unwinder) CFINames() []string { return arm64.CFIRegisterNames }

// PC implements unwind.CPU.
func (*Unwinder) PC() int { return arm64.RegPC }

// SP implements unwind.CPU.
func (*Unwinder) SP() int { return arm64.RegSP }

// WordSize implements unwind.CPU.
func (*Unwinder) WordSize() int { return 8 }

// InstructionAdjust implements unwind.CPU: instructions are 4 bytes.
func (*Unwinder) InstructionAdjust() uint64 { return 4 }

// ContextFrame implements unwind.CPU; raw must be a *arm64.Context or *arm64.OldContext.
func (u *Unwinder) ContextFrame(raw any, env unwind.Env) (*unwind.Frame, error) {
	var c *arm64.Context
	switch r := raw.(type) {
	case *arm64.Context:
		c = r
	case *arm64.OldContext:
		if r != nil {
			c = r.Upgrade()
		}
	}
	if c == nil {
		return nil, unwind.ErrContextType{Got: raw}
	}
	f := &unwind.Frame{Trust: unwind.TrustContext}
	copy(f.Regs[:], c.Iregs[:])
	f.Valid = allValid
	f.Regs[arm64.RegLR] = u.strip(env, f.Regs[arm64.RegLR])
	return f, nil
}

// Caller implements unwind.CPU: the registers a signal frame saved (when
// last is the signal trampoline), then CFI, then the frame pointer, then
// scanning.
func (u *Unwinder) Caller(env unwind.Env, frames []*unwind.Frame, scanAllowed bool) *unwind.Frame {
	last := frames[len(frames)-1]
	if f := u.bySignalFrame(env, last); f != nil {
		return f
	}
	if f := byHandler(env, last); f != nil {
		return f
	}
	addr := unwind.RuleAddress(last, arm64.RegPC, 4)
	var f *unwind.Frame
	if rules := env.CFI(addr); unwind.Outermost(rules) {
		return nil
	} else if rules != nil {
		f = unwind.CallerByCFI(env, &last.Context, rules, arm64.NumRegs, calleeSaved, arm64.RegSP, arm64.RegPC)
		if f != nil && (!f.Has(arm64.RegSP) || !f.Has(arm64.RegPC)) {
			f = nil
		}
		if f != nil {
			f.Regs[arm64.RegPC] = u.strip(env, f.Regs[arm64.RegPC])
			f.Trust = unwind.TrustCFI
		}
	}
	if f == nil {
		f = unwind.CallerOfWildLeaf(env, last, arm64.RegPC, arm64.RegLR, calleeSaved|1<<arm64.RegSP|1<<arm64.RegFP)
	}
	if f == nil {
		f = u.byFrameState(env, last)
	}
	if f == nil {
		f = u.byFramePointer(env, frames)
	}
	if f == nil && scanAllowed {
		f = byScan(env, last)
	}
	if f == nil {
		return nil
	}
	if unwind.TerminateWalk(f.Regs[arm64.RegPC], f.Regs[arm64.RegSP], last.Regs[arm64.RegSP], unwind.Innermost(last)) {
		return nil
	}
	unwind.MarkTrampoline(env, f, f.Regs[arm64.RegPC], arm64.RegPC, arm64.RegSP, trampolines)
	markHandler(env, f)
	return f
}

// markHandler turns a frame the frame-pointer step found and the stack
// marked as a signal trampoline (its code not in the dump) into the
// handler it is when its pc is a return address into a function the
// symbols name, not a trampoline's: the frame-pointer step gives a frame
// its CFA as stack pointer, which for a handler is where the kernel put
// the signal frame, so the stack check matches one frame early
// (testdata/signal/arm64-abort-nocode without CFI: abort's caller
// on_segv_abort, its return address the first byte of level2, was taken
// for the trampoline and looked up unadjusted, as level2).
func markHandler(env unwind.Env, f *unwind.Frame) {
	if f.Trust != unwind.TrustFP || !f.Trampoline || f.Signal == nil || !f.Has(arm64.RegLR) {
		return
	}
	pc := f.Regs[arm64.RegPC]
	if pc < 4 || env.FunctionName(pc-4) == "" || unwind.FindTrampoline(env, pc, trampolines) != nil {
		return
	}
	f.Trampoline, f.Handler = false, true
}

// byHandler returns the trampoline a handler marked by markHandler returns
// to: at its return address, with the handler's stack pointer, where the
// signal frame is; nil when last is no such handler.
func byHandler(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	if !last.Handler {
		return nil
	}
	f := unwind.NewCaller(env, last, unwind.TrustFP)
	f.Regs[arm64.RegPC] = last.Regs[arm64.RegLR]
	f.Valid &^= 1 << arm64.RegLR
	f.Trampoline, f.Signal = true, last.Signal
	return f
}

func (u *Unwinder) byFramePointer(env unwind.Env, frames []*unwind.Frame) *unwind.Frame {
	last := frames[len(frames)-1]
	if len(frames) > 1 && !last.Has(arm64.RegLR) && last.Trust == unwind.TrustFP {
		return u.byOwnRecord(env, last) // a frame byOwnRecord found
	}
	if !last.Has(arm64.RegLR) {
		lr, ok := u.correctedLR(env, frames)
		if len(frames) > 1 && last.Trust == unwind.TrustCFI && last.Regs[arm64.RegFP] > last.Regs[arm64.RegSP] &&
			(!ok || lr == last.Regs[arm64.RegPC]) {
			// Breakpad's correction either fails (the walk would end
			// at a stale lr) or takes the return address into this
			// frame from its callee's record, not the one out of it:
			// the frame's own record has that.
			return u.byOwnRecord(env, last)
		}
		if ok {
			last.Regs[arm64.RegLR] = lr
		}
	}
	fp := last.Regs[arm64.RegFP]
	if last.Trust == unwind.TrustLeaf && !last.Has(arm64.RegLR) && fp != 0 {
		return u.pastWildLeaf(env, last)
	}
	if last.Trust == unwind.TrustPrologue {
		// Its registers are its own (byFrameState), not Breakpad's
		// shifted ones: fp is its own frame record, if any.
		if fp == 0 || fp < last.Regs[arm64.RegSP] {
			return nil
		}
		return u.pastWildLeaf(env, last)
	}
	// A frame pointer below sp is junk: left to scanning (Breakpad
	// follows it and the walk ends, the caller's sp not above the
	// callee's).
	if fp != 0 && fp < last.Regs[arm64.RegSP] {
		return nil
	}
	var callerFP, callerLR uint64
	if fp != 0 {
		var ok bool
		if callerFP, ok = unwind.Read64(env, fp); !ok {
			return nil
		}
		if callerLR, ok = unwind.Read64(env, fp+8); !ok {
			return nil
		}
	}
	callerLR = u.strip(env, callerLR)
	sp := last.Regs[arm64.RegSP]
	if fp != 0 {
		sp = fp + 16
	}
	f := unwind.NewCaller(env, last, unwind.TrustFP)
	f.Regs[arm64.RegFP], f.Regs[arm64.RegSP], f.Regs[arm64.RegPC], f.Regs[arm64.RegLR] = callerFP, sp, last.Regs[arm64.RegLR], callerLR
	f.Valid = 1<<arm64.RegPC | 1<<arm64.RegLR | 1<<arm64.RegFP | 1<<arm64.RegSP
	return f
}

// byOwnRecord is the frame-pointer step from a frame whose registers are
// its own (found by CFI, or by this step), lr unknown: its fp, when set
// up, is its own frame record, which holds its caller's fp and the return
// address (pc = [fp+8], fp = [fp], sp = fp+16; lr stays unknown, so the
// caller's own step is this one again). Breakpad's step takes the caller's
// pc from lr, which it "corrects" from the callee's frame record: the
// return address into this frame, not out of it, so Breakpad repeats the
// frame and, its registers shifted by one frame, loses the callers after
// it (docs/stackwalk.md, "arm64 frame pointers after CFI").
func (u *Unwinder) byOwnRecord(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	fp := last.Regs[arm64.RegFP]
	if fp == 0 || fp < last.Regs[arm64.RegSP] {
		return nil
	}
	callerFP, ok := unwind.Read64(env, fp)
	if !ok {
		return nil
	}
	pc, ok := unwind.Read64(env, fp+8)
	if !ok {
		return nil
	}
	f := unwind.NewCaller(env, last, unwind.TrustFP)
	f.Regs[arm64.RegFP], f.Regs[arm64.RegSP], f.Regs[arm64.RegPC] = callerFP, fp+16, u.strip(env, pc)
	f.Valid = 1<<arm64.RegPC | 1<<arm64.RegFP | 1<<arm64.RegSP
	return f
}

// pastWildLeaf is the frame-pointer step from the function that called
// through a wild pointer (a frame found by unwind.CallerOfWildLeaf: its pc
// is the context's lr, its own lr lost to the call): its return address
// is in its frame record at fp, not in lr. The step is Breakpad's
// frame-pointer step from that frame with lr and fp taken from its record
// (lr = [fp+8], fp = [fp]): the caller's pc is that lr, and its lr, fp and
// sp come from the record the saved fp points to.
func (u *Unwinder) pastWildLeaf(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	fp := last.Regs[arm64.RegFP]
	recFP, ok := unwind.Read64(env, fp)
	if !ok {
		return nil
	}
	pc, ok := unwind.Read64(env, fp+8)
	if !ok {
		return nil
	}
	var callerFP, callerLR uint64
	if recFP != 0 {
		if callerFP, ok = unwind.Read64(env, recFP); !ok {
			return nil
		}
		if callerLR, ok = unwind.Read64(env, recFP+8); !ok {
			return nil
		}
	}
	f := unwind.NewCaller(env, last, unwind.TrustFP)
	f.Regs[arm64.RegFP], f.Regs[arm64.RegSP] = callerFP, recFP+16
	f.Regs[arm64.RegPC], f.Regs[arm64.RegLR] = u.strip(env, pc), u.strip(env, callerLR)
	f.Valid = 1<<arm64.RegPC | 1<<arm64.RegLR | 1<<arm64.RegFP | 1<<arm64.RegSP
	return f
}

// correctedLR returns the last frame's lr recovered from its callee's frame
// record when CFI left it unknown but agrees with the frame pointer
// (Breakpad's CorrectRegLRByFramePointer).
func (u *Unwinder) correctedLR(env unwind.Env, frames []*unwind.Frame) (uint64, bool) {
	last := frames[len(frames)-1]
	if len(frames) < 2 || last.Regs[arm64.RegFP] <= last.Regs[arm64.RegSP] {
		return 0, false
	}
	callee := frames[len(frames)-2]
	cfp := callee.Regs[arm64.RegFP]
	var lastFP, lastLR uint64
	if cfp != 0 {
		var ok bool
		if lastFP, ok = unwind.Read64(env, cfp); !ok {
			return 0, false
		}
	}
	if last.Regs[arm64.RegFP] != lastFP {
		return 0, false
	}
	if cfp != 0 {
		var ok bool
		if lastLR, ok = unwind.Read64(env, cfp+8); !ok {
			return 0, false
		}
	}
	return u.strip(env, lastLR), true
}

func byScan(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	return unwind.CallerByScanChecked(env, last, arm64.RegPC, arm64.RegSP, unwind.ScanWords(last.Trust), 8, unwind.TrustScan, callBefore)
}
