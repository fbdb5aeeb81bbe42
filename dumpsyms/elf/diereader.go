package elf

import (
	"debug/dwarf"
	"encoding/binary"

	"github.com/gobreakpad/gobreakpad/internal/dwarfbuf"
)

// entryReader is what walk needs of a dwarf.Reader.
type entryReader interface {
	Next() (*dwarf.Entry, error)
	SkipChildren()
}

// dieReader walks .debug_info as dwarf.Reader does, but decodes with
// debug/dwarf (through a Reader it seeks) only the DIEs whose tag is
// wanted; the others (parameters, variables, types, members: most of a
// file) are stepped over by their abbreviation's forms and returned as a
// shared Entry with only Offset, Tag and Children set, valid until the next
// call. Anything it does not understand hands the walk over to the
// dwarf.Reader from that DIE on, so errors read as debug/dwarf's.
type dieReader struct {
	r *dwarf.Reader // over cur
	// cur is the Data of the current unit: src's over all of .debug_info,
	// or, for a source read a unit at a time, one over the unit
	// (unitData) until the walk leaves dieReader's path (fallback).
	cur      *dwarf.Data
	src      *dwarfSource
	err      error // from src.fullData
	info     []byte
	abbrev   []byte
	order    binary.ByteOrder
	want     func(dwarf.Tag) bool
	fallback bool

	// The current unit and position.
	off, end int // offset of the next DIE, end of the unit
	base     int // offset of the unit header
	vers     int
	asize    int
	is64     bool
	tab      *abbrevTable

	lastChildren bool
	lastSibling  int
	lastUnit     bool

	aoff   uint64 // the unit's abbreviation table
	tabOff uint64 // the table in tab
	stub   dwarf.Entry
	null   dwarf.Entry
}

// abbrevTable is a unit's abbreviation table, compactly: a libc has
// thousands of them.
type abbrevTable struct {
	ents  []abbrevEntry
	forms []abbrevForm
	dense []int32 // entry index + 1 by code
	other map[uint64]int32
}

type abbrevEntry struct {
	tag      dwarf.Tag
	children bool
	lo, hi   uint32 // its forms
}

type abbrevForm struct {
	attr, form uint16
}

func (t *abbrevTable) get(code uint64) *abbrevEntry {
	var i int32
	if code < uint64(len(t.dense)) {
		i = t.dense[code]
	} else {
		i = t.other[code]
	}
	if i == 0 {
		return nil
	}
	return &t.ents[i-1]
}

// newDIEReader returns a dieReader over src's info and abbrev, or nil
// when a unit header is not one it reads (or src has no such sections).
func newDIEReader(src *dwarfSource, want func(dwarf.Tag) bool) *dieReader {
	info, abbrev := src.info, src.abbrev
	if info == nil || abbrev == nil {
		return nil
	}
	d := &dieReader{src: src, info: info, abbrev: abbrev, order: src.order, want: want}
	if src.units == nil {
		d.cur = src.data
		d.r = src.data.Reader()
	}
	// Check every unit header first.
	for off := 0; off < len(info); {
		if !d.unit(off) {
			return nil
		}
		off = d.end
	}
	d.off, d.end = 0, 0
	return d
}

