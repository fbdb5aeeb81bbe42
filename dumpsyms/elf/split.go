package elf

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
)

// DWARF 5 split units: the binary keeps a skeleton unit (the line table,
// DW_AT_addr_base into its .debug_addr, DW_AT_dwo_name) and the DIEs live in
// a .dwo file whose strings, range lists and addresses are indexed through
// .debug_str_offsets.dwo, .debug_rnglists.dwo and the binary's .debug_addr.

// Sizes of the DWARF 5 (32-bit format) headers of the offset tables a
// split unit uses implicitly, without a *_base attribute.
const (
	strOffsetsHeader = 8  // unit_length, version, padding
	rnglistsHeader   = 12 // unit_length, version, address_size, segment_selector_size, offset_entry_count
)

// attrGNUDwoName is DW_AT_GNU_dwo_name, the GNU split DWARF 4 extension.
const attrGNUDwoName dwarf.Attr = 0x2130

// splitLoader finds and opens the .dwo file of a skeleton unit.
type splitLoader struct {
	sr      *sectionReader
	binPath string
	binDir  string
	order   binary.ByteOrder
	// debugRanges is the skeleton file's .debug_ranges (GNU split DWARF 4).
	debugRanges []byte
	dwp         *dwpFile
	dwpTried    bool
	debugDirs   []string
	debugAddr   []byte // .debug_addr of the file holding the skeleton units
	warn        func(format string, args ...any)
	files       []*elf.File
}

// open returns the split unit's DWARF for the skeleton unit e, or nil.
func (l *splitLoader) open(e *dwarf.Entry) *dwarfSource {
	name, _ := e.Val(dwarf.AttrDwoName).(string)
	gnu := false
	if name == "" {
		n, ok := e.Val(attrGNUDwoName).(string)
		if !ok {
			return nil
		}
		if src := l.openDWP(e); src != nil {
			return src
		}
		name, gnu = n, true
	}
	compDir, _ := e.Val(dwarf.AttrCompDir).(string)
	var cands []string
	if filepath.IsAbs(name) {
		cands = append(cands, name)
	} else {
		if filepath.IsAbs(compDir) {
			cands = append(cands, filepath.Join(compDir, name))
		}
		cands = append(cands, filepath.Join(l.binDir, compDir, name), filepath.Join(l.binDir, name))
		for _, d := range l.debugDirs {
			cands = append(cands, filepath.Join(d, name))
		}
	}
	for _, c := range cands {
		if _, err := os.Stat(c); err != nil {
			continue
		}
		src, err := l.load(c, e, gnu)
		if err != nil {
			l.warn("split DWARF: %s: %v", c, err)
			continue
		}
		return src
	}
	l.warn("split DWARF: %s not found (looked in %v)", name, cands)
	return nil
}

// load reads the .dwo file at path; gnu marks a GNU split DWARF 4 one,
// whose index forms are rewritten and whose bases the skeleton gives.
func (l *splitLoader) load(path string, skel *dwarf.Entry, gnu bool) (*dwarfSource, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	l.files = append(l.files, f)
	sec := func(n string) []byte { return l.sr.data(f, n) }
	info, abbrev := sec(".debug_info.dwo"), sec(".debug_abbrev.dwo")
	if info == nil || abbrev == nil {
		return nil, fmt.Errorf("no .debug_info.dwo")
	}
	if gnu {
		m := map[uint32][2]uint32{
			dwSectInfo:       {0, uint32(len(info))},
			dwSectAbbrev:     {0, uint32(len(abbrev))},
			dwSectLine:       {0, uint32(len(sec(".debug_line.dwo")))},
			dwSectStrOffsets: {0, uint32(len(sec(".debug_str_offsets.dwo")))},
		}
		p := &dwpFile{abbrev: abbrev, info: info, line: sec(".debug_line.dwo"),
			strOffsets: sec(".debug_str_offsets.dwo"), str: sec(".debug_str.dwo")}
		return l.loadGNUUnit(p, m, skel)
	}
	d, err := dwarf.New(abbrev, nil, nil, info, nil, nil, nil, sec(".debug_str.dwo"))
	if err != nil {
		return nil, err
	}
	if so := sec(".debug_str_offsets.dwo"); len(so) >= strOffsetsHeader {
		if err := d.AddSection(".debug_str_offsets", so[strOffsetsHeader:]); err != nil {
			return nil, err
		}
	}
	if rl := sec(".debug_rnglists.dwo"); len(rl) >= rnglistsHeader {
		if err := d.AddSection(".debug_rnglists", rl[rnglistsHeader:]); err != nil {
			return nil, err
		}
	}
	if base, ok := skel.Val(dwarf.AttrAddrBase).(int64); ok && l.debugAddr != nil {
		if base < 0 || base > int64(len(l.debugAddr)) {
			return nil, fmt.Errorf("DW_AT_addr_base %#x beyond .debug_addr", base)
		}
		if err := d.AddSection(".debug_addr", l.debugAddr[base:]); err != nil {
			return nil, err
		}
	}
	return &dwarfSource{data: d, order: f.ByteOrder, line: sec(".debug_line.dwo"), str: sec(".debug_str.dwo")}, nil
}

// openDWP returns the GNU split unit of skeleton e from BINARY.dwp (beside
// the binary or in a debug directory).
func (l *splitLoader) openDWP(e *dwarf.Entry) *dwarfSource {
	if !l.dwpTried {
		l.dwpTried = true
		name := filepath.Base(l.binPath) + ".dwp"
		cands := []string{l.binPath + ".dwp"}
		for _, d := range l.debugDirs {
			cands = append(cands, filepath.Join(d, name))
		}
		for _, c := range cands {
			f, err := elf.Open(c)
			if err != nil {
				continue
			}
			l.files = append(l.files, f)
			p, err := openDWP(f, l.sr)
			if err != nil {
				l.warn("split DWARF: %s: %v", c, err)
				continue
			}
			l.dwp = p
			break
		}
		// Without a package, open falls back to the loose .dwo file.
	}
	if l.dwp == nil {
		return nil
	}
	src, err := l.loadDWPUnit(l.dwp, e)
	if err != nil {
		l.warn("split DWARF: %s.dwp: %v", filepath.Base(l.binPath), err)
		return nil
	}
	return src
}

func (l *splitLoader) close() {
	for _, f := range l.files {
		f.Close()
	}
}
