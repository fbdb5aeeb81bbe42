// Package mips holds the MIPS and MIPS64 CPU context as Breakpad's
// minidumps and microdumps store it (MDRawContextMIPS, one layout for both:
// registers are 64 bits wide) and the MIPS register vocabulary:
// register-file slots in Breakpad's print order and their printed and STACK
// CFI names (regs.go). The unwinder is in unwind/mips.
package mips

import (
	"fmt"

	"github.com/gobreakpad/gobreakpad/arch"
)

// Context flag bits. ContextMIPS identifies a 32-bit MIPS CPU, ContextMIPS64
// a 64-bit one; the low bits say which register groups are valid (combine
// them with either CPU bit).
const (
	ContextMIPS          = 0x00040000
	ContextMIPS64        = 0x00080000
	ContextInteger       = 0x02
	ContextFloatingPoint = 0x04
	ContextDSP           = 0x08
	ContextFull          = ContextInteger | ContextFloatingPoint | ContextDSP
)

// ContextSize is the size in bytes of an encoded Context.
const ContextSize = 600

// Indices into Context.Iregs of registers with a conventional role
// (MD_CONTEXT_MIPS_REG_*).
const (
	IregS0 = 16
	IregS7 = 23
	IregGP = 28
	IregSP = 29
	IregFP = 30
	IregRA = 31
)

// FloatingSaveArea is the floating-point state of a Context
// (MDFloatingSaveAreaMIPS).
type FloatingSaveArea struct {
	Regs  [32]uint64 // f0-f31
	FPCSR uint32
	FIR   uint32
}

// Context is the register state of a MIPS or MIPS64 thread
// (MDRawContextMIPS).
type Context struct {
	ContextFlags uint32
	Pad0         uint32
	Iregs        [32]uint64 // $0-$31
	MDHi, MDLo   uint64     // multiply/divide result
	Hi, Lo       [3]uint32  // DSP accumulators
	DSPControl   uint32
	Pad1         uint32
	EPC          uint64 // the program counter
	BadVAddr     uint64
	Status       uint32
	Cause        uint32
	FloatSave    FloatingSaveArea
}

// Is64 reports whether the context's flags name a MIPS64 CPU; Breakpad's
// walker takes every context without the ContextMIPS bit for a 64-bit one.
func (c *Context) Is64() bool { return c.ContextFlags&ContextMIPS == 0 }

// CPU returns arch.MIPS or arch.MIPS64, as Is64 decides.
func (c *Context) CPU() arch.CPU {
	if c.Is64() {
		return arch.MIPS64
	}
	return arch.MIPS
}

// DecodeContext decodes a little-endian MIPS context of exactly ContextSize
// bytes.
func DecodeContext(b []byte) (*Context, error) {
	if len(b) != ContextSize {
		return nil, fmt.Errorf("mips context: %d bytes, want %d", len(b), ContextSize)
	}
	r := arch.NewLEReader(b)
	c := &Context{ContextFlags: r.U32(), Pad0: r.U32()}
	for i := range c.Iregs {
		c.Iregs[i] = r.U64()
	}
	c.MDHi, c.MDLo = r.U64(), r.U64()
	for i := range c.Hi {
		c.Hi[i] = r.U32()
	}
	for i := range c.Lo {
		c.Lo[i] = r.U32()
	}
	c.DSPControl, c.Pad1 = r.U32(), r.U32()
	c.EPC, c.BadVAddr = r.U64(), r.U64()
	c.Status, c.Cause = r.U32(), r.U32()
	for i := range c.FloatSave.Regs {
		c.FloatSave.Regs[i] = r.U64()
	}
	c.FloatSave.FPCSR, c.FloatSave.FIR = r.U32(), r.U32()
	return c, nil
}

// Encode returns the little-endian encoding of the context.
func (c *Context) Encode() []byte { return arch.EncodeContext("mips", ContextSize, c) }
