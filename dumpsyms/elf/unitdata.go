package elf

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/gobreakpad/gobreakpad/internal/mmap"

	"github.com/gobreakpad/gobreakpad/internal/dwarfbuf"
)

// unitAtATime makes loadDWARF read sources a unit at a time when
// unitsReadable allows (a variable: tests compare both ways).
var unitAtATime = true

// unitHook, when set (by tests), is told of each Data made for a source
// read a unit at a time: over one unit, or over all (full).
var unitHook func(full bool)

// unitSections are the sections of a dwarfSource whose debug/dwarf Data is
// made one unit at a time (see dwarfSource.unitData). dwarf.New parses
// the abbreviation table of every unit up front and keeps them all in the
// Data (12 MB for Debian's libc, the largest part of dump_syms' peak
// memory); a Data over one unit holds that unit's table alone, dropped
// when the walk moves on.
type unitSections struct {
	abbrev, info, line, ranges, str     []byte
	addr, lineStr, strOffsets, rnglists []byte

	once sync.Once
	full *dwarf.Data
	err  error

	// refill, when set, reads .debug_info into info again: info is then
	// memory from mmap.Anon whose pages the walk gives back behind it
	// (passed), below released; fullData refills it first.
	refill   func() error
	released int
}

// releaseStep is how far the walk moves on before it gives back the pages
// of .debug_info behind it (one madvise call each time; a variable: tests
// lower it).
var releaseStep = 256 << 10

// passed tells u that the walk has read .debug_info up to off and will not
// read it again (unless it makes fullData): the whole pages below off,
// but the first (the dummy unit headers are written there), are given back.
func (u *unitSections) passed(off int) {
	if u.refill == nil || u.full != nil || off-u.released < releaseStep {
		return
	}
	page := os.Getpagesize()
	if u.released < page {
		u.released = page
	}
	hi := off &^ (page - 1)
	if hi > u.released {
		mmap.Discard(u.info[u.released:hi])
		u.released = hi
	}
}

// newData returns dwarf.New over the sections with info cut to info.
func (s *unitSections) newData(info []byte) (*dwarf.Data, error) {
	d, err := dwarf.New(s.abbrev, nil, nil, info, s.line, nil, s.ranges, s.str)
	if err != nil {
		return nil, err
	}
	for _, a := range []struct {
		name string
		b    []byte
	}{{".debug_addr", s.addr}, {".debug_line_str", s.lineStr}, {".debug_str_offsets", s.strOffsets}, {".debug_rnglists", s.rnglists}} {
		if a.b != nil {
			if err := d.AddSection(a.name, a.b); err != nil {
				return nil, err
			}
		}
	}
	return d, nil
}

// fullData returns src's Data over all of .debug_info: src.data, or, for a
// source read a unit at a time, the Data made (once) over every unit, for
// the walks that leave dieReader's path (damaged input).
func (src *dwarfSource) fullData() (*dwarf.Data, error) {
	if src.data != nil || src.units == nil {
		return src.data, nil
	}
	u := src.units
	u.once.Do(func() {
		if unitHook != nil {
			unitHook(true)
		}
		if u.refill != nil && u.released > 0 {
			if err := u.refill(); err != nil {
				u.err = fmt.Errorf("reading .debug_info again: %w", err)
				return
			}
			u.released = 0
		}
		u.full, u.err = u.newData(u.info)
	})
	return u.full, u.err
}

// unitData returns a Data that reads the unit whose header is at base and
// which ends at end, with its entries at their offsets in .debug_info:
// dwarf.New over .debug_info cut at end, its bytes before base made into
// one unit (a header written over the first bytes of .debug_info for the
// time of the call, then put back) that uses the same abbreviation table
// and version as the unit, so that debug/dwarf parses the table once.
// ok is false when the unit does not allow it (a gap under 12 bytes); the
// caller then uses fullData.
func (u *unitSections) unitData(base, end int, vers int, aoff uint64, asize int, order binary.ByteOrder) (*dwarf.Data, bool) {
	if unitHook != nil {
		unitHook(false)
	}
	if base == 0 {
		d, err := u.newData(u.info[:end])
		return d, err == nil
	}
	// The header of a 32-bit unit: length, version, then (DWARF 5) unit
	// type and address size and abbreviation offset, or (before) the
	// offset and address size.
	var hdr [12]byte
	n := 11
	order.PutUint16(hdr[4:], uint16(vers))
	if vers >= 5 {
		hdr[6], hdr[7] = 1, byte(asize) // DW_UT_compile
		order.PutUint32(hdr[8:], uint32(aoff))
		n = 12
	} else {
		order.PutUint32(hdr[6:], uint32(aoff))
		hdr[10] = byte(asize)
	}
	if aoff > 0xffffffff || base < n || base-4 >= 0xfffffff0 {
		return nil, false
	}
	order.PutUint32(hdr[:], uint32(base-4))
	var saved [12]byte
	copy(saved[:n], u.info)
	copy(u.info, hdr[:n])
	d, err := u.newData(u.info[:end])
	copy(u.info, saved[:n])
	return d, err == nil
}

