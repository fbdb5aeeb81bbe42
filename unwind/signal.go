package unwind

import (
	"bytes"
	"slices"
)

// ReadCode returns n bytes of code at addr (env's ReadCode), or nil when
// the bytes are not in the dump.
func ReadCode(env Env, addr uint64, n int) []byte {
	b, err := env.ReadCode(addr, n)
	if err != nil || len(b) < n {
		return nil
	}
	return b[:n]
}

// Trampoline is one form of a kernel signal-return trampoline: the code the
// handler returns to, which calls sigreturn with the signal frame on the
// stack.
type Trampoline struct {
	// Code is the trampoline's first bytes, as the CPU fetches them.
	Code []byte
	// Names are the symbols the trampoline goes by (libc's and the vDSO's).
	Names []string
	// Frame lays out the registers the kernel saved.
	Frame *SignalFrame
}

// SignalFrame says where a signal frame keeps the interrupted registers.
type SignalFrame struct {
	// Regs returns the address of the saved registers (the mcontext's
	// general registers) given the stack pointer the trampoline runs with;
	// it may read the stack (i386's rt frame points to its ucontext).
	Regs func(env Env, sp uint64) (uint64, bool)
	// Offsets maps register slots to byte offsets from that address; slots
	// the frame does not save are absent.
	Offsets map[int]uint64
	// WordSize is the size of each saved register: 4 or 8.
	WordSize int
	// Check reports whether the stack at sp (the stack pointer the
	// trampoline runs with) holds this frame, recognised from its own
	// fields when the trampoline's code is not in the dump and no symbol
	// names it: the pointers the frame holds into itself, its magic
	// numbers, segment selectors or processor state. Nil: the frame is
	// recognised by its trampoline only.
	Check func(env Env, sp uint64) bool
}

// FindTrampoline returns the trampoline at addr, recognised by its code
// bytes in the dump's memory or else by the name of the symbol covering it,
// or nil.
func FindTrampoline(env Env, addr uint64, ts []Trampoline) *Trampoline {
	if t := trampolineByCode(env, addr, ts); t != nil {
		return t
	}
	return trampolineByName(env, addr, ts)
}

// trampolineByCode returns the trampoline whose code bytes are at addr in
// the dump's memory, or nil.
func trampolineByCode(env Env, addr uint64, ts []Trampoline) *Trampoline {
	for i := range ts {
		if c := ReadCode(env, addr, len(ts[i].Code)); c != nil && bytes.Equal(c, ts[i].Code) {
			return &ts[i]
		}
	}
	return nil
}

// trampolineByName returns the trampoline named by the symbol covering
// addr (env's FunctionName), or nil.
func trampolineByName(env Env, addr uint64, ts []Trampoline) *Trampoline {
	name := env.FunctionName(addr)
	if name == "" {
		return nil
	}
	for i := range ts {
		if slices.Contains(ts[i].Names, name) {
			return &ts[i]
		}
	}
	return nil
}

// OrTrampoline returns check extended to the start of a signal trampoline
// (one of ts, recognised by its code bytes, or by its symbol starting
// exactly at ra): the kernel makes a signal handler return there, so it is
// a return address with no call before it.
func OrTrampoline(check CallCheck, ts []Trampoline) CallCheck {
	return func(env Env, ra uint64) CallSite {
		if trampolineByCode(env, ra, ts) != nil {
			return CallBefore
		}
		if env.FunctionStart(ra) && trampolineByName(env, ra, ts) != nil {
			return CallBefore
		}
		return check(env, ra)
	}
}

// CallerOfSignal returns the interrupted frame when last is a signal
// trampoline (its code address codeAddr is one of ts): every register the
// signal frame saved, read from the stack at last's stack pointer (slot
// sp), with Trust TrustSignal and Interrupted set, so that its pc is looked
// up as is. It returns nil when last is not at a trampoline, the frame is
// not in the stack, or the saved stack pointer is not above last's. A
// caller's frame is at a trampoline only when MarkTrampoline marked it as
// it was found: its code is not looked at again.
func CallerOfSignal(env Env, last *Frame, codeAddr uint64, pc, sp int, ts []Trampoline) *Frame {
	if !last.Has(sp) || !Innermost(last) && !last.Trampoline {
		return nil
	}
	if last.Signal != nil {
		return savedRegs(env, last, last.Signal, pc, sp)
	}
	t := FindTrampoline(env, codeAddr, ts)
	if t == nil {
		return nil
	}
	return savedRegs(env, last, t.Frame, pc, sp)
}

