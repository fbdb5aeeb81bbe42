// Package dwarfcfi reads DWARF call frame information (.eh_frame and
// .debug_frame) and interprets its instructions into the rows of the unwind
// table, reporting each rule as it is established.
//
// The vocabulary is the DWARF standard's (section 6.4): a section holds
// Common Information Entries (CIE) and Frame Description Entries (FDE); each FDE
// covers [Begin, Begin+Length) and its instructions, after its CIE's initial
// instructions, define the canonical frame address (CFA) and register rules row
// by row. .eh_frame follows the Linux Standard Base variant: CIE id 0, CIE
// pointers relative to the pointer itself, pointer encodings (DW_EH_PE_*) named
// by the augmentation string.
//
// Malformed input yields errors, never panics; every length is checked against
// the section, and the remember/restore stack is bounded.
package dwarfcfi

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gobreakpad/gobreakpad/internal/dwarfbuf"
)

// Kind tells which flavour of call frame section is being read.
type Kind int

const (
	// EHFrame is the .eh_frame section (LSB flavour).
	EHFrame Kind = iota
	// DebugFrame is the .debug_frame section (DWARF flavour).
	DebugFrame
)

// String returns the section's name.
func (k Kind) String() string {
	if k == EHFrame {
		return ".eh_frame"
	}
	return ".debug_frame"
}

// Section is a call frame section with what is needed to decode its pointers.
type Section struct {
	Kind      Kind
	Data      []byte
	Addr      uint64           // virtual address of the section (for DW_EH_PE_pcrel)
	ByteOrder binary.ByteOrder // the object file's byte order
	AddrSize  int              // 4 or 8: size of an address (DW_EH_PE_absptr)
	TextAddr  uint64           // base for DW_EH_PE_textrel
	DataAddr  uint64           // base for DW_EH_PE_datarel (.got on most targets)
}

// CIE is a Common Information Entry.
type CIE struct {
	Offset       uint64 // offset of the entry in its section
	Version      uint8
	Augmentation string
	AddrSize     int
	CodeAlign    uint64
	DataAlign    int64
	RAColumn     uint64 // return address register column
	FDEEncoding  byte   // 'R' augmentation; DW_EH_PE_absptr when absent
	LSDAEncoding byte
	SignalFrame  bool // 'S' augmentation
	HasAugData   bool // augmentation string starts with 'z'
	Instructions []byte
	instrOffset  uint64
}

// FDE is a Frame Description Entry.
type FDE struct {
	Offset       uint64 // offset of the entry in its section
	CIE          *CIE
	Begin        uint64 // initial location
	Length       uint64 // address range
	Instructions []byte
	instrOffset  uint64 // section offset of Instructions, for pc-relative DW_CFA_set_loc
}

// Pointer encodings (DW_EH_PE_*).
const (
	peAbsptr  = 0x00
	peULEB128 = 0x01
	peUdata2  = 0x02
	peUdata4  = 0x03
	peUdata8  = 0x04
	peSLEB128 = 0x09
	peSdata2  = 0x0a
	peSdata4  = 0x0b
	peSdata8  = 0x0c
	pePCRel   = 0x10
	peTextRel = 0x20
	peDataRel = 0x30
	peFuncRel = 0x40
	peAligned = 0x50
	peInd     = 0x80
	peOmit    = 0xff
)

// ErrTruncated reports an entry or value running past the end of its data.
var ErrTruncated = errors.New("truncated")

// pointer decodes a value in encoding enc. base is the section-relative offset
// of the reader's data start, used for pc-relative values.
func (s *Section) pointer(r *dwarfbuf.Buf, enc byte, base uint64, addrSize int, funcStart uint64) (uint64, error) {
	if enc == peOmit {
		return 0, nil
	}
	if enc&peInd != 0 {
		return 0, fmt.Errorf("indirect pointer encoding %#x not supported", enc)
	}
	pos := base + uint64(r.Off())
	var v uint64
	switch enc & 0x0f {
	case peAbsptr:
		if addrSize == 4 {
			v = uint64(r.U32())
		} else {
			v = r.U64()
		}
	case peULEB128:
		v = r.Uleb()
	case peUdata2:
		v = uint64(r.U16())
	case peUdata4:
		v = uint64(r.U32())
	case peUdata8:
		v = r.U64()
	case peSLEB128:
		v = uint64(r.Sleb())
	case peSdata2:
		v = uint64(int64(int16(r.U16())))
	case peSdata4:
		v = uint64(int64(int32(r.U32())))
	case peSdata8:
		v = r.U64()
	default:
		return 0, fmt.Errorf("unknown pointer encoding %#x", enc)
	}
	if r.Err() != nil {
		return 0, r.Err()
	}
	switch enc & 0x70 {
	case 0:
	case pePCRel:
		v += s.Addr + pos
	case peTextRel:
		v += s.TextAddr
	case peDataRel:
		v += s.DataAddr
	case peFuncRel:
		v += funcStart
	case peAligned:
		return 0, fmt.Errorf("aligned pointer encoding %#x not supported", enc)
	default:
		return 0, fmt.Errorf("unknown pointer application %#x", enc)
	}
	if addrSize == 4 {
		v &= 0xffffffff
	}
	return v, nil
}