// unit reads the header of the unit at off.
func (d *dieReader) unit(off int) bool {
	b := d.info
	if off+4 > len(b) {
		return false
	}
	n := uint64(d.order.Uint32(b[off:]))
	p := off + 4
	d.is64 = false
	if n == 0xffffffff {
		if p+8 > len(b) {
			return false
		}
		n = d.order.Uint64(b[p:])
		p += 8
		d.is64 = true
	} else if n >= 0xfffffff0 || n == 0 {
		return false
	}
	if n > uint64(len(b)-p) || n != uint64(uint32(n)) {
		return false
	}
	end := p + int(n)
	need := func(k int) bool { return p+k <= end }
	if !need(2) {
		return false
	}
	d.vers = int(d.order.Uint16(b[p:]))
	p += 2
	if d.vers < 2 || d.vers > 5 {
		return false
	}
	var utype byte
	if d.vers >= 5 {
		if !need(2) {
			return false
		}
		utype, d.asize = b[p], int(b[p+1])
		p += 2
	}
	var aoff uint64
	if d.is64 {
		if !need(8) {
			return false
		}
		aoff = d.order.Uint64(b[p:])
		p += 8
	} else {
		if !need(4) {
			return false
		}
		aoff = uint64(d.order.Uint32(b[p:]))
		p += 4
	}
	if d.vers < 5 {
		if !need(1) {
			return false
		}
		d.asize = int(b[p])
		p++
	}
	switch utype {
	case 0, 1, 3: // DWARF 4, DW_UT_compile, DW_UT_partial
	case 4, 5: // DW_UT_skeleton, DW_UT_split_compile
		p += 8
	case 2, 6: // DW_UT_type, DW_UT_split_type
		p += 8 + 4
		if d.is64 {
			p += 4
		}
	default:
		return false
	}
	if p > end {
		return false
	}
	if d.asize != 4 && d.asize != 8 && d.asize != 2 && d.asize != 1 {
		return false
	}
	if aoff >= uint64(len(d.abbrev)) {
		return false
	}
	d.aoff, d.base, d.off, d.end = aoff, off, p, end
	return true
}

// table parses the abbreviation table at off (or returns the last one,
// when consecutive units share it), or returns nil if it does not read it.
func (d *dieReader) table(off uint64) *abbrevTable {
	if d.tab != nil && d.tabOff == off {
		return d.tab
	}
	if off >= uint64(len(d.abbrev)) {
		return nil
	}
	b := d.abbrev[off:]
	p := 0
	nent, nform := abbrevCount(b)
	t := &abbrevTable{ents: make([]abbrevEntry, 0, nent), forms: make([]abbrevForm, 0, nform)}
	for {
		code, ok := dwarfbuf.Uleb(b, &p)
		if !ok {
			return nil
		}
		if code == 0 {
			break
		}
		tag, ok := dwarfbuf.Uleb(b, &p)
		if !ok || p >= len(b) || tag > 1<<32-1 {
			return nil
		}
		a := abbrevEntry{tag: dwarf.Tag(tag), children: b[p] == 1, lo: uint32(len(t.forms))}
		p++
		for {
			attr, ok1 := dwarfbuf.Uleb(b, &p)
			form, ok2 := dwarfbuf.Uleb(b, &p)
			if !ok1 || !ok2 || attr > 0xffff || form > 0xffff {
				return nil
			}
			if attr == 0 && form == 0 {
				break
			}
			if form == 0x21 { // DW_FORM_implicit_const
				if _, ok := dwarfbuf.Uleb(b, &p); !ok {
					return nil
				}
			}
			t.forms = append(t.forms, abbrevForm{uint16(attr), uint16(form)})
		}
		a.hi = uint32(len(t.forms))
		t.ents = append(t.ents, a)
		i := int32(len(t.ents))
		if code < 1<<16 {
			if uint64(len(t.dense)) <= code {
				t.dense = append(t.dense, make([]int32, int(code)+1-len(t.dense))...)
			}
			t.dense[code] = i // the last one, as debug/dwarf
		} else {
			if t.other == nil {
				t.other = map[uint64]int32{}
			}
			t.other[code] = i
		}
	}
	d.tab, d.tabOff = t, off
	return t
}

// abbrevCount counts the entries and attributes of the abbreviation table
// at the start of b.
func abbrevCount(b []byte) (entries, forms int) {
	p := 0
	for {
		code, ok := dwarfbuf.Uleb(b, &p)
		if !ok || code == 0 {
			return
		}
		if _, ok := dwarfbuf.Uleb(b, &p); !ok || p >= len(b) {
			return
		}
		p++
		entries++
		for {
			attr, ok1 := dwarfbuf.Uleb(b, &p)
			form, ok2 := dwarfbuf.Uleb(b, &p)
			if !ok1 || !ok2 || attr == 0 && form == 0 {
				break
			}
			if form == 0x21 {
				dwarfbuf.Uleb(b, &p)
			}
			forms++
		}
	}
}