// savedRegs returns the interrupted frame whose registers sf saved at
// last's stack pointer, or nil when they are not in the stack or the saved
// stack pointer is not above last's.
func savedRegs(env Env, last *Frame, sf *SignalFrame, pc, sp int) *Frame {
	base, ok := sf.Regs(env, last.Regs[sp])
	if !ok {
		return nil
	}
	f := NewFrame(env)
	f.Trust = TrustSignal
	f.Interrupted = true
	for slot, off := range sf.Offsets {
		if v, ok := ReadWord(env, base+off, sf.WordSize); ok {
			f.Set(slot, v)
		}
	}
	if !f.Has(pc) || !f.Has(sp) || f.Regs[sp] <= last.Regs[sp] {
		return nil
	}
	return f
}

// MarkTrampoline sets f.Trampoline when codeAddr, f's code address, is the
// entry of one of ts (its code bytes, or the symbol naming it), or, when
// the code at codeAddr is not in the dump, when the stack at f's stack
// pointer holds a signal frame of one of ts's layouts (StackSignalFrame;
// f.Signal is then that layout). pc and sp are the CPU's slots. An
// unwinder with trampolines calls it on every caller it finds but a signal
// frame's: CallerOfSignal trusts the mark.
func MarkTrampoline(env Env, f *Frame, codeAddr uint64, pc, sp int, ts []Trampoline) {
	if f == nil {
		return
	}
	if FindTrampoline(env, codeAddr, ts) != nil {
		f.Trampoline = true
		return
	}
	if sf := StackSignalFrame(env, f, codeAddr, pc, sp, ts); sf != nil {
		f.Trampoline, f.Signal = true, sf
	}
}

// StackSignalFrame returns the layout of the signal frame the stack holds
// at f's stack pointer (slot sp) when f's pc (code address codeAddr) may
// be a signal trampoline whose code is not in the dump: the code there is
// not in the dump, and the frame's Check accepts the stack. The registers
// it saved must then be an interrupted frame: its pc in a module and in
// memory the dump's map does not say is not executable, its stack pointer
// above the signal frame's saved registers. It returns nil otherwise.
// Breakpad's client saves neither the vDSO nor code around return
// addresses, and qemu-user's trampoline page belongs to no module, so
// this is how such dumps' signal frames are found.
func StackSignalFrame(env Env, f *Frame, codeAddr uint64, pc, sp int, ts []Trampoline) *SignalFrame {
	if !f.Has(sp) || ReadCode(env, codeAddr, 1) != nil {
		return nil
	}
	var tried []*SignalFrame
	for i := range ts {
		sf := ts[i].Frame
		if sf.Check == nil || slices.Contains(tried, sf) {
			continue
		}
		tried = append(tried, sf)
		if !sf.Check(env, f.Regs[sp]) {
			continue
		}
		g := savedRegs(env, f, sf, pc, sp)
		if g == nil || !interruptedPC(env, g.Regs[pc]) {
			continue
		}
		base, _ := sf.Regs(env, f.Regs[sp])
		if g.Regs[sp] < base+maxOffset(sf) {
			continue
		}
		return sf
	}
	return nil
}

// interruptedPC reports whether pc can be an interrupted instruction: in
// a module, and not where the dump's map says nothing executable is.
func interruptedPC(env Env, pc uint64) bool {
	if !env.InModule(pc) {
		return false
	}
	exec, known := env.Executable(pc)
	return exec || !known
}

// maxOffset returns the end of sf's saved registers, from their base.
func maxOffset(sf *SignalFrame) uint64 {
	var m uint64
	for _, off := range sf.Offsets {
		m = max(m, off)
	}
	return m + uint64(sf.WordSize)
}

// SignalNumber reports whether v is a signal number (1-64).
func SignalNumber(v uint64) bool { return v >= 1 && v <= 64 }