// Entries calls fn for every FDE in the section, in section order. An FDE
// whose CIE cannot be read is reported to bad (when not nil) and skipped; a
// malformed entry length ends the walk with an error since the following
// entries cannot be found.
func (s *Section) Entries(fn func(*FDE) error, bad func(offset uint64, err error)) error {
	if s.AddrSize != 4 && s.AddrSize != 8 {
		return fmt.Errorf("%v: address size %d not supported", s.Kind, s.AddrSize)
	}
	cies := make(map[uint64]*CIE)
	off := uint64(0)
	for off < uint64(len(s.Data)) {
		r := dwarfbuf.New(s.Data[off:], s.ByteOrder, ErrTruncated)
		length, dwarf64 := r.InitialLength()
		if r.Err() != nil {
			return fmt.Errorf("%v: entry at %#x: length: %w", s.Kind, off, r.Err())
		}
		if length == 0 {
			if s.Kind == EHFrame {
				// Zero terminator of .eh_frame.
				return nil
			}
			off += uint64(r.Off())
			continue
		}
		hdr := uint64(r.Off())
		if length > uint64(len(s.Data))-off-hdr {
			return fmt.Errorf("%v: entry at %#x: length %#x: %w", s.Kind, off, length, ErrTruncated)
		}
		body := s.Data[off+hdr : off+hdr+length]
		next := off + hdr + length
		br := dwarfbuf.New(body, s.ByteOrder, ErrTruncated)
		idPos := off + hdr
		var id uint64
		if dwarf64 {
			id = br.U64()
		} else {
			id = uint64(br.U32())
		}
		if br.Err() != nil {
			if bad != nil {
				bad(off, fmt.Errorf("entry id: %w", br.Err()))
			}
			off = next
			continue
		}
		isCIE := false
		switch s.Kind {
		case EHFrame:
			isCIE = id == 0
		case DebugFrame:
			isCIE = id == 0xffffffff || (dwarf64 && id == 0xffffffffffffffff)
		}
		if isCIE {
			off = next
			continue
		}
		var cieOff uint64
		if s.Kind == EHFrame {
			if id > idPos {
				if bad != nil {
					bad(off, fmt.Errorf("CIE pointer %#x out of section", id))
				}
				off = next
				continue
			}
			cieOff = idPos - id
		} else {
			cieOff = id
		}
		cie, ok := cies[cieOff]
		if !ok {
			var err error
			cie, err = s.parseCIE(cieOff)
			if err != nil {
				if bad != nil {
					bad(off, fmt.Errorf("CIE at %#x: %w", cieOff, err))
				}
				off = next
				continue
			}
			cies[cieOff] = cie
		}
		fde, err := s.parseFDE(off, off+hdr, body, br, cie)
		if err != nil {
			if bad != nil {
				bad(off, err)
			}
			off = next
			continue
		}
		if err := fn(fde); err != nil {
			return err
		}
		off = next
	}
	return nil
}

