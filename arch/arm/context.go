// Package arm holds the 32-bit ARM CPU context as minidumps store it
// (Breakpad's MDRawContextARM, a Breakpad extension).
package arm

import (
	"encoding/binary"
	"fmt"
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
	c := new(Context)
	if _, err := binary.Decode(b[:ContextSize], binary.LittleEndian, c); err != nil {
		return nil, fmt.Errorf("arm context: %w", err)
	}
	return c, nil
}

// Encode returns the little-endian encoding of c, ContextSize bytes long.
func (c *Context) Encode() []byte {
	b := make([]byte, ContextSize)
	if _, err := binary.Encode(b, binary.LittleEndian, c); err != nil {
		panic("arm: encoding a fixed-size context: " + err.Error()) // unreachable: the layout is fixed
	}
	return b
}
