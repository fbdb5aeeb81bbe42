package arm64

import (
	"encoding/binary"

	"golang.org/x/arch/arm64/arm64asm"

	"github.com/gobreakpad/gobreakpad/unwind"
)

// callBefore is arm64's unwind.CallCheck: callInstBefore, or the start
// of a signal trampoline (where a handler returns).
var callBefore = unwind.OrTrampoline(callInstBefore, trampolines)

// callInstBefore: the instruction before the return address is BL or BLR,
// or one of the pointer-authenticating BLRAA, BLRAAZ, BLRAB, BLRABZ.
func callInstBefore(env unwind.Env, ra uint64) unwind.CallSite {
	b := unwind.ReadCode(env, ra-4, 4)
	if b == nil {
		return unwind.CallUnknown
	}
	if w := binary.LittleEndian.Uint32(b); w&0xfefff800 == 0xd63f0800 {
		return unwind.CallBefore
	}
	inst, err := arm64asm.Decode(b)
	if err == nil && (inst.Op == arm64asm.BL || inst.Op == arm64asm.BLR) {
		return unwind.CallBefore
	}
	return unwind.NoCallBefore
}

// CallTarget returns the target of the BL instruction before ra
// (unwind.CPU).
func (u *Unwinder) CallTarget(env unwind.Env, ra uint64) (uint64, bool) {
	b := unwind.ReadCode(env, ra-4, 4)
	if b == nil {
		return 0, false
	}
	w := binary.LittleEndian.Uint32(b)
	if w&0xfc000000 != 0x94000000 {
		return 0, false
	}
	off := int64(int32(w<<6)>>6) * 4
	return ra - 4 + uint64(off), true
}
