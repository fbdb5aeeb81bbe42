// Package amd64 holds the x86-64 CPU context as minidumps store it
// (Breakpad's MDRawContextAMD64, Windows' CONTEXT for x64), and the x86-64
// stack unwinder (unwind.go).
package amd64

import (
	"encoding/binary"
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
	r := cursor{b: b[:ContextSize]}
	c := &Context{P1Home: r.u64(), P2Home: r.u64(), P3Home: r.u64(), P4Home: r.u64(), P5Home: r.u64(), P6Home: r.u64()}
	c.ContextFlags, c.MxCsr = r.u32(), r.u32()
	c.Cs, c.Ds, c.Es, c.Fs, c.Gs, c.Ss = r.u16(), r.u16(), r.u16(), r.u16(), r.u16(), r.u16()
	c.EFlags = r.u32()
	c.Dr0, c.Dr1, c.Dr2, c.Dr3, c.Dr6, c.Dr7 = r.u64(), r.u64(), r.u64(), r.u64(), r.u64(), r.u64()
	c.Rax, c.Rcx, c.Rdx, c.Rbx, c.Rsp, c.Rbp, c.Rsi, c.Rdi = r.u64(), r.u64(), r.u64(), r.u64(), r.u64(), r.u64(), r.u64(), r.u64()
	c.R8, c.R9, c.R10, c.R11, c.R12, c.R13, c.R14, c.R15 = r.u64(), r.u64(), r.u64(), r.u64(), r.u64(), r.u64(), r.u64(), r.u64()
	c.Rip = r.u64()
	f := &c.FltSave
	f.ControlWord, f.StatusWord = r.u16(), r.u16()
	f.TagWord, f.Reserved1 = r.b[r.off], r.b[r.off+1]
	r.off += 2
	f.ErrorOpcode, f.ErrorOffset, f.ErrorSelector, f.Reserved2 = r.u16(), r.u32(), r.u16(), r.u16()
	f.DataOffset, f.DataSelector, f.Reserved3 = r.u32(), r.u16(), r.u16()
	f.MxCsr, f.MxCsrMask = r.u32(), r.u32()
	for i := range f.FloatRegisters {
		f.FloatRegisters[i] = r.u128()
	}
	for i := range f.XmmRegisters {
		f.XmmRegisters[i] = r.u128()
	}
	r.bytes(f.Reserved4[:])
	for i := range c.VectorRegister {
		c.VectorRegister[i] = r.u128()
	}
	c.VectorControl, c.DebugControl = r.u64(), r.u64()
	c.LastBranchToRip, c.LastBranchFromRip = r.u64(), r.u64()
	c.LastExceptionToRip, c.LastExceptionFromRip = r.u64(), r.u64()
	return c, nil
}

// cursor reads little-endian fields in order; the caller checks the length.
type cursor struct {
	b   []byte
	off int
}

func (c *cursor) u16() uint16        { v := binary.LittleEndian.Uint16(c.b[c.off:]); c.off += 2; return v }
func (c *cursor) u32() uint32        { v := binary.LittleEndian.Uint32(c.b[c.off:]); c.off += 4; return v }
func (c *cursor) u64() uint64        { v := binary.LittleEndian.Uint64(c.b[c.off:]); c.off += 8; return v }
func (c *cursor) bytes(dst []byte)   { c.off += copy(dst, c.b[c.off:]) }
func (c *cursor) u128() arch.Uint128 { lo := c.u64(); return arch.Uint128{Low: lo, High: c.u64()} }

// Encode returns the little-endian encoding of c, ContextSize bytes long.
func (c *Context) Encode() []byte {
	b := make([]byte, ContextSize)
	if _, err := binary.Encode(b, binary.LittleEndian, c); err != nil {
		panic("amd64: encoding a fixed-size context: " + err.Error()) // unreachable: the layout is fixed
	}
	return b
}