func (s *Section) parseCIE(off uint64) (*CIE, error) {
	if off >= uint64(len(s.Data)) {
		return nil, ErrTruncated
	}
	r := dwarfbuf.New(s.Data[off:], s.ByteOrder, ErrTruncated)
	length, dwarf64 := r.InitialLength()
	if r.Err() != nil {
		return nil, r.Err()
	}
	hdr := uint64(r.Off())
	if length > uint64(len(s.Data))-off-hdr {
		return nil, ErrTruncated
	}
	bodyOff := off + hdr
	r = dwarfbuf.New(s.Data[bodyOff:bodyOff+length], s.ByteOrder, ErrTruncated)
	var id uint64
	if dwarf64 {
		id = r.U64()
	} else {
		id = uint64(r.U32())
	}
	switch {
	case s.Kind == EHFrame && id != 0,
		s.Kind == DebugFrame && id != 0xffffffff && id != 0xffffffffffffffff:
		return nil, fmt.Errorf("entry is not a CIE (id %#x)", id)
	}
	c := &CIE{Offset: off, AddrSize: s.AddrSize}
	c.Version = r.U8()
	if c.Version != 1 && c.Version != 3 && c.Version != 4 {
		return nil, fmt.Errorf("version %d not supported", c.Version)
	}
	c.Augmentation = r.CString()
	aug := c.Augmentation
	if len(aug) >= 2 && aug[:2] == "eh" {
		// GCC 2.x: the augmentation is followed by an address.
		r.Bytes(uint64(s.AddrSize))
		aug = aug[2:]
	}
	if c.Version == 4 {
		c.AddrSize = int(r.U8())
		if seg := r.U8(); seg != 0 {
			return nil, fmt.Errorf("segment selector size %d not supported", seg)
		}
		if c.AddrSize != 4 && c.AddrSize != 8 {
			return nil, fmt.Errorf("address size %d not supported", c.AddrSize)
		}
	}
	c.CodeAlign = r.Uleb()
	c.DataAlign = r.Sleb()
	if c.Version == 1 {
		c.RAColumn = uint64(r.U8())
	} else {
		c.RAColumn = r.Uleb()
	}
	if r.Err() != nil {
		return nil, r.Err()
	}
	if len(aug) > 0 && aug[0] == 'z' {
		c.HasAugData = true
		n := r.Uleb()
		data := r.Bytes(n)
		if r.Err() != nil {
			return nil, fmt.Errorf("augmentation data: %w", r.Err())
		}
		ar := dwarfbuf.New(data, s.ByteOrder, ErrTruncated)
		base := bodyOff + uint64(r.Off()) - n
	augLoop:
		for i := 1; i < len(aug); i++ {
			switch aug[i] {
			case 'L':
				c.LSDAEncoding = ar.U8()
			case 'R':
				c.FDEEncoding = ar.U8()
			case 'P':
				enc := ar.U8()
				// The personality routine's address does not matter for
				// unwinding; it may be indirect, so skip it by its size.
				if _, err := s.pointer(ar, enc&^peInd, base, c.AddrSize, 0); err != nil {
					return nil, fmt.Errorf("personality: %w", err)
				}
			case 'S':
				c.SignalFrame = true
			case 'B', 'G':
				// AArch64 branch target identification / memory tagging: no data.
			default:
				// Unknown: the augmentation data length lets us skip the rest.
				break augLoop
			}
		}
		if ar.Err() != nil {
			return nil, fmt.Errorf("augmentation data: %w", ar.Err())
		}
	} else if aug != "" {
		return nil, fmt.Errorf("augmentation %q not supported", c.Augmentation)
	}
	if r.Err() != nil {
		return nil, r.Err()
	}
	c.Instructions = r.Rest()
	c.instrOffset = bodyOff + uint64(r.Off())
	return c, nil
}

func (s *Section) parseFDE(off, bodyOff uint64, body []byte, r *dwarfbuf.Buf, c *CIE) (*FDE, error) {
	f := &FDE{Offset: off, CIE: c}
	enc := c.FDEEncoding
	if s.Kind == DebugFrame && !c.HasAugData {
		enc = peAbsptr
	}
	var err error
	f.Begin, err = s.pointer(r, enc, bodyOff, c.AddrSize, 0)
	if err != nil {
		return nil, fmt.Errorf("initial location: %w", err)
	}
	// The address range uses the value format only, never an application.
	f.Length, err = s.pointer(r, enc&0x0f, bodyOff, c.AddrSize, 0)
	if err != nil {
		return nil, fmt.Errorf("address range: %w", err)
	}
	if c.HasAugData {
		n := r.Uleb()
		r.Bytes(n)
	}
	if r.Err() != nil {
		return nil, fmt.Errorf("FDE header: %w", r.Err())
	}
	f.Instructions = body[r.Off():]
	f.instrOffset = bodyOff + uint64(r.Off())
	return f, nil
}
