package pdb

import (
	"encoding/binary"
	"fmt"
)

// TypeIndex is an index into the TPI (types) or IPI (items) stream;
// indices below 0x1000 in the TPI name primitive types.
type TypeIndex uint32

// LeafKind is a CodeView type record kind (LF_*).
type LeafKind uint16

// Type record kinds read by this package.
const (
	LF_MODIFIER     LeafKind = 0x1001
	LF_POINTER      LeafKind = 0x1002
	LF_PROCEDURE    LeafKind = 0x1008
	LF_MFUNCTION    LeafKind = 0x1009
	LF_ARGLIST      LeafKind = 0x1201
	LF_FIELDLIST    LeafKind = 0x1203
	LF_BITFIELD     LeafKind = 0x1205
	LF_ARRAY        LeafKind = 0x1503
	LF_CLASS        LeafKind = 0x1504
	LF_STRUCTURE    LeafKind = 0x1505
	LF_UNION        LeafKind = 0x1506
	LF_ENUM         LeafKind = 0x1507
	LF_INTERFACE    LeafKind = 0x1519
	LF_FUNC_ID      LeafKind = 0x1601
	LF_MFUNC_ID     LeafKind = 0x1602
	LF_BUILDINFO    LeafKind = 0x1603
	LF_SUBSTR_LIST  LeafKind = 0x1604
	LF_STRING_ID    LeafKind = 0x1605
	LF_UDT_SRC_LINE LeafKind = 0x1606
)

// Numeric leaf kinds (variable-size integers inside records).
const (
	lfChar      = 0x8000
	lfShort     = 0x8001
	lfUShort    = 0x8002
	lfLong      = 0x8003
	lfULong     = 0x8004
	lfQuadWord  = 0x8009
	lfUQuadWord = 0x800a
)

// TypeStreamHeader is the header of the TPI and IPI streams.
type TypeStreamHeader struct {
	Version       uint32
	HeaderSize    uint32
	IndexBegin    TypeIndex
	IndexEnd      TypeIndex
	RecordBytes   uint32
	HashStream    uint16
	HashAuxStream uint16
}

// TypeStream is a TPI or IPI stream with an index of its records.
type TypeStream struct {
	Header  TypeStreamHeader
	data    pieces   // the stream
	offsets []uint32 // of record i (index IndexBegin+i) in data
}

// ParseTypeStream reads a TPI or IPI stream and indexes its records.
func ParseTypeStream(data []byte) (*TypeStream, error) {
	return parseTypeStream(onePiece(data))
}

func parseTypeStream(ps pieces) (*TypeStream, error) {
	b := &buf{b: ps.at(0, min(56, ps.size)), ctx: "type stream"}
	h := TypeStreamHeader{Version: b.u32(), HeaderSize: b.u32(), IndexBegin: TypeIndex(b.u32()), IndexEnd: TypeIndex(b.u32()),
		RecordBytes: b.u32(), HashStream: b.u16(), HashAuxStream: b.u16()}
	if b.err != nil {
		return nil, b.err
	}
	if h.HeaderSize < 24 || int64(h.HeaderSize)+int64(h.RecordBytes) > int64(ps.size) {
		return nil, fmt.Errorf("type stream: header of %d and %d record bytes in %d: %w", h.HeaderSize, h.RecordBytes, ps.size, ErrFormat)
	}
	if h.IndexEnd < h.IndexBegin {
		return nil, fmt.Errorf("type stream: index range %#x-%#x: %w", h.IndexBegin, h.IndexEnd, ErrFormat)
	}
	t := &TypeStream{Header: h, data: ps}
	// Each record takes at least 4 bytes: the count cannot exceed that.
	n := uint64(h.IndexEnd - h.IndexBegin)
	if n > uint64(h.RecordBytes)/4 {
		return nil, fmt.Errorf("type stream: %d records in %d bytes: %w", n, h.RecordBytes, ErrFormat)
	}
	t.offsets = make([]uint32, 0, n)
	off := int(h.HeaderSize)
	end := off + int(h.RecordBytes)
	for off+4 <= end && uint64(len(t.offsets)) < n {
		l := int(ps.u16(off))
		if l < 2 || off+2+l > end {
			return nil, fmt.Errorf("type stream: record %#x: length %d past the end: %w", h.IndexBegin+TypeIndex(len(t.offsets)), l, ErrFormat)
		}
		t.offsets = append(t.offsets, uint32(off))
		off += 2 + l
	}
	return t, nil
}

