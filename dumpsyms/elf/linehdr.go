package elf

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gobreakpad/gobreakpad/internal/dwarfbuf"
)

// lineFileNames reads the file name table of the line number program header
// at off in .debug_line and returns each file number's full name, composed
// the way Breakpad's line reader composes it: a relative name is appended
// with "/" to its directory, a relative directory to the compilation
// directory, with no cleaning (debug/dwarf cleans names, which would change
// them). The result is indexed by file number (0 unused before DWARF 5).
//
// lineStr and str are .debug_line_str and .debug_str, for DWARF 5 names.
//
// It is also the check of a header before debug/dwarf's LineReader may read
// it: every count is bounded by the bytes left (debug/dwarf allocates a
// DWARF 5 directories_count before reading them: 2^46 entries is a fatal
// out-of-memory) and every directory index is in range (debug/dwarf indexes
// with a negative int for one over 2^63).
func lineFileNames(sec []byte, off uint64, bo binary.ByteOrder, compDir string, lineStr, str []byte) ([]string, error) {
	if off >= uint64(len(sec)) {
		return nil, fmt.Errorf("line table offset %#x beyond .debug_line", off)
	}
	r := dwarfbuf.New(sec[off:], bo, nil)
	length, dwarf64 := r.InitialLength()
	if r.Err() != nil {
		return nil, r.Err()
	}
	if length > uint64(r.Len()) {
		return nil, errors.New("line table length beyond .debug_line")
	}
	r.Limit(length)
	version := r.U16()
	if version < 2 || version > 5 {
		return nil, fmt.Errorf("line table version %d not supported", version)
	}
	if version >= 5 {
		r.U8() // address_size
		r.U8() // segment_selector_size
	}
	if dwarf64 {
		r.U64()
	} else {
		r.U32()
	}
	r.U8() // minimum_instruction_length
	if version >= 4 {
		r.U8() // maximum_operations_per_instruction
	}
	r.U8() // default_is_stmt
	r.U8() // line_base
	r.U8() // line_range
	opBase := r.U8()
	if opBase > 0 {
		r.Skip(int(opBase) - 1)
	}
	if r.Err() != nil {
		return nil, r.Err()
	}
	expand := func(path, base string) string {
		if (len(path) > 0 && path[0] == '/') || base == "" {
			return path
		}
		if base[len(base)-1] == '/' {
			return base + path
		}
		return base + "/" + path
	}
	if version < 5 {
		dirs := []string{compDir}
		for {
			s := r.CString()
			if r.Err() != nil {
				return nil, r.Err()
			}
			if s == "" {
				break
			}
			dirs = append(dirs, expand(s, compDir))
		}
		names := []string{""}
		for {
			s := r.CString()
			if r.Err() != nil {
				return nil, r.Err()
			}
			if s == "" {
				break
			}
			dir := r.Uleb()
			r.Uleb() // modification time
			r.Uleb() // length
			d := ""
			if dir < uint64(len(dirs)) {
				d = dirs[dir]
			} else if s[0] != '/' {
				// debug/dwarf refuses it too (or, for an index over
				// 2^63, panics).
				return nil, fmt.Errorf("file %d: directory index %d out of range (%d directories)", len(names), dir, len(dirs))
			}
			names = append(names, expand(s, d))
		}
		return names, r.Err()
	}
	readTable := func() ([][2]uint64, uint64, error) {
		nfmt := int(r.U8())
		formats := make([][2]uint64, 0, nfmt)
		for i := 0; i < nfmt; i++ {
			formats = append(formats, [2]uint64{r.Uleb(), r.Uleb()})
		}
		count := r.Uleb()
		if r.Err() != nil {
			return nil, 0, r.Err()
		}
		// Each entry takes at least a byte: bound the count by the data left.
		if count > uint64(r.Len()) {
			return nil, 0, errors.New("line table entry count beyond its data")
		}
		return formats, count, nil
	}
	entry := func(formats [][2]uint64) (path string, dir uint64, err error) {
		for _, f := range formats {
			s, v, err := lineForm(r, f[1], dwarf64, lineStr, str)
			if err != nil {
				return "", 0, err
			}
			switch f[0] {
			case 1: // DW_LNCT_path
				path = s
			case 2: // DW_LNCT_directory_index
				dir = v
			}
		}
		return path, dir, r.Err()
	}
	formats, count, err := readTable()
	if err != nil {
		return nil, err
	}
	dirs := make([]string, 0, count)
	for i := uint64(0); i < count; i++ {
		p, _, err := entry(formats)
		if err != nil {
			return nil, fmt.Errorf("directory %d: %w", i, err)
		}
		if i == 0 {
			// Directory 0 is the compilation directory; Breakpad uses
			// DW_AT_comp_dir for it.
			dirs = append(dirs, compDir)
			continue
		}
		dirs = append(dirs, expand(p, compDir))
	}
	formats, count, err = readTable()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, count)
	for i := uint64(0); i < count; i++ {
		p, dir, err := entry(formats)
		if err != nil {
			return nil, fmt.Errorf("file %d: %w", i, err)
		}
		d := ""
		if dir < uint64(len(dirs)) {
			d = dirs[dir]
		}
		names = append(names, expand(p, d))
	}
	return names, nil
}

// errShort is the error of a line table header running past its data.
var errShort = dwarfbuf.ErrShort

func cstrAt(sec []byte, off uint64) (string, error) {
	if off >= uint64(len(sec)) {
		return "", fmt.Errorf("string offset %#x out of section", off)
	}
	for i := off; i < uint64(len(sec)); i++ {
		if sec[i] == 0 {
			return string(sec[off:i]), nil
		}
	}
	return "", errShort
}

// form reads one attribute value of a DWARF 5 line table entry, as a
// string or a number.
func lineForm(r *dwarfbuf.Buf, form uint64, dwarf64 bool, lineStr, str []byte) (string, uint64, error) {
	offset := func() uint64 {
		if dwarf64 {
			return r.U64()
		}
		return uint64(r.U32())
	}
	switch form {
	case 0x08: // DW_FORM_string
		return r.CString(), 0, r.Err()
	case 0x1f: // DW_FORM_line_strp
		s, err := cstrAt(lineStr, offset())
		return s, 0, err
	case 0x0e: // DW_FORM_strp
		s, err := cstrAt(str, offset())
		return s, 0, err
	case 0x0b: // DW_FORM_data1
		return "", uint64(r.U8()), r.Err()
	case 0x05: // DW_FORM_data2
		return "", uint64(r.U16()), r.Err()
	case 0x06: // DW_FORM_data4
		return "", uint64(r.U32()), r.Err()
	case 0x07: // DW_FORM_data8
		return "", r.U64(), r.Err()
	case 0x1e: // DW_FORM_data16
		r.Skip(16)
		return "", 0, r.Err()
	case 0x0f: // DW_FORM_udata
		return "", r.Uleb(), r.Err()
	case 0x09: // DW_FORM_block
		n := r.Uleb()
		if n > uint64(len(r.Data())) {
			return "", 0, errShort
		}
		r.Skip(int(n))
		return "", 0, r.Err()
	}
	return "", 0, fmt.Errorf("form %#x not supported in a line table header", form)
}
