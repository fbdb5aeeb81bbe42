package arm64

import (
	"strconv"

	"github.com/gobreakpad/gobreakpad/arch/unwind"
)

// NumRegs is the number of unwind.Context slots arm64 uses: x0-x28, then
// RegFP, RegLR, RegSP and RegPC, the order Breakpad prints them in.
const NumRegs = 33

var names, cfiNames = func() ([]string, []string) {
	n := make([]string, NumRegs)
	c := make([]string, NumRegs)
	for i := 0; i < 31; i++ {
		n[i] = "x" + strconv.Itoa(i)
		c[i] = n[i]
	}
	n[RegFP], n[RegLR], n[RegSP], n[RegPC] = "fp", "lr", "sp", "pc"
	c[RegSP], c[RegPC] = "sp", "pc"
	return n, c
}()

// calleeSaved: x19-x29 are kept from the callee when CFI does not mention them.
const calleeSaved = (1<<30 - 1) &^ (1<<19 - 1)

const allValid = 1<<NumRegs - 1

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

// Names implements unwind.CPU.
func (*Unwinder) Names() []string { return names }

// CFINames implements unwind.CPU.
func (*Unwinder) CFINames() []string { return cfiNames }

// PrintAlways implements unwind.CPU.
func (*Unwinder) PrintAlways() uint64 { return allValid }

// PC implements unwind.CPU.
func (*Unwinder) PC() int { return RegPC }

// SP implements unwind.CPU.
func (*Unwinder) SP() int { return RegSP }

// WordSize implements unwind.CPU.
func (*Unwinder) WordSize() int { return 8 }

// ReportsPC implements unwind.CPU.
func (*Unwinder) ReportsPC() bool { return false }

// InstructionAdjust implements unwind.CPU: instructions are 4 bytes.
func (*Unwinder) InstructionAdjust() uint64 { return 4 }

// ContextFrame implements unwind.CPU; raw must be a *Context or *OldContext.
func (u *Unwinder) ContextFrame(raw any, env unwind.Env) (*unwind.Frame, error) {
	var c *Context
	switch r := raw.(type) {
	case *Context:
		c = r
	case *OldContext:
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
	f.Regs[RegLR] = u.strip(env, f.Regs[RegLR])
	return f, nil
}

// Caller implements unwind.CPU: CFI, then the frame pointer, then scanning.
func (u *Unwinder) Caller(env unwind.Env, frames []*unwind.Frame, scanAllowed bool) *unwind.Frame {
	last := frames[len(frames)-1]
	addr := unwind.RuleAddress(last, RegPC, 4)
	var f *unwind.Frame
	if rules := env.CFI(addr); rules != nil {
		f = unwind.CallerByCFI(env, &last.Context, rules, NumRegs, calleeSaved, RegSP, RegPC)
		if f != nil && (!f.Has(RegSP) || !f.Has(RegPC)) {
			f = nil
		}
		if f != nil {
			f.Regs[RegPC] = u.strip(env, f.Regs[RegPC])
			f.Trust = unwind.TrustCFI
		}
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
	if unwind.TerminateWalk(f.Regs[RegPC], f.Regs[RegSP], last.Regs[RegSP], last.Trust == unwind.TrustContext) {
		return nil
	}
	return f
}

func (u *Unwinder) byFramePointer(env unwind.Env, frames []*unwind.Frame) *unwind.Frame {
	last := frames[len(frames)-1]
	if !last.Has(RegLR) {
		u.correctLR(env, frames)
	}
	fp := last.Regs[RegFP]
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
	sp := last.Regs[RegSP]
	if fp != 0 {
		sp = fp + 16
	}
	f := &unwind.Frame{Context: last.Context, Trust: unwind.TrustFP}
	f.Regs[RegFP], f.Regs[RegSP], f.Regs[RegPC], f.Regs[RegLR] = callerFP, sp, last.Regs[RegLR], callerLR
	f.Valid = 1<<RegPC | 1<<RegLR | 1<<RegFP | 1<<RegSP
	return f
}

// correctLR recovers the last frame's lr from its callee's frame record when
// CFI left it unknown but agrees with the frame pointer.
func (u *Unwinder) correctLR(env unwind.Env, frames []*unwind.Frame) {
	last := frames[len(frames)-1]
	if len(frames) < 2 || last.Regs[RegFP] <= last.Regs[RegSP] {
		return
	}
	callee := frames[len(frames)-2]
	cfp := callee.Regs[RegFP]
	var lastFP, lastLR uint64
	if cfp != 0 {
		var ok bool
		if lastFP, ok = unwind.Read64(env, cfp); !ok {
			return
		}
	}
	if last.Regs[RegFP] != lastFP {
		return
	}
	if cfp != 0 {
		var ok bool
		if lastLR, ok = unwind.Read64(env, cfp+8); !ok {
			return
		}
	}
	last.Regs[RegLR] = u.strip(env, lastLR)
}

func byScan(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	return unwind.CallerByScan(env, last, RegPC, RegSP, unwind.ScanWords(last.Trust), 8, unwind.TrustScan)
}
