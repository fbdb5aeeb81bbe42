package x86

import (
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// realignedCFA recognizes a realigned frame from its ebp frame record
// (ret, the return address read at ebp+4) and returns the caller's stack
// pointer (see unwind.RealignedCFA).
func realignedCFA(env unwind.Env, ebp, ret uint32) (uint32, bool) {
	v, ok := unwind.RealignedCFA(env, uint64(ebp), uint64(ret), 4, 0)
	return uint32(v), ok
}

// byRealignedFrame is the caller of a realigned frame from its ebp frame
// record and saved CFA, or nil when last's frame record is not a
// realigned one.
func byRealignedFrame(env unwind.Env, last *unwind.Frame) *unwind.Frame {
	if !last.Has(x86.EBP) {
		return nil
	}
	ebp := uint32(last.Regs[x86.EBP])
	eip, ok1 := read32(env, ebp+4)
	cebp, ok2 := read32(env, ebp)
	if !ok1 || !ok2 {
		return nil
	}
	cfa, ok := realignedCFA(env, ebp, eip)
	if !ok {
		return nil
	}
	f := unwind.NewCaller(env, last, unwind.TrustFP)
	f.Regs[x86.EIP], f.Regs[x86.ESP], f.Regs[x86.EBP] = uint64(eip), uint64(cfa), uint64(cebp)
	f.Valid = 1<<x86.EIP | 1<<x86.ESP | 1<<x86.EBP
	return f
}
