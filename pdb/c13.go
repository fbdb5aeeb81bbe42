package pdb

import "fmt"

// SubsectionKind is a C13 debug subsection kind (DEBUG_S_*).
type SubsectionKind uint32

// C13 subsection kinds.
const (
	DEBUG_S_SYMBOLS           SubsectionKind = 0xf1
	DEBUG_S_LINES             SubsectionKind = 0xf2
	DEBUG_S_STRINGTABLE       SubsectionKind = 0xf3
	DEBUG_S_FILECHKSMS        SubsectionKind = 0xf4
	DEBUG_S_FRAMEDATA         SubsectionKind = 0xf5
	DEBUG_S_INLINEELINES      SubsectionKind = 0xf6
	DEBUG_S_CROSSSCOPEIMPORTS SubsectionKind = 0xf7
	DEBUG_S_CROSSSCOPEEXPORTS SubsectionKind = 0xf8
	DEBUG_S_IGNORE            SubsectionKind = 0x80000000
)

// Subsection is one C13 debug subsection.
type Subsection struct {
	Kind SubsectionKind
	Data []byte
}

// ParseSubsections splits a module's C13 line information into its
// subsections.
func ParseSubsections(data []byte) ([]Subsection, error) {
	b := &buf{b: data, ctx: "c13 subsections"}
	var out []Subsection
	for b.left() >= 8 {
		k, n := SubsectionKind(b.u32()), b.u32()
		p := b.bytes(int(min(n, 1<<31-1)))
		if b.err != nil {
			return out, fmt.Errorf("c13 subsection %d (kind %#x): %w", len(out), k, b.err)
		}
		b.align(4)
		out = append(out, Subsection{k, p})
	}
	return out, nil
}

// LineBlock is the lines of one file in a DEBUG_S_LINES subsection.
type LineBlock struct {
	FileChecksumOffset uint32 // offset of the file's entry in DEBUG_S_FILECHKSMS
	Lines              []LineEntry
}

// LineEntry is one line number entry.
type LineEntry struct {
	Offset      uint32 // from the subsection's Offset
	LineStart   uint32
	DeltaEnd    uint8
	IsStatement bool
}

// Lines is a DEBUG_S_LINES subsection: the lines of one contiguous piece
// of code.
type Lines struct {
	Offset   uint32
	Segment  uint16
	Flags    uint16 // 1: columns present
	CodeSize uint32
	Blocks   []LineBlock
}

// ParseLines decodes a DEBUG_S_LINES subsection.
func ParseLines(data []byte) (*Lines, error) {
	b := &buf{b: data, ctx: "DEBUG_S_LINES"}
	l := &Lines{Offset: b.u32(), Segment: b.u16(), Flags: b.u16(), CodeSize: b.u32()}
	for b.err == nil && b.left() >= 12 {
		blk := LineBlock{FileChecksumOffset: b.u32()}
		n, size := b.u32(), b.u32()
		if size < 12 || int64(size-12) > int64(b.left()) {
			return l, fmt.Errorf("DEBUG_S_LINES: block of %d bytes in %d: %w", size, b.left()+12, ErrFormat)
		}
		bb := &buf{b: b.bytes(int(size - 12)), ctx: "DEBUG_S_LINES block"}
		if uint64(n)*8 > uint64(bb.left()) {
			return l, fmt.Errorf("DEBUG_S_LINES: block of %d lines in %d bytes: %w", n, bb.left(), ErrFormat)
		}
		blk.Lines = make([]LineEntry, n)
		for i := range blk.Lines {
			off, f := bb.u32(), bb.u32()
			blk.Lines[i] = LineEntry{Offset: off, LineStart: f & 0xffffff, DeltaEnd: uint8(f >> 24 & 0x7f), IsStatement: f&0x80000000 != 0}
		}
		l.Blocks = append(l.Blocks, blk)
	}
	return l, b.err
}

// FileChecksum is an entry of DEBUG_S_FILECHKSMS.
type FileChecksum struct {
	NameOffset uint32 // in /names
	Kind       uint8  // 0 none, 1 MD5, 2 SHA1, 3 SHA256
	Checksum   []byte
}

// ParseFileChecksums decodes a DEBUG_S_FILECHKSMS subsection into a map
// from each entry's offset in the subsection (what line blocks and inlinee
// lines name) to the entry.
func ParseFileChecksums(data []byte) (map[uint32]FileChecksum, error) {
	b := &buf{b: data, ctx: "DEBUG_S_FILECHKSMS"}
	out := map[uint32]FileChecksum{}
	for b.left() >= 6 {
		off := uint32(b.off)
		f := FileChecksum{NameOffset: b.u32()}
		n := b.u8()
		f.Kind = b.u8()
		f.Checksum = b.bytes(int(n))
		b.align(4)
		if b.err != nil {
			return out, b.err
		}
		out[off] = f
	}
	return out, nil
}

// InlineeLine is an entry of DEBUG_S_INLINEELINES: where an inlined
// function is defined.
type InlineeLine struct {
	Inlinee            uint32 // IPI item index
	FileChecksumOffset uint32
	SourceLine         uint32
	ExtraFiles         []uint32
}

// ParseInlineeLines decodes a DEBUG_S_INLINEELINES subsection.
func ParseInlineeLines(data []byte) ([]InlineeLine, error) {
	b := &buf{b: data, ctx: "DEBUG_S_INLINEELINES"}
	sig := b.u32()
	if sig != 0 && sig != 1 {
		return nil, fmt.Errorf("DEBUG_S_INLINEELINES: signature %d: %w", sig, ErrFormat)
	}
	var out []InlineeLine
	for b.err == nil && b.left() >= 12 {
		e := InlineeLine{Inlinee: b.u32(), FileChecksumOffset: b.u32(), SourceLine: b.u32()}
		if sig == 1 {
			n := b.u32()
			if uint64(n)*4 > uint64(b.left()) {
				return out, fmt.Errorf("DEBUG_S_INLINEELINES: %d extra files: %w", n, ErrFormat)
			}
			for range n {
				e.ExtraFiles = append(e.ExtraFiles, b.u32())
			}
		}
		out = append(out, e)
	}
	return out, b.err
}

// ParseFrameDataSubsection decodes a DEBUG_S_FRAMEDATA subsection: a
// relocated base address, then FRAMEDATA records.
func ParseFrameDataSubsection(data []byte) ([]FrameData, error) {
	if len(data) < 4 {
		return nil, fmt.Errorf("DEBUG_S_FRAMEDATA of %d bytes: %w", len(data), ErrFormat)
	}
	return ParseFrameData(data[4:])
}
