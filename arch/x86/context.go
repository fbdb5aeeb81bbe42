// Package x86 holds the 32-bit x86 (i386) CPU context as minidumps store it
// (Breakpad's MDRawContextX86, Windows' CONTEXT for x86) and the x86
// register vocabulary: register-file slots in Breakpad's print order and
// their printed and STACK CFI names (regs.go). The unwinder is in
// unwind/x86.
package x86

import (
	"fmt"

	"github.com/gobreakpad/gobreakpad/arch"
)

// Context flag bits. ContextX86 identifies the CPU; the others say which
// register groups of a Context hold valid values.
const (
	ContextX86               = 0x00010000
	ContextControl           = ContextX86 | 0x01 // ebp, eip, cs, eflags, esp, ss
	ContextInteger           = ContextX86 | 0x02 // edi, esi, ebx, edx, ecx, eax
	ContextSegments          = ContextX86 | 0x04 // ds, es, fs, gs
	ContextFloatingPoint     = ContextX86 | 0x08 // FloatSave
	ContextDebugRegisters    = ContextX86 | 0x10 // dr0-dr3, dr6, dr7
	ContextExtendedRegisters = ContextX86 | 0x20 // ExtendedRegisters (fxsave area)
	ContextXState            = ContextX86 | 0x40
	ContextFull              = ContextControl | ContextInteger | ContextSegments
	ContextAll               = ContextFull | ContextFloatingPoint | ContextDebugRegisters | ContextExtendedRegisters
)

// ContextSize is the size in bytes of an encoded Context.
const ContextSize = 716

// FloatingSaveArea is the x87 state saved with an x86 context (MDFloatingSaveAreaX86).
type FloatingSaveArea struct {
	ControlWord   uint32
	StatusWord    uint32
	TagWord       uint32
	ErrorOffset   uint32
	ErrorSelector uint32
	DataOffset    uint32
	DataSelector  uint32
	RegisterArea  [80]byte // st(0)-st(7), 10 bytes each
	Cr0NpxState   uint32
}

// Context is the register state of an x86 thread (MDRawContextX86).
type Context struct {
	ContextFlags uint32

	Dr0, Dr1, Dr2, Dr3, Dr6, Dr7 uint32

	FloatSave FloatingSaveArea

	Gs, Fs, Es, Ds uint32

	Edi, Esi, Ebx, Edx, Ecx, Eax uint32

	Ebp, Eip, Cs, EFlags, Esp, Ss uint32

	ExtendedRegisters [512]byte
}

// DecodeContext decodes a little-endian x86 context. Bytes past ContextSize
// (for example an XSAVE area) are ignored.
func DecodeContext(b []byte) (*Context, error) {
	if len(b) < ContextSize {
		return nil, fmt.Errorf("x86 context: %d bytes, want %d", len(b), ContextSize)
	}
	r := arch.NewLEReader(b[:ContextSize])
	c := &Context{ContextFlags: r.U32(), Dr0: r.U32(), Dr1: r.U32(), Dr2: r.U32(), Dr3: r.U32(), Dr6: r.U32(), Dr7: r.U32()}
	fs := &c.FloatSave
	fs.ControlWord, fs.StatusWord, fs.TagWord = r.U32(), r.U32(), r.U32()
	fs.ErrorOffset, fs.ErrorSelector, fs.DataOffset, fs.DataSelector = r.U32(), r.U32(), r.U32(), r.U32()
	r.Bytes(fs.RegisterArea[:])
	fs.Cr0NpxState = r.U32()
	c.Gs, c.Fs, c.Es, c.Ds = r.U32(), r.U32(), r.U32(), r.U32()
	c.Edi, c.Esi, c.Ebx, c.Edx, c.Ecx, c.Eax = r.U32(), r.U32(), r.U32(), r.U32(), r.U32(), r.U32()
	c.Ebp, c.Eip, c.Cs, c.EFlags, c.Esp, c.Ss = r.U32(), r.U32(), r.U32(), r.U32(), r.U32(), r.U32()
	r.Bytes(c.ExtendedRegisters[:])
	return c, nil
}

// Encode returns the little-endian encoding of c, ContextSize bytes long.
func (c *Context) Encode() []byte {
	return arch.EncodeContext("x86", ContextSize, c)
}
