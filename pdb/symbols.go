package pdb

import (
	"encoding/binary"
	"fmt"
)

// SymKind is a CodeView symbol record kind (S_*).
type SymKind uint16

// Symbol record kinds read by this package.
const (
	S_END            SymKind = 0x0006
	S_FRAMEPROC      SymKind = 0x1012
	S_OBJNAME        SymKind = 0x1101
	S_THUNK32        SymKind = 0x1102
	S_BLOCK32        SymKind = 0x1103
	S_WITH32         SymKind = 0x1104
	S_LABEL32        SymKind = 0x1105
	S_REGISTER       SymKind = 0x1106
	S_CONSTANT       SymKind = 0x1107
	S_UDT            SymKind = 0x1108
	S_LDATA32        SymKind = 0x110c
	S_GDATA32        SymKind = 0x110d
	S_PUB32          SymKind = 0x110e
	S_LPROC32        SymKind = 0x110f
	S_GPROC32        SymKind = 0x1110
	S_LTHREAD32      SymKind = 0x1112
	S_GTHREAD32      SymKind = 0x1113
	S_COMPILE2       SymKind = 0x1116
	S_PROCREF        SymKind = 0x1125
	S_DATAREF        SymKind = 0x1126
	S_LPROCREF       SymKind = 0x1127
	S_TRAMPOLINE     SymKind = 0x112c
	S_SEPCODE        SymKind = 0x1132
	S_COMPILE3       SymKind = 0x113c
	S_LPROC32_ID     SymKind = 0x1146
	S_GPROC32_ID     SymKind = 0x1147
	S_INLINESITE     SymKind = 0x114d
	S_INLINESITE_END SymKind = 0x114e
	S_PROC_ID_END    SymKind = 0x114f
	S_LPROC32_DPC    SymKind = 0x1155
	S_LPROC32_DPC_ID SymKind = 0x1156
	S_INLINESITE2    SymKind = 0x115d
)

// StartsScope reports whether records of kind k open a scope closed by
// S_END (or S_PROC_ID_END, S_INLINESITE_END).
func (k SymKind) StartsScope() bool {
	switch k {
	case S_GPROC32, S_LPROC32, S_GPROC32_ID, S_LPROC32_ID, S_LPROC32_DPC, S_LPROC32_DPC_ID,
		S_THUNK32, S_BLOCK32, S_WITH32, S_SEPCODE, S_INLINESITE, S_INLINESITE2:
		return true
	}
	return false
}

// EndsScope reports whether records of kind k close a scope.
func (k SymKind) EndsScope() bool {
	return k == S_END || k == S_PROC_ID_END || k == S_INLINESITE_END
}

// Symbol is one raw symbol record: its kind, its offset in the stream it
// was read from (what S_PROCREF and parent/end fields refer to), and the
// bytes after the kind.
type Symbol struct {
	Kind   SymKind
	Offset uint32
	Data   []byte
}

// SymbolIter walks the symbol records of a byte range.
type SymbolIter struct {
	data []byte
	off  int
	base uint32 // stream offset of data[0]
	err  error
}

// NewSymbolIter returns an iterator over the records in data, whose first
// byte lies at offset base of its stream (4 for module streams, after the
// signature; 0 for the global symbol record stream).
func NewSymbolIter(data []byte, base uint32) *SymbolIter {
	return &SymbolIter{data: data, base: base}
}

// Next returns the next record; ok is false at the end or on an error
// (see Err).
func (it *SymbolIter) Next() (s Symbol, ok bool) {
	if it.err != nil || it.off+2 > len(it.data) {
		return Symbol{}, false
	}
	n := int(binary.LittleEndian.Uint16(it.data[it.off:]))
	if n < 2 || it.off+2+n > len(it.data) {
		it.err = fmt.Errorf("symbol record at %#x: length %d past the end (%d): %w", it.base+uint32(it.off), n, len(it.data), ErrFormat)
		return Symbol{}, false
	}
	s = Symbol{
		Kind:   SymKind(binary.LittleEndian.Uint16(it.data[it.off+2:])),
		Offset: it.base + uint32(it.off),
		Data:   it.data[it.off+4 : it.off+2+n],
	}
	it.off += 2 + n
	return s, true
}

// Err returns the error that stopped the iteration, if any.
func (it *SymbolIter) Err() error { return it.err }

// Seek moves the iterator to stream offset off.
func (it *SymbolIter) Seek(off uint32) error {
	if off < it.base || int64(off-it.base) > int64(len(it.data)) {
		return fmt.Errorf("symbol offset %#x outside the stream: %w", off, ErrFormat)
	}
	it.off = int(off - it.base)
	it.err = nil
	return nil
}

// ProcSym is S_GPROC32, S_LPROC32 and their _ID and DPC forms.
type ProcSym struct {
	Parent, End, Next uint32
	CodeSize          uint32
	DbgStart, DbgEnd  uint32
	// Type is a TPI type index (LF_PROCEDURE, LF_MFUNCTION) in the plain
	// forms, an IPI item index (LF_FUNC_ID, LF_MFUNC_ID) in the _ID forms.
	Type    uint32
	Offset  uint32
	Segment uint16
	Flags   uint8
	Name    string
}

// IsID reports whether the kind's Type field is an IPI item index.
func (k SymKind) IsID() bool {
	return k == S_GPROC32_ID || k == S_LPROC32_ID || k == S_LPROC32_DPC_ID
}

// IsProc reports whether k is one of the procedure kinds.
func (k SymKind) IsProc() bool {
	switch k {
	case S_GPROC32, S_LPROC32, S_GPROC32_ID, S_LPROC32_ID, S_LPROC32_DPC, S_LPROC32_DPC_ID:
		return true
	}
	return false
}

