// Package arm holds the 32-bit ARM CPU context as minidumps store it
// (Breakpad's MDRawContextARM, a Breakpad extension), and the ARM stack
// unwinder (unwind.go).
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
	r := cursor{b: b[:ContextSize]}
	c := &Context{ContextFlags: r.u32()}
	for i := range c.Iregs {
		c.Iregs[i] = r.u32()
	}
	c.Cpsr = r.u32()
	c.FloatSave.Fpscr = r.u64()
	for i := range c.FloatSave.Regs {
		c.FloatSave.Regs[i] = r.u64()
	}
	for i := range c.FloatSave.Extra {
		c.FloatSave.Extra[i] = r.u32()
	}
	return c, nil
}

// cursor reads little-endian fields in order; the caller checks the length.
type cursor struct {
	b   []byte
	off int
}

func (c *cursor) u16() uint16      { v := binary.LittleEndian.Uint16(c.b[c.off:]); c.off += 2; return v }
func (c *cursor) u32() uint32      { v := binary.LittleEndian.Uint32(c.b[c.off:]); c.off += 4; return v }
func (c *cursor) u64() uint64      { v := binary.LittleEndian.Uint64(c.b[c.off:]); c.off += 8; return v }
func (c *cursor) bytes(dst []byte) { c.off += copy(dst, c.b[c.off:]) }

// Encode returns the little-endian encoding of c, ContextSize bytes long.
func (c *Context) Encode() []byte {
	b := make([]byte, ContextSize)
	if _, err := binary.Encode(b, binary.LittleEndian, c); err != nil {
		panic("arm: encoding a fixed-size context: " + err.Error()) // unreachable: the layout is fixed
	}
	return b
}
