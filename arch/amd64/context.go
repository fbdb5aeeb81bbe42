// Package amd64 holds the x86-64 CPU context as minidumps store it
// (Breakpad's MDRawContextAMD64, Windows' CONTEXT for x64) and the x86-64
// register vocabulary: register-file slots in Breakpad's print order and
// their printed and STACK CFI names (regs.go). The unwinder is in
// unwind/amd64.
package amd64

import (
	"fmt"

	"github.com/gobreakpad/gobreakpad/arch"
)

// Context flag bits. ContextAMD64 identifies the CPU; the others say which
// register groups of a Context hold valid values.
const (
	ContextAMD64          = 0x00100000
	ContextControl        = ContextAMD64 | 0x01 // ss, rsp, cs, rip, eflags
	ContextInteger        = ContextAMD64 | 0x02 // rax..r15 except rsp
	ContextSegments       = ContextAMD64 | 0x04 // ds, es, fs, gs
	ContextFloatingPoint  = ContextAMD64 | 0x08 // FltSave, MxCsr
	ContextDebugRegisters = ContextAMD64 | 0x10 // dr0-dr3, dr6, dr7
	ContextXState         = ContextAMD64 | 0x40
	ContextFull           = ContextControl | ContextInteger | ContextFloatingPoint
	ContextAll            = ContextFull | ContextSegments | ContextDebugRegisters
)

// ContextSize is the size in bytes of an encoded Context. Windows dumps with
// XSAVE state store a larger context whose first ContextSize bytes are this.
const ContextSize = 1232

// XMMSaveArea32 is the fxsave-format floating-point state (XMM_SAVE_AREA32).
type XMMSaveArea32 struct {
	ControlWord    uint16
	StatusWord     uint16
	TagWord        uint8
	Reserved1      uint8
	ErrorOpcode    uint16
	ErrorOffset    uint32
	ErrorSelector  uint16
	Reserved2      uint16
	DataOffset     uint32
	DataSelector   uint16
	Reserved3      uint16
	MxCsr          uint32
	MxCsrMask      uint32
	FloatRegisters [8]arch.Uint128
	XmmRegisters   [16]arch.Uint128
	Reserved4      [96]byte
}

// Context is the register state of an x86-64 thread (MDRawContextAMD64).
type Context struct {
	P1Home, P2Home, P3Home, P4Home, P5Home, P6Home uint64

	ContextFlags uint32
	MxCsr        uint32

	Cs, Ds, Es, Fs, Gs, Ss uint16

	EFlags uint32

	Dr0, Dr1, Dr2, Dr3, Dr6, Dr7 uint64

	Rax, Rcx, Rdx, Rbx, Rsp, Rbp, Rsi, Rdi uint64
	R8, R9, R10, R11, R12, R13, R14, R15   uint64

	Rip uint64

	FltSave XMMSaveArea32

	VectorRegister [26]arch.Uint128
	VectorControl  uint64

	DebugControl         uint64
	LastBranchToRip      uint64
	LastBranchFromRip    uint64
	LastExceptionToRip   uint64
	LastExceptionFromRip uint64
}

// DecodeContext decodes a little-endian x86-64 context. Bytes past
// ContextSize (an XSAVE area) are ignored.
func DecodeContext(b []byte) (*Context, error) {
	if len(b) < ContextSize {
		return nil, fmt.Errorf("amd64 context: %d bytes, want %d", len(b), ContextSize)
	}
	r := arch.NewLEReader(b[:ContextSize])
	c := &Context{P1Home: r.U64(), P2Home: r.U64(), P3Home: r.U64(), P4Home: r.U64(), P5Home: r.U64(), P6Home: r.U64()}
	c.ContextFlags, c.MxCsr = r.U32(), r.U32()
	c.Cs, c.Ds, c.Es, c.Fs, c.Gs, c.Ss = r.U16(), r.U16(), r.U16(), r.U16(), r.U16(), r.U16()
	c.EFlags = r.U32()
	c.Dr0, c.Dr1, c.Dr2, c.Dr3, c.Dr6, c.Dr7 = r.U64(), r.U64(), r.U64(), r.U64(), r.U64(), r.U64()
	c.Rax, c.Rcx, c.Rdx, c.Rbx, c.Rsp, c.Rbp, c.Rsi, c.Rdi = r.U64(), r.U64(), r.U64(), r.U64(), r.U64(), r.U64(), r.U64(), r.U64()
	c.R8, c.R9, c.R10, c.R11, c.R12, c.R13, c.R14, c.R15 = r.U64(), r.U64(), r.U64(), r.U64(), r.U64(), r.U64(), r.U64(), r.U64()
	c.Rip = r.U64()
	f := &c.FltSave
	f.ControlWord, f.StatusWord = r.U16(), r.U16()
	f.TagWord, f.Reserved1 = r.U8(), r.U8()
	f.ErrorOpcode, f.ErrorOffset, f.ErrorSelector, f.Reserved2 = r.U16(), r.U32(), r.U16(), r.U16()
	f.DataOffset, f.DataSelector, f.Reserved3 = r.U32(), r.U16(), r.U16()
	f.MxCsr, f.MxCsrMask = r.U32(), r.U32()
	for i := range f.FloatRegisters {
		f.FloatRegisters[i] = r.U128()
	}
	for i := range f.XmmRegisters {
		f.XmmRegisters[i] = r.U128()
	}
	r.Bytes(f.Reserved4[:])
	for i := range c.VectorRegister {
		c.VectorRegister[i] = r.U128()
	}
	c.VectorControl, c.DebugControl = r.U64(), r.U64()
	c.LastBranchToRip, c.LastBranchFromRip = r.U64(), r.U64()
	c.LastExceptionToRip, c.LastExceptionFromRip = r.U64(), r.U64()
	return c, nil
}

// Encode returns the little-endian encoding of c, ContextSize bytes long.
func (c *Context) Encode() []byte {
	return arch.EncodeContext("amd64", ContextSize, c)
}
