package pdb

import "fmt"

// FPOData is an FPO_DATA record of the old FPO stream (x86 frame-pointer
// omission data, 16 bytes).
type FPOData struct {
	Start     uint32 // RVA of the function's first byte
	ProcSize  uint32
	Locals    uint32 // in 4-byte units
	Params    uint16 // in 4-byte units
	Prolog    uint8  // bytes of prolog
	Regs      uint8  // number of saved registers
	HasSEH    bool
	UseBP     bool // EBP is set up as a frame pointer
	FrameType uint8
}

// ParseFPO decodes an FPO stream.
func ParseFPO(data []byte) ([]FPOData, error) {
	if len(data)%16 != 0 {
		return nil, fmt.Errorf("fpo stream of %d bytes, not a multiple of 16: %w", len(data), ErrFormat)
	}
	b := &buf{b: data, ctx: "fpo"}
	out := make([]FPOData, 0, len(data)/16)
	for b.left() > 0 {
		f := FPOData{Start: b.u32(), ProcSize: b.u32(), Locals: b.u32(), Params: b.u16()}
		f.Prolog = b.u8()
		bits := b.u8()
		f.Regs = bits & 7
		f.HasSEH = bits&8 != 0
		f.UseBP = bits&16 != 0
		f.FrameType = bits >> 6
		out = append(out, f)
	}
	return out, nil
}

// FrameData is a new-style FPO record (FRAMEDATA, 32 bytes) of the
// NewFPO stream or a DEBUG_S_FRAMEDATA subsection.
type FrameData struct {
	RVAStart      uint32
	CodeSize      uint32
	LocalSize     uint32
	ParamsSize    uint32
	MaxStackSize  uint32
	FrameFunc     uint32 // offset of the program string in /names
	PrologSize    uint16
	SavedRegsSize uint16
	Flags         uint32
}

// FrameData flags.
const (
	FrameDataHasSEH          = 1
	FrameDataHasEH           = 2
	FrameDataIsFunctionStart = 4
)

// ParseFrameData decodes a sequence of FRAMEDATA records.
func ParseFrameData(data []byte) ([]FrameData, error) {
	if len(data)%32 != 0 {
		return nil, fmt.Errorf("frame data of %d bytes, not a multiple of 32: %w", len(data), ErrFormat)
	}
	b := &buf{b: data, ctx: "frame data"}
	out := make([]FrameData, 0, len(data)/32)
	for b.left() > 0 {
		out = append(out, FrameData{
			RVAStart: b.u32(), CodeSize: b.u32(), LocalSize: b.u32(), ParamsSize: b.u32(),
			MaxStackSize: b.u32(), FrameFunc: b.u32(), PrologSize: b.u16(), SavedRegsSize: b.u16(), Flags: b.u32(),
		})
	}
	return out, nil
}

// OMAP is one entry of an OMAP table: addresses from From on map to To
// plus the distance from From (To 0: the code was dropped).
type OMAP struct {
	From, To uint32
}

// ParseOMAP decodes an OMAP stream.
func ParseOMAP(data []byte) ([]OMAP, error) {
	if len(data)%8 != 0 {
		return nil, fmt.Errorf("omap stream of %d bytes, not a multiple of 8: %w", len(data), ErrFormat)
	}
	b := &buf{b: data, ctx: "omap"}
	out := make([]OMAP, 0, len(data)/8)
	for b.left() > 0 {
		out = append(out, OMAP{b.u32(), b.u32()})
	}
	return out, nil
}

// SectionHeader is an IMAGE_SECTION_HEADER of the section header stream.
type SectionHeader struct {
	Name                 string
	VirtualSize          uint32
	VirtualAddress       uint32
	SizeOfRawData        uint32
	PointerToRawData     uint32
	PointerToRelocations uint32
	PointerToLinenumbers uint32
	NumberOfRelocations  uint16
	NumberOfLinenumbers  uint16
	Characteristics      uint32
}

// ParseSectionHeaders decodes a section header stream.
func ParseSectionHeaders(data []byte) ([]SectionHeader, error) {
	if len(data)%40 != 0 {
		return nil, fmt.Errorf("section headers of %d bytes, not a multiple of 40: %w", len(data), ErrFormat)
	}
	b := &buf{b: data, ctx: "section headers"}
	out := make([]SectionHeader, 0, len(data)/40)
	for b.left() > 0 {
		out = append(out, SectionHeader{
			Name: cString(b.bytes(8)), VirtualSize: b.u32(), VirtualAddress: b.u32(), SizeOfRawData: b.u32(),
			PointerToRawData: b.u32(), PointerToRelocations: b.u32(), PointerToLinenumbers: b.u32(),
			NumberOfRelocations: b.u16(), NumberOfLinenumbers: b.u16(), Characteristics: b.u32(),
		})
	}
	return out, nil
}
