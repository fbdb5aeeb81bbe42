// Package amd64 is the x86-64 stack unwinder: it finds each caller frame
// the way Breakpad's processor does for this CPU, over the register file and
// names of arch/amd64 and the shared machinery of package unwind.
package amd64

import (
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/cfi"
	"github.com/gobreakpad/gobreakpad/unwind"
	"golang.org/x/arch/x86/x86asm"
)

// calleeSaved: kept from the callee when CFI does not mention them.
const calleeSaved = 1<<amd64.RBX | 1<<amd64.RBP | 1<<amd64.R12 | 1<<amd64.R13 | 1<<amd64.R14 | 1<<amd64.R15

const allValid = 1<<amd64.NumRegs - 1

// Unwinder walks x86-64 stacks the way Breakpad's StackwalkerAMD64 does.
type Unwinder struct{}

// CFINames implements unwind.CPU.
func (Unwinder) CFINames() []string { return amd64.CFIRegisterNames }

// PC implements unwind.CPU.
func (Unwinder) PC() int { return amd64.RIP }

// SP implements unwind.CPU.
func (Unwinder) SP() int { return amd64.RSP }

// WordSize implements unwind.CPU.
func (Unwinder) WordSize() int { return 8 }

// InstructionAdjust implements unwind.CPU.
func (Unwinder) InstructionAdjust() uint64 { return 1 }

// ContextFrame implements unwind.CPU; raw must be a *amd64.Context.
func (Unwinder) ContextFrame(raw any, _ unwind.Env) (*unwind.Frame, error) {
	c, err := unwind.ContextAs[amd64.Context](raw)
	if err != nil {
		return nil, err
	}
	f := &unwind.Frame{Trust: unwind.TrustContext}
	f.Regs = [unwind.MaxRegs]uint64{c.Rax, c.Rdx, c.Rcx, c.Rbx, c.Rsi, c.Rdi, c.Rbp, c.Rsp,
		c.R8, c.R9, c.R10, c.R11, c.R12, c.R13, c.R14, c.R15, c.Rip}
	f.Valid = allValid
	return f, nil
}

// Caller implements unwind.CPU: the registers a signal frame saved (when
// last is the signal trampoline), then CFI, then (Windows, context frame) a
// simulated return, then (not Windows) the frame pointer, then scanning.
func (Unwinder) Caller(env unwind.Env, frames []*unwind.Frame, scanAllowed bool) *unwind.Frame {
	last := frames[len(frames)-1]
	if f := bySignalFrame(env, last); f != nil {
		return f
	}
	var f *unwind.Frame
	if rules := env.CFI(unwind.RuleAddress(last, amd64.RIP, 1)); rules != nil {
		if unwind.Outermost(rules) {
			return nil
		}
		f = byCFI(env, last, rules)
		// Rules that give no return address at a realigned frame lack
		// the expressions its CFA needs: its frame record and saved
		// CFA decide.
		if f != nil && unwind.ImplausibleCaller(env, f.Regs[amd64.RIP]) && !env.Windows() {
			if g := byFramePointer(env, last); g != nil && g.Regs[amd64.RSP] != last.Regs[amd64.RBP]+16 {
				f = g
			}
		}
	}
	// A context frame that raised its exception by a call is no leaf
	// (raisedByCall): no return to simulate.
	if f == nil && last.Trust == unwind.TrustContext && env.Windows() && !raisedByCall(env, last) {
		f = bySimulatedReturn(env, last)
	}
	if f == nil {
		f = unwind.CallerOfNullCall(env, last, amd64.RIP, amd64.RSP, amd64.RBP, 8)
	}
	if f == nil && !env.Windows() {
		f = byFrameState(env, last)
	}
	if f == nil && !env.Windows() {
		f = byFramePointer(env, last)
	}
	if f == nil && scanAllowed {
		f = byScan(env, last)
	}
	if f == nil {
		return nil
	}
	if unwind.TerminateWalk(f.Regs[amd64.RIP], f.Regs[amd64.RSP], last.Regs[amd64.RSP], unwind.Innermost(last)) {
		return nil
	}
	unwind.MarkTrampoline(env, f, f.Regs[amd64.RIP], amd64.RIP, amd64.RSP, trampolines)
	return f
}

