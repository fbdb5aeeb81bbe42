// Package arm64 holds the AArch64 CPU contexts as minidumps store them:
// Breakpad's MDRawContextARM64 (Context) and the layout written by older
// Breakpad clients, MDRawContextARM64_Old (OldContext); and the AArch64
// register vocabulary: register-file slots in Breakpad's print order and
// their printed and STACK CFI names (regs.go). The unwinder is in
// unwind/arm64.
package arm64

import (
	"fmt"

	"github.com/gobreakpad/gobreakpad/arch"
)

// Context flag bits. ContextARM64 identifies the CPU in a Context,
// ContextARM64Old in an OldContext; the others say which register groups are
// valid (combine the low bits with either CPU bit).
const (
	ContextARM64          = 0x00400000
	ContextARM64Old       = 0x80000000
	ContextControl        = ContextARM64 | 0x01 // fp, lr, sp, pc, cpsr
	ContextInteger        = ContextARM64 | 0x02 // x0-x28
	ContextFloatingPoint  = ContextARM64 | 0x04 // FloatSave
	ContextDebugRegisters = ContextARM64 | 0x08 // Bcr, Bvr, Wcr, Wvr
	ContextFull           = ContextControl | ContextInteger | ContextFloatingPoint
	ContextAll            = ContextFull | ContextDebugRegisters
)

// Indices into Iregs of registers with a dedicated role.
const (
	RegFP = 29
	RegLR = 30
	RegSP = 31
	RegPC = 32
)

// Sizes in bytes of the encoded contexts.
const (
	ContextSize    = 912
	OldContextSize = 796
)

// FloatingSaveArea is the FP/SIMD state of a Context (MDFloatingSaveAreaARM64).
type FloatingSaveArea struct {
	Regs [32]arch.Uint128 // v0-v31
	Fpsr uint32
	Fpcr uint32
}

// Context is the register state of an AArch64 thread (MDRawContextARM64).
type Context struct {
	ContextFlags uint32
	Cpsr         uint32
	Iregs        [33]uint64 // x0-x28, fp, lr, sp, pc
	FloatSave    FloatingSaveArea
	Bcr          [8]uint32
	Bvr          [8]uint64
	Wcr          [2]uint32
	Wvr          [2]uint64
}

// OldFloatingSaveArea is the FP/SIMD state of an OldContext.
type OldFloatingSaveArea struct {
	Fpsr uint32
	Fpcr uint32
	Regs [32]arch.Uint128
}

// OldContext is the AArch64 register state in the layout of older Breakpad
// clients (MDRawContextARM64_Old, 4-byte packed, 64-bit flags).
type OldContext struct {
	ContextFlags uint64
	Iregs        [33]uint64
	Cpsr         uint32
	FloatSave    OldFloatingSaveArea
}

// DecodeContext decodes a little-endian AArch64 context.
func DecodeContext(b []byte) (*Context, error) {
	if len(b) < ContextSize {
		return nil, fmt.Errorf("arm64 context: %d bytes, want %d", len(b), ContextSize)
	}
	r := arch.NewLEReader(b[:ContextSize])
	c := &Context{ContextFlags: r.U32(), Cpsr: r.U32()}
	for i := range c.Iregs {
		c.Iregs[i] = r.U64()
	}
	for i := range c.FloatSave.Regs {
		c.FloatSave.Regs[i] = r.U128()
	}
	c.FloatSave.Fpsr, c.FloatSave.Fpcr = r.U32(), r.U32()
	for i := range c.Bcr {
		c.Bcr[i] = r.U32()
	}
	for i := range c.Bvr {
		c.Bvr[i] = r.U64()
	}
	for i := range c.Wcr {
		c.Wcr[i] = r.U32()
	}
	for i := range c.Wvr {
		c.Wvr[i] = r.U64()
	}
	return c, nil
}

// Encode returns the little-endian encoding of c, ContextSize bytes long.
func (c *Context) Encode() []byte {
	return arch.EncodeContext("arm64", ContextSize, c)
}

// DecodeOldContext decodes a little-endian AArch64 context in the old layout.
func DecodeOldContext(b []byte) (*OldContext, error) {
	if len(b) < OldContextSize {
		return nil, fmt.Errorf("arm64 old context: %d bytes, want %d", len(b), OldContextSize)
	}
	r := arch.NewLEReader(b[:OldContextSize])
	c := &OldContext{ContextFlags: r.U64()}
	for i := range c.Iregs {
		c.Iregs[i] = r.U64()
	}
	c.Cpsr = r.U32()
	c.FloatSave.Fpsr, c.FloatSave.Fpcr = r.U32(), r.U32()
	for i := range c.FloatSave.Regs {
		c.FloatSave.Regs[i] = r.U128()
	}
	return c, nil
}

// Encode returns the little-endian encoding of c, OldContextSize bytes long.
func (c *OldContext) Encode() []byte {
	return arch.EncodeContext("arm64", OldContextSize, c)
}

// Upgrade returns the old-layout context converted to a Context as Breakpad
// converts it: the same registers; the old integer flag (0x2) becomes
// integer and control, the old floating-point flag (0x4) floating point.
func (c *OldContext) Upgrade() *Context {
	flags := uint32(ContextARM64)
	if c.ContextFlags&0x2 != 0 {
		flags |= ContextInteger | ContextControl
	}
	if c.ContextFlags&0x4 != 0 {
		flags |= ContextFloatingPoint
	}
	n := &Context{
		ContextFlags: flags,
		Cpsr:         c.Cpsr,
		Iregs:        c.Iregs,
	}
	n.FloatSave.Regs = c.FloatSave.Regs
	n.FloatSave.Fpsr = c.FloatSave.Fpsr
	n.FloatSave.Fpcr = c.FloatSave.Fpcr
	return n
}