// unitsReadable reports whether dwarf.New accepts info and abbrev, so that
// reading them a unit at a time (unitData) changes nothing: every unit
// header reads as dieReader reads them (stricter than dwarf.New), and every
// abbreviation table a unit names parses as debug/dwarf parses it, with
// forms it knows. When it says false the source is read as before, with
// one dwarf.New over everything (and its error, if any).
func unitsReadable(info, abbrev []byte, order binary.ByteOrder) bool {
	if len(info) == 0 || abbrev == nil {
		return false
	}
	d := &dieReader{info: info, abbrev: abbrev, order: order}
	// The version each table was first parsed with: debug/dwarf keeps a
	// table by offset, its classes made for the first unit's version; a
	// table shared by units of different versions is left to it.
	seen := map[uint64]int{}
	for off := 0; off < len(info); off = d.end {
		if !d.unit(off) {
			return false
		}
		if v, ok := seen[d.aoff]; ok {
			if v != d.vers {
				return false
			}
			continue
		}
		if !abbrevTableOK(abbrev[d.aoff:]) {
			return false
		}
		seen[d.aoff] = d.vers
	}
	return true
}

// abbrevTableOK reports whether the abbreviation table at the start of b
// is well formed (every number terminated, every entry with its children
// byte, codes under 2^32, the table ended by a zero code) with forms that
// debug/dwarf knows: then debug/dwarf's parseAbbrev accepts it.
func abbrevTableOK(b []byte) bool {
	p := 0
	for {
		code, ok := dwarfbuf.Uleb(b, &p)
		if !ok || code > 0xffffffff {
			return false
		}
		if code == 0 {
			return true
		}
		if _, ok := dwarfbuf.Uleb(b, &p); !ok || p >= len(b) {
			return false
		}
		p++ // DW_CHILDREN
		for {
			attr, ok1 := dwarfbuf.Uleb(b, &p)
			form, ok2 := dwarfbuf.Uleb(b, &p)
			if !ok1 || !ok2 {
				return false
			}
			if attr == 0 && form == 0 {
				break
			}
			if !knownForm(form) {
				return false
			}
			if form == 0x21 { // DW_FORM_implicit_const
				if _, ok := dwarfbuf.Uleb(b, &p); !ok {
					return false
				}
			}
		}
	}
}

// knownForm reports whether debug/dwarf gives the form a class (its
// formToClass; any other form makes dwarf.New fail).
func knownForm(form uint64) bool {
	return form == 0x01 || form >= 0x03 && form <= 0x2c || form == 0x1f20 || form == 0x1f21
}

// anonSection reads the section called name of f, decompressed (within
// its bound), into memory from mmap.Anon, which it adds to sr's frees. It
// returns the contents and the function that reads them again into the
// same memory, or ok false when the section is absent, over its bound or
// fails to read: the caller then reads it with sr.data (and its warning).
func (sr *sectionReader) anonSection(f *elf.File, name string) (data []byte, refill func() error, ok bool) {
	s := f.Section(name)
	if s == nil || s.Type == elf.SHT_NOBITS || s.Size == 0 || s.Size != uint64(int(s.Size)) || sr.check(s) != nil {
		return nil, nil, false
	}
	b, free, err := mmap.Anon(int(s.Size))
	if err != nil {
		return nil, nil, false
	}
	refill = func() error {
		_, err := io.ReadFull(s.Open(), b)
		return err
	}
	if refill() != nil {
		free()
		return nil, nil, false
	}
	sr.mu.Lock()
	sr.frees = append(sr.frees, free)
	sr.mu.Unlock()
	return b, refill, true
}

// free gives back the memory of the sections read by anonSection: after
// it, nothing read from them may be used.
func (sr *sectionReader) free() {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	for _, f := range sr.frees {
		f()
	}
	sr.frees = nil
}