func byCFI(env unwind.Env, last *unwind.Frame, rules *cfi.RuleSet) *unwind.Frame {
	f := unwind.CallerByCFI(env, &last.Context, rules, amd64.NumRegs, calleeSaved, amd64.RSP, amd64.RIP)
	if f == nil || !f.Has(amd64.RIP) || !f.Has(amd64.RSP) || f.Regs[amd64.RIP] == 0 || f.Regs[amd64.RSP] == 0 {
		return nil
	}
	f.Trust = unwind.TrustCFI
	return f
}

// callBefore checks x86-64 call instructions before scanned return
// addresses (or a signal trampoline's start, where a handler returns).
var callBefore = unwind.OrTrampoline(unwind.X86CallBefore(64), trampolines)

// nonCanonical reports whether p is outside x86-64's canonical address halves.
func nonCanonical(p uint64) bool { return p > 0x7FFFFFFFFFFF && p < 0xFFFF800000000000 }

func byFramePointer(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	rbp := last.Regs[amd64.RBP]
	// An rbp below rsp is junk: left to scanning (Breakpad follows it
	// and the walk ends, the caller's rsp not above the callee's).
	if rbp%8 != 0 || rbp < last.Regs[amd64.RSP] {
		return nil
	}
	rip, ok1 := unwind.Read64(env, rbp+8)
	callerRBP, ok2 := unwind.Read64(env, rbp)
	if !ok1 || !ok2 {
		return nil
	}
	rsp := rbp + 16
	if nonCanonical(rip) || rsp <= rbp || callerRBP < rsp {
		return nil
	}
	if _, ok := unwind.Read64(env, callerRBP); !ok {
		return nil
	}
	// A realigned frame (see unwind.RealignedCFA): the caller's rsp is
	// the CFA the prologue saved, above the alignment gap.
	if cfa, ok := unwind.RealignedCFA(env, rbp, rip, 8, 8); ok {
		rsp = cfa
	}
	f := unwind.NewCaller(env, last, unwind.TrustFP)
	f.Regs[amd64.RIP], f.Regs[amd64.RSP], f.Regs[amd64.RBP] = rip, rsp, callerRBP
	f.Valid = 1<<amd64.RIP | 1<<amd64.RSP | 1<<amd64.RBP
	return f
}

// regSlot maps a pushed x86-64 register to its slot.
func regSlot(r x86asm.Reg) (int, bool) {
	switch r {
	case x86asm.RBX:
		return amd64.RBX, true
	case x86asm.RBP:
		return amd64.RBP, true
	case x86asm.R12:
		return amd64.R12, true
	case x86asm.R13:
		return amd64.R13, true
	case x86asm.R14:
		return amd64.R14, true
	case x86asm.R15:
		return amd64.R15, true
	}
	return 0, false
}

// byFrameState finds the caller of the context frame (or of a frame a
// signal frame restored) whose function has not made its frame pointer
// yet at the pc, from the function's code decoded from its start
// (unwind.X86FrameState): the return address is at rsp plus what the
// function pushed and subtracted so far, and rbp still holds the caller's
// (or lies where the function pushed it). The frame pointer would skip
// the caller. Callers found from a return address are left to the frame
// pointer and scanning, as Breakpad's.
func byFrameState(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	if !last.Has(amd64.RSP) {
		return nil
	}
	st, ok := unwind.X86FrameState(env, last.Regs[amd64.RIP], unwind.Innermost(last), 64, regSlot)
	if !ok {
		return nil
	}
	if st.Framed {
		return byMadeFramePointer(env, last)
	}
	return unwind.CallerOfFrameState(env, last, st, last.Regs[amd64.RSP]+st.CFA, amd64.RIP, amd64.RSP, 8, calleeSaved, func(rip uint64) bool {
		return !nonCanonical(rip) && env.SeemsValid(rip-1) && callBefore(env, rip) != unwind.NoCallBefore
	})
}

