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
)

// Kind tells which flavour of call frame section is being read.
type Kind int

const (
	// EHFrame is the .eh_frame section (LSB flavour).
	EHFrame Kind = iota
	// DebugFrame is the .debug_frame section (DWARF flavour).
	DebugFrame
)

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

// reader is a cursor over a byte slice that records the first error.
type reader struct {
	b   []byte
	pos int
	bo  binary.ByteOrder
	err error
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *reader) need(n int) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || n > len(r.b)-r.pos {
		r.fail(ErrTruncated)
		return false
	}
	return true
}

func (r *reader) u8() uint8 {
	if !r.need(1) {
		return 0
	}
	v := r.b[r.pos]
	r.pos++
	return v
}

func (r *reader) u16() uint16 {
	if !r.need(2) {
		return 0
	}
	v := r.bo.Uint16(r.b[r.pos:])
	r.pos += 2
	return v
}

func (r *reader) u32() uint32 {
	if !r.need(4) {
		return 0
	}
	v := r.bo.Uint32(r.b[r.pos:])
	r.pos += 4
	return v
}

func (r *reader) u64() uint64 {
	if !r.need(8) {
		return 0
	}
	v := r.bo.Uint64(r.b[r.pos:])
	r.pos += 8
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if n > uint64(len(r.b)) || !r.need(int(n)) {
		r.fail(ErrTruncated)
		return nil
	}
	v := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return v
}

func (r *reader) uleb() uint64 {
	var v uint64
	var shift uint
	for {
		b := r.u8()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= uint64(b&0x7f) << shift
		}
		shift += 7
		if b&0x80 == 0 {
			return v
		}
	}
}

func (r *reader) sleb() int64 {
	var v int64
	var shift uint
	var b byte
	for {
		b = r.u8()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= int64(b&0x7f) << shift
		}
		shift += 7
		if b&0x80 == 0 {
			break
		}
	}
	if shift < 64 && b&0x40 != 0 {
		v |= -1 << shift
	}
	return v
}

func (r *reader) cstring() string {
	if r.err != nil {
		return ""
	}
	for i := r.pos; i < len(r.b); i++ {
		if r.b[i] == 0 {
			s := string(r.b[r.pos:i])
			r.pos = i + 1
			return s
		}
	}
	r.fail(ErrTruncated)
	return ""
}

