package arm64

import (
	"encoding/binary"

	"golang.org/x/arch/arm64/arm64asm"

	"github.com/gobreakpad/gobreakpad/unwind"
)

// callBefore is arm64's unwind.CallCheck: the instruction before the
// return address is BL or BLR, or one of the pointer-authenticating
// BLRAA, BLRAAZ, BLRAB, BLRABZ.
func callBefore(env unwind.Env, ra uint64) unwind.CallSite {
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
