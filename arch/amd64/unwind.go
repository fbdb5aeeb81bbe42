package amd64

import (
	"github.com/gobreakpad/gobreakpad/arch/unwind"
	"github.com/gobreakpad/gobreakpad/cfi"
)

// Register slots of an unwind.Context for x86-64, in Breakpad's print order.
const (
	RAX = iota
	RDX
	RCX
	RBX
	RSI
	RDI
	RBP
	RSP
	R8
	R9
	R10
	R11
	R12
	R13
	R14
	R15
	RIP
	NumRegs
)

var names = []string{"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"}

// cfiNames are the registers' names in STACK CFI rules.
var cfiNames = []string{"$rax", "$rdx", "$rcx", "$rbx", "$rsi", "$rdi", "$rbp", "$rsp",
	"$r8", "$r9", "$r10", "$r11", "$r12", "$r13", "$r14", "$r15", "$rip"}

// calleeSaved: kept from the callee when CFI does not mention them.
const calleeSaved = 1<<RBX | 1<<RBP | 1<<R12 | 1<<R13 | 1<<R14 | 1<<R15

const allValid = 1<<NumRegs - 1

// Unwinder walks x86-64 stacks the way Breakpad's StackwalkerAMD64 does.
type Unwinder struct{}

// Names implements unwind.CPU.
func (Unwinder) Names() []string { return names }

// CFINames implements unwind.CPU.
func (Unwinder) CFINames() []string { return cfiNames }

// PrintAlways implements unwind.CPU.
func (Unwinder) PrintAlways() uint64 { return allValid }

// PC implements unwind.CPU.
func (Unwinder) PC() int { return RIP }

// SP implements unwind.CPU.
func (Unwinder) SP() int { return RSP }

// WordSize implements unwind.CPU.
func (Unwinder) WordSize() int { return 8 }

// ReportsPC implements unwind.CPU.
func (Unwinder) ReportsPC() bool { return true }

// InstructionAdjust implements unwind.CPU.
func (Unwinder) InstructionAdjust() uint64 { return 1 }

// ContextFrame implements unwind.CPU; raw must be a *Context.
func (Unwinder) ContextFrame(raw any, _ unwind.Env) (*unwind.Frame, error) {
	c, err := unwind.ContextAs[Context](raw)
	if err != nil {
		return nil, err
	}
	f := &unwind.Frame{Trust: unwind.TrustContext}
	f.Regs = [unwind.MaxRegs]uint64{c.Rax, c.Rdx, c.Rcx, c.Rbx, c.Rsi, c.Rdi, c.Rbp, c.Rsp,
		c.R8, c.R9, c.R10, c.R11, c.R12, c.R13, c.R14, c.R15, c.Rip}
	f.Valid = allValid
	return f, nil
}

// Caller implements unwind.CPU: CFI, then (Windows, context frame) a
// simulated return, then (not Windows) the frame pointer, then scanning.
func (Unwinder) Caller(env unwind.Env, frames []*unwind.Frame, scanAllowed bool) *unwind.Frame {
	last := frames[len(frames)-1]
	var f *unwind.Frame
	if rules := env.CFI(unwind.RuleAddress(last, RIP, 1)); rules != nil {
		f = byCFI(env, last, rules)
	}
	if f == nil && last.Trust == unwind.TrustContext && env.Windows() {
		f = bySimulatedReturn(env, last)
	}
	if f == nil {
		f = unwind.CallerOfNullCall(env, last, RIP, RSP, RBP, 8)
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
	if unwind.TerminateWalk(f.Regs[RIP], f.Regs[RSP], last.Regs[RSP], last.Trust == unwind.TrustContext) {
		return nil
	}
	return f
}

func byCFI(env unwind.Env, last *unwind.Frame, rules *cfi.RuleSet) *unwind.Frame {
	f := unwind.CallerByCFI(env, &last.Context, rules, NumRegs, calleeSaved, RSP, RIP)
	if f == nil || !f.Has(RIP) || !f.Has(RSP) || f.Regs[RIP] == 0 || f.Regs[RSP] == 0 {
		return nil
	}
	f.Trust = unwind.TrustCFI
	return f
}

// nonCanonical reports whether p is outside x86-64's canonical address halves.
func nonCanonical(p uint64) bool { return p > 0x7FFFFFFFFFFF && p < 0xFFFF800000000000 }

func byFramePointer(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	rbp := last.Regs[RBP]
	if rbp%8 != 0 {
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
	f := &unwind.Frame{Context: last.Context, Trust: unwind.TrustFP}
	f.Regs[RIP], f.Regs[RSP], f.Regs[RBP] = rip, rsp, callerRBP
	f.Valid = 1<<RIP | 1<<RSP | 1<<RBP
	return f
}

func bySimulatedReturn(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	loc, rip, ok := unwind.ScanForReturnAddress(env, last.Regs[RSP], 1, 8)
	if !ok {
		return nil
	}
	f := &unwind.Frame{Context: last.Context, Trust: unwind.TrustLeaf}
	f.Regs[RIP] = rip
	f.Regs[RSP] = loc + 8
	return f
}

func byScan(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	f := unwind.CallerByScan(env, last, RIP, RSP, unwind.ScanWords(last.Trust), 8, unwind.TrustScan)
	if f == nil {
		return nil
	}
	loc := f.Regs[RSP] - 8 // where the return address was found
	if last.Has(RBP) {
		// A function usually pushes its caller's rbp right below the return
		// address; otherwise an rbp above the return address may be unchanged.
		if loc-8 == last.Regs[RBP] {
			if v, ok := unwind.Read64(env, last.Regs[RBP]); ok && v > loc {
				f.Set(RBP, v)
			}
		} else if last.Regs[RBP] >= loc+8 {
			f.Set(RBP, last.Regs[RBP])
		}
	}
	return f
}