// pointer decodes a value in encoding enc. base is the section-relative offset
// of the reader's data start, used for pc-relative values.
func (s *Section) pointer(r *reader, enc byte, base uint64, addrSize int, funcStart uint64) (uint64, error) {
	if enc == peOmit {
		return 0, nil
	}
	if enc&peInd != 0 {
		return 0, fmt.Errorf("indirect pointer encoding %#x not supported", enc)
	}
	pos := base + uint64(r.pos)
	var v uint64
	switch enc & 0x0f {
	case peAbsptr:
		if addrSize == 4 {
			v = uint64(r.u32())
		} else {
			v = r.u64()
		}
	case peULEB128:
		v = r.uleb()
	case peUdata2:
		v = uint64(r.u16())
	case peUdata4:
		v = uint64(r.u32())
	case peUdata8:
		v = r.u64()
	case peSLEB128:
		v = uint64(r.sleb())
	case peSdata2:
		v = uint64(int64(int16(r.u16())))
	case peSdata4:
		v = uint64(int64(int32(r.u32())))
	case peSdata8:
		v = r.u64()
	default:
		return 0, fmt.Errorf("unknown pointer encoding %#x", enc)
	}
	if r.err != nil {
		return 0, r.err
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
		r := &reader{b: s.Data[off:], bo: s.ByteOrder}
		length := uint64(r.u32())
		dwarf64 := false
		if length == 0xffffffff {
			length = r.u64()
			dwarf64 = true
		}
		if r.err != nil {
			return fmt.Errorf("%v: entry at %#x: length: %w", s.Kind, off, r.err)
		}
		if length == 0 {
			if s.Kind == EHFrame {
				// Zero terminator of .eh_frame.
				return nil
			}
			off += uint64(r.pos)
			continue
		}
		hdr := uint64(r.pos)
		if length > uint64(len(s.Data))-off-hdr {
			return fmt.Errorf("%v: entry at %#x: length %#x: %w", s.Kind, off, length, ErrTruncated)
		}
		body := s.Data[off+hdr : off+hdr+length]
		next := off + hdr + length
		br := &reader{b: body, bo: s.ByteOrder}
		idPos := off + hdr
		var id uint64
		if dwarf64 {
			id = br.u64()
		} else {
			id = uint64(br.u32())
		}
		if br.err != nil {
			if bad != nil {
				bad(off, fmt.Errorf("entry id: %w", br.err))
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
	r := &reader{b: s.Data[off:], bo: s.ByteOrder}
	length := uint64(r.u32())
	dwarf64 := false
	if length == 0xffffffff {
		length = r.u64()
		dwarf64 = true
	}
	if r.err != nil {
		return nil, r.err
	}
	hdr := uint64(r.pos)
	if length > uint64(len(s.Data))-off-hdr {
		return nil, ErrTruncated
	}
	bodyOff := off + hdr
	r = &reader{b: s.Data[bodyOff : bodyOff+length], bo: s.ByteOrder}
	var id uint64
	if dwarf64 {
		id = r.u64()
	} else {
		id = uint64(r.u32())
	}
	switch {
	case s.Kind == EHFrame && id != 0,
		s.Kind == DebugFrame && id != 0xffffffff && id != 0xffffffffffffffff:
		return nil, fmt.Errorf("entry is not a CIE (id %#x)", id)
	}
	c := &CIE{Offset: off, AddrSize: s.AddrSize}
	c.Version = r.u8()
	if c.Version != 1 && c.Version != 3 && c.Version != 4 {
		return nil, fmt.Errorf("version %d not supported", c.Version)
	}
	c.Augmentation = r.cstring()
	aug := c.Augmentation
	if len(aug) >= 2 && aug[:2] == "eh" {
		// GCC 2.x: the augmentation is followed by an address.
		r.bytes(uint64(s.AddrSize))
		aug = aug[2:]
	}
	if c.Version == 4 {
		c.AddrSize = int(r.u8())
		if seg := r.u8(); seg != 0 {
			return nil, fmt.Errorf("segment selector size %d not supported", seg)
		}
		if c.AddrSize != 4 && c.AddrSize != 8 {
			return nil, fmt.Errorf("address size %d not supported", c.AddrSize)
		}
	}
	c.CodeAlign = r.uleb()
	c.DataAlign = r.sleb()
	if c.Version == 1 {
		c.RAColumn = uint64(r.u8())
	} else {
		c.RAColumn = r.uleb()
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(aug) > 0 && aug[0] == 'z' {
		c.HasAugData = true
		n := r.uleb()
		data := r.bytes(n)
		if r.err != nil {
			return nil, fmt.Errorf("augmentation data: %w", r.err)
		}
		ar := &reader{b: data, bo: s.ByteOrder}
		base := bodyOff + uint64(r.pos) - n
	augLoop:
		for i := 1; i < len(aug); i++ {
			switch aug[i] {
			case 'L':
				c.LSDAEncoding = ar.u8()
			case 'R':
				c.FDEEncoding = ar.u8()
			case 'P':
				enc := ar.u8()
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
		if ar.err != nil {
			return nil, fmt.Errorf("augmentation data: %w", ar.err)
		}
	} else if aug != "" {
		return nil, fmt.Errorf("augmentation %q not supported", c.Augmentation)
	}
	if r.err != nil {
		return nil, r.err
	}
	c.Instructions = r.b[r.pos:]
	c.instrOffset = bodyOff + uint64(r.pos)
	return c, nil
}

func (s *Section) parseFDE(off, bodyOff uint64, body []byte, r *reader, c *CIE) (*FDE, error) {
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
		n := r.uleb()
		r.bytes(n)
	}
	if r.err != nil {
		return nil, fmt.Errorf("FDE header: %w", r.err)
	}
	f.Instructions = body[r.pos:]
	f.instrOffset = bodyOff + uint64(r.pos)
	return f, nil
}