// Record returns the kind and the bytes after the kind of record ti, or an
// error when ti is outside the stream.
func (t *TypeStream) Record(ti TypeIndex) (LeafKind, []byte, error) {
	if t == nil || ti < t.Header.IndexBegin || uint64(ti-t.Header.IndexBegin) >= uint64(len(t.offsets)) {
		return 0, nil, fmt.Errorf("type index %#x outside the stream: %w", ti, ErrFormat)
	}
	off := int(t.offsets[ti-t.Header.IndexBegin])
	rec := t.data.at(off+2, int(t.data.u16(off))) // kind and data, checked by parseTypeStream
	return LeafKind(binary.LittleEndian.Uint16(rec)), rec[2:], nil
}

// Len returns the number of records.
func (t *TypeStream) Len() int { return len(t.offsets) }

// numeric reads a numeric leaf.
func (b *buf) numeric() uint64 {
	v := b.u16()
	if v < 0x8000 {
		return uint64(v)
	}
	switch v {
	case lfChar:
		return uint64(int8(b.u8()))
	case lfShort:
		return uint64(int16(b.u16()))
	case lfUShort:
		return uint64(b.u16())
	case lfLong:
		return uint64(int32(b.u32()))
	case lfULong:
		return uint64(b.u32())
	case lfQuadWord, lfUQuadWord:
		return b.u64()
	}
	if b.err == nil {
		b.err = fmt.Errorf("%s: numeric leaf %#x: %w", b.ctx, v, ErrFormat)
	}
	return 0
}

// Modifier is LF_MODIFIER.
type Modifier struct {
	Type      TypeIndex
	Modifiers uint16 // 1 const, 2 volatile, 4 unaligned
}

// Pointer is LF_POINTER.
type Pointer struct {
	Referent       TypeIndex
	Attrs          uint32
	ContainingType TypeIndex // pointers to members
}

// Pointer modes (Attrs bits 5-7).
const (
	PtrModePointer        = 0
	PtrModeLValueRef      = 1
	PtrModeDataMember     = 2
	PtrModeMemberFunction = 3
	PtrModeRValueRef      = 4
)

// Mode returns the pointer mode.
func (p Pointer) Mode() int { return int(p.Attrs>>5) & 7 }

// IsConst reports a const pointer.
func (p Pointer) IsConst() bool { return p.Attrs&(1<<10) != 0 }

// Size returns the pointer's size in bytes.
func (p Pointer) Size() int { return int(p.Attrs>>13) & 0x3f }

// Procedure is LF_PROCEDURE.
type Procedure struct {
	ReturnType TypeIndex
	CallConv   uint8
	Options    uint8 // 2: constructor
	ParamCount uint16
	ArgList    TypeIndex
}

// MemberFunction is LF_MFUNCTION.
type MemberFunction struct {
	ReturnType TypeIndex
	ClassType  TypeIndex
	ThisType   TypeIndex // 0 for static member functions
	CallConv   uint8
	Options    uint8
	ParamCount uint16
	ArgList    TypeIndex
	ThisAdjust int32
}

// Array is LF_ARRAY.
type Array struct {
	ElemType  TypeIndex
	IndexType TypeIndex
	Size      uint64
	Name      string
}

// Class is LF_CLASS, LF_STRUCTURE, LF_INTERFACE and LF_UNION (Kind
// tells which), and LF_ENUM.
type Class struct {
	Kind       LeafKind
	Count      uint16
	Props      uint16 // 0x80: forward reference; 0x200: has unique name
	FieldList  TypeIndex
	Underlying TypeIndex // enums
	Size       uint64
	Name       string
	UniqueName string
}

// FuncID is LF_FUNC_ID.
type FuncID struct {
	Scope TypeIndex // an LF_STRING_ID item, or 0
	Type  TypeIndex // LF_PROCEDURE
	Name  string
}

// MFuncID is LF_MFUNC_ID.
type MFuncID struct {
	Class TypeIndex // TPI class type
	Type  TypeIndex // LF_MFUNCTION
	Name  string
}

// StringID is LF_STRING_ID.
type StringID struct {
	Substrings TypeIndex // an LF_SUBSTR_LIST, or 0
	String     string
}

// ParseModifier decodes LF_MODIFIER.
func ParseModifier(p []byte) (Modifier, error) {
	b := &buf{b: p, ctx: "LF_MODIFIER"}
	m := Modifier{TypeIndex(b.u32()), b.u16()}
	return m, b.err
}

