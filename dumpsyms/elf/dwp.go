package elf

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gobreakpad/gobreakpad/internal/dwarfbuf"
)

// GNU split DWARF 4 (-gsplit-dwarf with -gdwarf-4, packed by dwp): the
// skeleton unit names its split unit by DW_AT_GNU_dwo_id, which the
// package's .debug_cu_index maps to the unit's contributions to each .dwo
// section. Its DIEs use DW_FORM_GNU_addr_index and DW_FORM_GNU_str_index,
// which debug/dwarf does not decode: the unit's abbreviations are rewritten
// to the DWARF 5 forms of the same meaning (DW_FORM_addrx, DW_FORM_strx),
// whose bases are then supplied as section slices.

// Attributes and section identifiers of GNU split DWARF.
const (
	attrGNUDwoID      dwarf.Attr = 0x2131
	attrGNURangesBase dwarf.Attr = 0x2132
	attrGNUAddrBase   dwarf.Attr = 0x2133

	dwSectInfo       = 1
	dwSectAbbrev     = 3
	dwSectLine       = 4
	dwSectStrOffsets = 6
)

// dwpFile is an opened .dwp package.
type dwpFile struct {
	abbrev, info, line, strOffsets, str []byte
	units                               map[uint64]map[uint32][2]uint32 // dwo_id -> DW_SECT -> offset, size
}

func openDWP(f *elf.File, sr *sectionReader) (*dwpFile, error) {
	p := &dwpFile{
		abbrev: sr.data(f, ".debug_abbrev.dwo"), info: sr.data(f, ".debug_info.dwo"),
		line: sr.data(f, ".debug_line.dwo"), strOffsets: sr.data(f, ".debug_str_offsets.dwo"),
		str: sr.data(f, ".debug_str.dwo"),
	}
	idx := sr.data(f, ".debug_cu_index")
	if idx == nil || p.info == nil || p.abbrev == nil {
		return nil, errors.New("no .debug_cu_index or .debug_info.dwo")
	}
	var err error
	p.units, err = parseCUIndex(idx, f.ByteOrder)
	return p, err
}

// parseCUIndex reads a version 2 (GNU) or 5 unit index.
func parseCUIndex(b []byte, bo binary.ByteOrder) (map[uint64]map[uint32][2]uint32, error) {
	r := dwarfbuf.New(b, bo, nil)
	version := r.U32()
	if version&0xffff != 2 && version&0xffff != 5 {
		return nil, fmt.Errorf(".debug_cu_index version %d not supported", version)
	}
	ncols, nunits, nslots := uint64(r.U32()), uint64(r.U32()), uint64(r.U32())
	if r.Err() != nil {
		return nil, r.Err()
	}
	need := nslots*12 + ncols*4 + nunits*ncols*8
	if ncols > 1<<10 || nunits > 1<<24 || nslots > 1<<24 || need > uint64(r.Len()) {
		return nil, errors.New(".debug_cu_index: tables beyond the section")
	}
	sigs := r.Bytes(nslots * 8)
	rows := r.Bytes(nslots * 4)
	cols := r.Bytes(ncols * 4)
	offs := r.Bytes(nunits * ncols * 4)
	sizes := r.Bytes(nunits * ncols * 4)
	if r.Err() != nil {
		return nil, r.Err()
	}
	out := make(map[uint64]map[uint32][2]uint32)
	for s := uint64(0); s < nslots; s++ {
		row := uint64(bo.Uint32(rows[s*4:]))
		if row == 0 || row > nunits {
			continue
		}
		m := make(map[uint32][2]uint32, ncols)
		for c := uint64(0); c < ncols; c++ {
			i := ((row-1)*ncols + c) * 4
			m[bo.Uint32(cols[c*4:])] = [2]uint32{bo.Uint32(offs[i:]), bo.Uint32(sizes[i:])}
		}
		out[bo.Uint64(sigs[s*8:])] = m
	}
	return out, nil
}

