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
	t := FindTrampoline(env, codeAddr, ts)
	if t == nil {
		return nil
	}
	base, ok := t.Frame.Regs(env, last.Regs[sp])
	if !ok {
		return nil
	}
	f := &Frame{Trust: TrustSignal, Interrupted: true}
	for slot, off := range t.Frame.Offsets {
		if v, ok := ReadWord(env, base+off, t.Frame.WordSize); ok {
			f.Set(slot, v)
		}
	}
	if !f.Has(pc) || !f.Has(sp) || f.Regs[sp] <= last.Regs[sp] {
		return nil
	}
	return f
}

// MarkTrampoline sets f.Trampoline when codeAddr, f's code address, is the
// entry of one of ts. An unwinder with trampolines calls it on every caller
// it finds but a signal frame's: CallerOfSignal trusts the mark.
func MarkTrampoline(env Env, f *Frame, codeAddr uint64, ts []Trampoline) {
	if f != nil && FindTrampoline(env, codeAddr, ts) != nil {
		f.Trampoline = true
	}
}