// ParsePointer decodes LF_POINTER.
func ParsePointer(p []byte) (Pointer, error) {
	b := &buf{b: p, ctx: "LF_POINTER"}
	ptr := Pointer{Referent: TypeIndex(b.u32()), Attrs: b.u32()}
	if m := ptr.Mode(); (m == PtrModeDataMember || m == PtrModeMemberFunction) && b.left() >= 4 {
		ptr.ContainingType = TypeIndex(b.u32())
	}
	return ptr, b.err
}

// ParseProcedure decodes LF_PROCEDURE.
func ParseProcedure(p []byte) (Procedure, error) {
	b := &buf{b: p, ctx: "LF_PROCEDURE"}
	pr := Procedure{ReturnType: TypeIndex(b.u32()), CallConv: b.u8(), Options: b.u8(), ParamCount: b.u16(), ArgList: TypeIndex(b.u32())}
	return pr, b.err
}

// ParseMemberFunction decodes LF_MFUNCTION.
func ParseMemberFunction(p []byte) (MemberFunction, error) {
	b := &buf{b: p, ctx: "LF_MFUNCTION"}
	m := MemberFunction{ReturnType: TypeIndex(b.u32()), ClassType: TypeIndex(b.u32()), ThisType: TypeIndex(b.u32()),
		CallConv: b.u8(), Options: b.u8(), ParamCount: b.u16(), ArgList: TypeIndex(b.u32()), ThisAdjust: int32(b.u32())}
	return m, b.err
}

// ParseArgList decodes LF_ARGLIST (and LF_SUBSTR_LIST, of the same
// layout).
func ParseArgList(p []byte) ([]TypeIndex, error) {
	b := &buf{b: p, ctx: "LF_ARGLIST"}
	n := b.u32()
	if uint64(n)*4 > uint64(b.left()) {
		return nil, fmt.Errorf("LF_ARGLIST: %d arguments in %d bytes: %w", n, b.left(), ErrFormat)
	}
	out := make([]TypeIndex, n)
	for i := range out {
		out[i] = TypeIndex(b.u32())
	}
	return out, b.err
}

// ParseArray decodes LF_ARRAY.
func ParseArray(p []byte) (Array, error) {
	b := &buf{b: p, ctx: "LF_ARRAY"}
	a := Array{ElemType: TypeIndex(b.u32()), IndexType: TypeIndex(b.u32())}
	a.Size = b.numeric()
	a.Name = b.cstr()
	return a, b.err
}

// ParseClass decodes LF_CLASS, LF_STRUCTURE, LF_INTERFACE, LF_UNION and
// LF_ENUM records of kind k.
func ParseClass(k LeafKind, p []byte) (Class, error) {
	b := &buf{b: p, ctx: "class type"}
	c := Class{Kind: k, Count: b.u16(), Props: b.u16()}
	switch k {
	case LF_CLASS, LF_STRUCTURE, LF_INTERFACE:
		c.FieldList = TypeIndex(b.u32())
		b.u32() // derived
		b.u32() // vshape
		c.Size = b.numeric()
	case LF_UNION:
		c.FieldList = TypeIndex(b.u32())
		c.Size = b.numeric()
	case LF_ENUM:
		c.Underlying = TypeIndex(b.u32())
		c.FieldList = TypeIndex(b.u32())
	default:
		return c, fmt.Errorf("type kind %#x is not a class: %w", k, ErrFormat)
	}
	c.Name = b.cstr()
	if c.Props&0x200 != 0 && b.left() > 0 {
		c.UniqueName = b.cstr()
	}
	return c, b.err
}

// ParseFuncID decodes LF_FUNC_ID.
func ParseFuncID(p []byte) (FuncID, error) {
	b := &buf{b: p, ctx: "LF_FUNC_ID"}
	f := FuncID{Scope: TypeIndex(b.u32()), Type: TypeIndex(b.u32())}
	f.Name = b.cstr()
	return f, b.err
}

// ParseMFuncID decodes LF_MFUNC_ID.
func ParseMFuncID(p []byte) (MFuncID, error) {
	b := &buf{b: p, ctx: "LF_MFUNC_ID"}
	f := MFuncID{Class: TypeIndex(b.u32()), Type: TypeIndex(b.u32())}
	f.Name = b.cstr()
	return f, b.err
}

// ParseStringID decodes LF_STRING_ID.
func ParseStringID(p []byte) (StringID, error) {
	b := &buf{b: p, ctx: "LF_STRING_ID"}
	s := StringID{Substrings: TypeIndex(b.u32())}
	s.String = b.cstr()
	return s, b.err
}