// toStd hands the walk over to the dwarf.Reader at the DIE at off.
func (d *dieReader) toStd(off int) (*dwarf.Entry, error) {
	if !d.toFull() {
		return nil, d.err
	}
	d.r.Seek(dwarf.Offset(off))
	return d.r.Next()
}

// toFull leaves dieReader's path: from now on the walk reads through a
// dwarf.Reader over all of .debug_info. It reports false (with d.err)
// when that Data cannot be made.
func (d *dieReader) toFull() bool {
	d.fallback = true
	if d.src.units == nil {
		return true
	}
	full, err := d.src.fullData()
	if err != nil {
		d.err = err
		return false
	}
	d.cur, d.r = full, full.Reader()
	return true
}

// enterUnit makes the Data for the unit whose header d.unit just read,
// when the source is read a unit at a time (a Data over that unit alone,
// or, if the unit does not allow it, the one over all units).
func (d *dieReader) enterUnit() error {
	u := d.src.units
	if u == nil {
		return nil
	}
	data, ok := u.unitData(d.base, d.end, d.vers, d.aoff, d.asize, d.order)
	if !ok {
		full, err := d.src.fullData()
		if err != nil {
			return err
		}
		data = full
	}
	d.cur, d.r = data, data.Reader()
	return nil
}

// data returns the Data the last entry was read from, for the Ranges and
// LineReader of that entry.
func (d *dieReader) data() *dwarf.Data {
	return d.cur
}

func (d *dieReader) Next() (*dwarf.Entry, error) {
	return d.next(true)
}

func (d *dieReader) next(fetch bool) (*dwarf.Entry, error) {
	if d.fallback {
		if d.err != nil {
			return nil, d.err
		}
		return d.r.Next()
	}
	for d.off >= d.end {
		if d.end >= len(d.info) {
			d.lastUnit, d.lastChildren = false, false
			return nil, nil
		}
		d.unit(d.end) // checked by newDIEReader
		if d.src.units != nil {
			d.src.units.passed(d.base)
		}
		if err := d.enterUnit(); err != nil {
			d.fallback, d.err = true, err
			return nil, err
		}
		d.tab = d.table(d.aoff)
		if d.tab == nil {
			return d.toStd(d.off)
		}
	}
	d.lastUnit = false
	off := d.off
	p := off
	code, ok := dwarfbuf.Uleb(d.info[:d.end], &p)
	if !ok {
		return d.toStd(off)
	}
	if code == 0 {
		d.off = p
		d.lastChildren = false
		d.null = dwarf.Entry{}
		return &d.null, nil
	}
	a := d.tab.get(code)
	if a == nil {
		return d.toStd(off)
	}
	sibling := 0
	for _, f := range d.tab.forms[a.lo:a.hi] {
		form := uint64(f.form)
		for form == 0x16 { // DW_FORM_indirect
			v, ok := dwarfbuf.Uleb(d.info[:d.end], &p)
			if !ok {
				return d.toStd(off)
			}
			form = v
		}
		if f.attr == uint16(dwarf.AttrSibling) {
			if s, ok := d.ref(form, p); ok {
				sibling = s
			}
		}
		if !d.skip(form, &p) {
			return d.toStd(off)
		}
	}
	if fetch && d.want(a.tag) {
		d.r.Seek(dwarf.Offset(off))
		e, err := d.r.Next()
		if err != nil {
			d.fallback = true
			return nil, err
		}
		d.off = p
		d.lastChildren, d.lastSibling = a.children, sibling
		d.lastUnit = a.tag == dwarf.TagCompileUnit || a.tag == dwarf.TagPartialUnit
		return e, nil
	}
	d.off = p
	d.lastChildren, d.lastSibling = a.children, sibling
	d.lastUnit = a.tag == dwarf.TagCompileUnit || a.tag == dwarf.TagPartialUnit
	d.stub = dwarf.Entry{Offset: dwarf.Offset(off), Tag: a.tag, Children: a.children}
	return &d.stub, nil
}