// byMadeFramePointer is the frame-pointer step from a frame whose code
// shows it made its frame pointer (push rbp; mov rbp, rsp): the return
// address is at rbp+8 and the caller's rbp at rbp, even when that saved
// value is no stack address (code built without frame pointers keeps
// other values in rbp), which the plain rule takes for a broken chain.
func byMadeFramePointer(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	rbp := last.Regs[amd64.RBP]
	if !last.Has(amd64.RBP) || rbp%8 != 0 || rbp < last.Regs[amd64.RSP] {
		return nil
	}
	rip, ok1 := unwind.Read64(env, rbp+8)
	callerRBP, ok2 := unwind.Read64(env, rbp)
	if !ok1 || !ok2 || nonCanonical(rip) || !env.SeemsValid(rip-1) || callBefore(env, rip) == unwind.NoCallBefore {
		return nil
	}
	f := unwind.NewCaller(env, last, unwind.TrustFP)
	f.Valid &= calleeSaved
	f.Set(amd64.RIP, rip)
	f.Set(amd64.RSP, rbp+16)
	f.Set(amd64.RBP, callerRBP)
	return f
}

func bySimulatedReturn(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	loc, rip, ok := unwind.ScanForReturnAddress(env, last.Regs[amd64.RSP], 1, 8)
	if !ok {
		return nil
	}
	f := unwind.NewCaller(env, last, unwind.TrustLeaf)
	f.Regs[amd64.RIP] = rip
	f.Regs[amd64.RSP] = loc + 8
	return f
}

// byScan finds last's caller by scanning its stack for a return address
// (winScan on Windows; elsewhere Breakpad's scan, past a copy of last's own
// return address: repeatsReturnAddress), then recovers its rbp.
func byScan(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	var (
		loc, rip uint64
		trust    unwind.Trust
		ok       bool
	)
	if env.Windows() {
		loc, rip, trust, ok = winScan(env, last)
	} else {
		words := unwind.ScanWords(last.Trust)
		loc, rip, trust, ok = unwind.ScanForCaller(env, last.Regs[amd64.RSP], words, 8, callBefore)
		if ok && repeatsReturnAddress(last, loc, rip) {
			// Scan on as the walk would from the copy's frame.
			loc, rip, trust, ok = unwind.ScanForCaller(env, loc+8, words, 8, callBefore)
		}
	}
	if !ok {
		return nil
	}
	if trust != unwind.TrustCallSite {
		trust = unwind.TrustScan
	}
	f := unwind.NewCaller(env, last, trust)
	f.Regs[amd64.RIP], f.Regs[amd64.RSP] = rip, loc+8
	f.Valid = 1<<amd64.RIP | 1<<amd64.RSP
	if last.Has(amd64.RBP) {
		// A function usually pushes its caller's rbp right below the return
		// address (at loc); otherwise an rbp above it may be unchanged.
		if loc-8 == last.Regs[amd64.RBP] {
			if v, ok := unwind.Read64(env, last.Regs[amd64.RBP]); ok && v > loc {
				f.Set(amd64.RBP, v)
			}
		} else if last.Regs[amd64.RBP] >= loc+8 {
			f.Set(amd64.RBP, last.Regs[amd64.RBP])
		}
	}
	return f
}

// repeatsReturnAddress reports whether a scan candidate rip found at loc
// is a copy of last's own return address at last's stack pointer, which
// cannot be the return address out of last's function (docs/stackwalk.md,
// "A copy of a frame's return address at its stack pointer"): last's pc is
// a return address (last is not the innermost frame), so its rsp is the
// rsp of the call that pc follows, 16-aligned by the x86-64 ABI, while the
// function's own return address lies at its entry rsp, 8 modulo 16: at
// least one word above. The same return address besides would make the
// function its own caller at the same call site. macOS's dyld leaves such
// a copy (the startGlue variable of __dyld_start) right above the frame of
// libdyld's start, the thread's outermost; Breakpad and rust-minidump take
// it for one frame more.
func repeatsReturnAddress(last *unwind.Frame, loc, rip uint64) bool {
	return !unwind.Innermost(last) && loc == last.Regs[amd64.RSP] && rip == last.Regs[amd64.RIP]
}

// CallTarget returns the target of the direct call ending at ra
// (unwind.CPU).
func (Unwinder) CallTarget(env unwind.Env, ra uint64) (uint64, bool) {
	return unwind.X86CallTarget(env, ra, 64)
}
