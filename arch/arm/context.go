// Package arm holds the 32-bit ARM CPU context as minidumps store it
// (Breakpad's MDRawContextARM, a Breakpad extension) and the ARM register
// vocabulary: register-file slots in Breakpad's print order and their
// printed and STACK CFI names (regs.go). The unwinder is in unwind/arm.
package arm

import (
	"fmt"

	"github.com/gobreakpad/gobreakpad/arch"
)

// Context flag bits. ContextARM identifies the CPU (ContextARMOld in dumps
// from old Breakpad clients); the others say which register groups are valid.
const (
	ContextARM           = 0x40000000
	ContextARMOld        = 0x00000040
	ContextInteger       = ContextARM | 0x02 // Iregs, Cpsr
	ContextFloatingPoint = ContextARM | 0x04 // FloatSave
	ContextFull          = ContextInteger | ContextFloatingPoint
	ContextAll           = ContextFull
)

// Indices into Context.Iregs of registers with a conventional role.
const (
	RegIOSFP = 7  // frame pointer on iOS
	RegFP    = 11 // frame pointer elsewhere
	RegSP    = 13
	RegLR    = 14
	RegPC    = 15
)

// ContextSize is the size in bytes of an encoded Context.
const ContextSize = 368

// FloatingSaveArea is the VFP state (MDFloatingSaveAreaARM).
type FloatingSaveArea struct {
	Fpscr uint64
	Regs  [32]uint64 // d0-d31
	Extra [8]uint32  // fpexc and friends
}

// Context is the register state of an ARM thread (MDRawContextARM).
type Context struct {
	ContextFlags uint32
	Iregs        [16]uint32 // r0-r15
	Cpsr         uint32
	FloatSave    FloatingSaveArea
}

// DecodeContext decodes a little-endian ARM context.
func DecodeContext(b []byte) (*Context, error) {
	if len(b) < ContextSize {
		return nil, fmt.Errorf("arm context: %d bytes, want %d", len(b), ContextSize)
	}
	r := arch.NewLEReader(b[:ContextSize])
	c := &Context{ContextFlags: r.U32()}
	for i := range c.Iregs {
		c.Iregs[i] = r.U32()
	}
	c.Cpsr = r.U32()
	c.FloatSave.Fpscr = r.U64()
	for i := range c.FloatSave.Regs {
		c.FloatSave.Regs[i] = r.U64()
	}
	for i := range c.FloatSave.Extra {
		c.FloatSave.Extra[i] = r.U32()
	}
	return c, nil
}

// Encode returns the little-endian encoding of c, ContextSize bytes long.
func (c *Context) Encode() []byte {
	return arch.EncodeContext("arm", ContextSize, c)
}