// ref decodes a DW_AT_sibling value at p as debug/dwarf does (an Offset
// for the reference forms it decodes to one).
func (d *dieReader) ref(form uint64, p int) (int, bool) {
	b := d.info[:d.end]
	var v uint64
	switch form {
	case 0x11:
		if p+1 > len(b) {
			return 0, false
		}
		v = uint64(b[p])
	case 0x12:
		if p+2 > len(b) {
			return 0, false
		}
		v = uint64(d.order.Uint16(b[p:]))
	case 0x13:
		if p+4 > len(b) {
			return 0, false
		}
		v = uint64(d.order.Uint32(b[p:]))
	case 0x14:
		if p+8 > len(b) {
			return 0, false
		}
		v = d.order.Uint64(b[p:])
	case 0x15:
		var ok bool
		if v, ok = dwarfbuf.Uleb(b, &p); !ok {
			return 0, false
		}
	default:
		return 0, false
	}
	v += uint64(d.base)
	if v > 1<<62 {
		return 0, false
	}
	return int(v), true
}

// skip steps over a value of the given form.
func (d *dieReader) skip(form uint64, p *int) bool {
	b := d.info[:d.end]
	off := 4
	if d.is64 {
		off = 8
	}
	n := 0
	switch form {
	case 0x01: // addr
		n = d.asize
	case 0x03: // block2
		if *p+2 > len(b) {
			return false
		}
		n = 2 + int(d.order.Uint16(b[*p:]))
	case 0x04: // block4
		if *p+4 > len(b) {
			return false
		}
		n = 4 + int(d.order.Uint32(b[*p:]))
	case 0x05, 0x12: // data2, ref2
		n = 2
	case 0x06, 0x13, 0x1c: // data4, ref4, ref_sup4
		n = 4
	case 0x07, 0x14, 0x20, 0x24: // data8, ref8, ref_sig8, ref_sup8
		n = 8
	case 0x08: // string
		for i := *p; i < len(b); i++ {
			if b[i] == 0 {
				*p = i + 1
				return true
			}
		}
		return false
	case 0x09, 0x18: // block, exprloc
		l, ok := dwarfbuf.Uleb(b, p)
		if !ok || l > uint64(len(b)) {
			return false
		}
		n = int(l)
	case 0x0a: // block1
		if *p+1 > len(b) {
			return false
		}
		n = 1 + int(b[*p])
	case 0x0b, 0x0c, 0x11, 0x25, 0x29: // data1, flag, ref1, strx1, addrx1
		n = 1
	case 0x0d, 0x0f, 0x15, 0x1a, 0x1b, 0x22, 0x23: // LEB128 forms
		_, ok := dwarfbuf.Uleb(b, p)
		return ok
	case 0x0e, 0x17, 0x1d, 0x1f, 0x1f20, 0x1f21: // strp, sec_offset, strp_sup, line_strp, GNU_ref_alt, GNU_strp_alt
		n = off
	case 0x10: // ref_addr
		n = off
		if d.vers == 2 {
			n = d.asize
		}
	case 0x19, 0x21: // flag_present, implicit_const
	case 0x1e: // data16
		n = 16
	case 0x26, 0x2a: // strx2, addrx2
		n = 2
	case 0x27, 0x2b: // strx3, addrx3
		n = 3
	case 0x28, 0x2c: // strx4, addrx4
		n = 4
	default:
		return false
	}
	if n < 0 || n > len(b)-*p {
		return false
	}
	*p += n
	return true
}

func (d *dieReader) SkipChildren() {
	if d.fallback {
		if d.err == nil {
			d.r.SkipChildren()
		}
		return
	}
	if !d.lastChildren {
		return
	}
	d.lastChildren = false
	if d.lastSibling >= d.off {
		if d.lastSibling < d.end {
			d.off = d.lastSibling
			return
		}
		if d.toFull() {
			d.r.Seek(dwarf.Offset(d.lastSibling))
		}
		return
	}
	if d.lastUnit && d.end < len(d.info) {
		d.off = d.end
		return
	}
	for {
		e, err := d.next(false)
		if err != nil || e == nil || e.Tag == 0 {
			return
		}
		if e.Children {
			d.SkipChildren()
		}
	}
}