// contribution returns a unit's part of a section, or nil.
func contribution(sec []byte, m map[uint32][2]uint32, kind uint32) []byte {
	c, ok := m[kind]
	if !ok || uint64(c[0])+uint64(c[1]) > uint64(len(sec)) {
		return nil
	}
	return sec[c[0] : c[0]+c[1]]
}

// rewriteGNUForms copies an abbreviation table, replacing
// DW_FORM_GNU_addr_index and DW_FORM_GNU_str_index by DW_FORM_addrx and
// DW_FORM_strx.
func rewriteGNUForms(abbrev []byte) ([]byte, error) {
	r := dwarfbuf.New(abbrev, nil, nil)
	out := make([]byte, 0, len(abbrev))
	for r.Len() > 0 {
		code := r.Uleb()
		out = binary.AppendUvarint(out, code)
		if code == 0 {
			continue
		}
		out = binary.AppendUvarint(out, r.Uleb()) // tag
		out = append(out, r.U8())                 // children
		for r.Err() == nil {
			attr, form := r.Uleb(), r.Uleb()
			switch form {
			case 0x1f01:
				form = 0x1b
			case 0x1f02:
				form = 0x1a
			}
			out = binary.AppendUvarint(out, attr)
			out = binary.AppendUvarint(out, form)
			if form == 0x21 { // DW_FORM_implicit_const
				v := r.Uleb()
				out = binary.AppendUvarint(out, v)
			}
			if attr == 0 && form == 0 {
				break
			}
		}
		if r.Err() != nil {
			return nil, fmt.Errorf("abbreviations: %w", r.Err())
		}
	}
	return out, nil
}

// loadDWPUnit returns the split unit of the GNU skeleton unit skel from p.
func (l *splitLoader) loadDWPUnit(p *dwpFile, skel *dwarf.Entry) (*dwarfSource, error) {
	id, ok := skel.Val(attrGNUDwoID).(int64)
	if !ok {
		return nil, errors.New("skeleton unit without DW_AT_GNU_dwo_id")
	}
	m, ok := p.units[uint64(id)]
	if !ok {
		return nil, fmt.Errorf("unit %#x not in the package", uint64(id))
	}
	return l.loadGNUUnit(p, m, skel)
}

// loadGNUUnit reads the GNU split unit whose contributions to p's sections
// m gives.
func (l *splitLoader) loadGNUUnit(p *dwpFile, m map[uint32][2]uint32, skel *dwarf.Entry) (*dwarfSource, error) {
	info := contribution(p.info, m, dwSectInfo)
	abbrev := contribution(p.abbrev, m, dwSectAbbrev)
	if info == nil || abbrev == nil {
		return nil, errors.New("no .debug_info.dwo contribution")
	}
	abbrev, err := rewriteGNUForms(abbrev)
	if err != nil {
		return nil, err
	}
	var ranges []byte
	if base, ok := skel.Val(attrGNURangesBase).(int64); ok && base >= 0 && base <= int64(len(l.debugRanges)) {
		ranges = l.debugRanges[base:]
	}
	d, err := dwarf.New(abbrev, nil, nil, info, nil, nil, ranges, p.str)
	if err != nil {
		return nil, err
	}
	if so := contribution(p.strOffsets, m, dwSectStrOffsets); so != nil {
		if err := d.AddSection(".debug_str_offsets", so); err != nil {
			return nil, err
		}
	}
	if base, ok := skel.Val(attrGNUAddrBase).(int64); ok && l.debugAddr != nil {
		if base < 0 || base > int64(len(l.debugAddr)) {
			return nil, fmt.Errorf("DW_AT_GNU_addr_base %#x beyond .debug_addr", base)
		}
		if err := d.AddSection(".debug_addr", l.debugAddr[base:]); err != nil {
			return nil, err
		}
	}
	return &dwarfSource{data: d, order: l.order, line: contribution(p.line, m, dwSectLine), str: p.str}, nil
}