// ParseProc decodes a procedure record.
func ParseProc(data []byte) (ProcSym, error) {
	b := &buf{b: data, ctx: "procedure symbol"}
	p := ProcSym{Parent: b.u32(), End: b.u32(), Next: b.u32(), CodeSize: b.u32(), DbgStart: b.u32(), DbgEnd: b.u32(),
		Type: b.u32(), Offset: b.u32(), Segment: b.u16(), Flags: b.u8()}
	p.Name = b.cstr()
	return p, b.err
}

// ThunkSym is S_THUNK32.
type ThunkSym struct {
	Parent, End, Next uint32
	Offset            uint32
	Segment           uint16
	Length            uint16
	Ordinal           uint8
	Name              string
}

// ParseThunk decodes an S_THUNK32 record.
func ParseThunk(data []byte) (ThunkSym, error) {
	b := &buf{b: data, ctx: "thunk symbol"}
	t := ThunkSym{Parent: b.u32(), End: b.u32(), Next: b.u32(), Offset: b.u32(), Segment: b.u16(), Length: b.u16(), Ordinal: b.u8()}
	t.Name = b.cstr()
	return t, b.err
}

// BlockSym is S_BLOCK32.
type BlockSym struct {
	Parent, End uint32
	CodeSize    uint32
	Offset      uint32
	Segment     uint16
	Name        string
}

// ParseBlock decodes an S_BLOCK32 record.
func ParseBlock(data []byte) (BlockSym, error) {
	b := &buf{b: data, ctx: "block symbol"}
	s := BlockSym{Parent: b.u32(), End: b.u32(), CodeSize: b.u32(), Offset: b.u32(), Segment: b.u16()}
	s.Name = b.cstr()
	return s, b.err
}

// SepCodeSym is S_SEPCODE: a piece of a procedure moved away from it.
type SepCodeSym struct {
	Parent, End   uint32
	Length        uint32
	Flags         uint32
	Offset        uint32
	ParentOffset  uint32
	Segment       uint16
	ParentSegment uint16
}

// ParseSepCode decodes an S_SEPCODE record.
func ParseSepCode(data []byte) (SepCodeSym, error) {
	b := &buf{b: data, ctx: "sepcode symbol"}
	s := SepCodeSym{Parent: b.u32(), End: b.u32(), Length: b.u32(), Flags: b.u32(), Offset: b.u32(), ParentOffset: b.u32(),
		Segment: b.u16(), ParentSegment: b.u16()}
	return s, b.err
}

// PubSym is S_PUB32, a public symbol of the global symbol record stream.
type PubSym struct {
	Flags   uint32 // PubCode, PubFunction, PubManaged, PubMSIL
	Offset  uint32
	Segment uint16
	Name    string
}

// S_PUB32 flags.
const (
	PubCode     = 1
	PubFunction = 2
	PubManaged  = 4
	PubMSIL     = 8
)

// ParsePub decodes an S_PUB32 record.
func ParsePub(data []byte) (PubSym, error) {
	b := &buf{b: data, ctx: "public symbol"}
	p := PubSym{Flags: b.u32(), Offset: b.u32(), Segment: b.u16()}
	p.Name = b.cstr()
	return p, b.err
}

// RefSym is S_PROCREF, S_LPROCREF and S_DATAREF: a reference from the
// globals to a record of a module's symbol stream.
type RefSym struct {
	SumName   uint32
	SymOffset uint32 // offset of the record in the module's symbol stream
	Module    uint16 // 1-based module index
	Name      string
}

// ParseRef decodes a reference record.
func ParseRef(data []byte) (RefSym, error) {
	b := &buf{b: data, ctx: "reference symbol"}
	r := RefSym{SumName: b.u32(), SymOffset: b.u32(), Module: b.u16()}
	r.Name = b.cstr()
	return r, b.err
}

// FrameProcSym is S_FRAMEPROC.
type FrameProcSym struct {
	TotalFrameBytes      uint32
	PaddingFrameBytes    uint32
	OffsetToPadding      uint32
	CalleeSavedRegsBytes uint32
	ExceptionHandlerOff  uint32
	ExceptionHandlerSect uint16
	Flags                uint32
}

// ParseFrameProc decodes an S_FRAMEPROC record.
func ParseFrameProc(data []byte) (FrameProcSym, error) {
	b := &buf{b: data, ctx: "frameproc symbol"}
	f := FrameProcSym{TotalFrameBytes: b.u32(), PaddingFrameBytes: b.u32(), OffsetToPadding: b.u32(),
		CalleeSavedRegsBytes: b.u32(), ExceptionHandlerOff: b.u32(), ExceptionHandlerSect: b.u16(), Flags: b.u32()}
	return f, b.err
}

// InlineSiteSym is S_INLINESITE and S_INLINESITE2.
type InlineSiteSym struct {
	Parent, End uint32
	Inlinee     uint32 // IPI item index (LF_FUNC_ID, LF_MFUNC_ID)
	Invocations uint32 // S_INLINESITE2 only
	Annotations []byte // binary annotations, see DecodeAnnotations
}

// ParseInlineSite decodes an inline site record of kind k.
func ParseInlineSite(k SymKind, data []byte) (InlineSiteSym, error) {
	b := &buf{b: data, ctx: "inline site symbol"}
	s := InlineSiteSym{Parent: b.u32(), End: b.u32(), Inlinee: b.u32()}
	if k == S_INLINESITE2 {
		s.Invocations = b.u32()
	}
	s.Annotations = b.b[b.off:]
	return s, b.err
}
