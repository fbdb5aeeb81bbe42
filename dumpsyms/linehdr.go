package dumpsyms

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// lineFileNames reads the file name table of the line number program header
// at off in .debug_line and returns each file number's full name, composed
// the way Breakpad's line reader composes it: a relative name is appended
// with "/" to its directory, a relative directory to the compilation
// directory, with no cleaning (debug/dwarf cleans names, which would change
// them). The result is indexed by file number (0 unused before DWARF 5).
//
// lineStr and str are .debug_line_str and .debug_str, for DWARF 5 names.
func lineFileNames(sec []byte, off uint64, bo binary.ByteOrder, compDir string, lineStr, str []byte) ([]string, error) {
	if off >= uint64(len(sec)) {
		return nil, fmt.Errorf("line table offset %#x beyond .debug_line", off)
	}
	r := &byteReader{b: sec[off:], bo: bo}
	length := uint64(r.u32())
	dwarf64 := false
	if length == 0xffffffff {
		length = r.u64()
		dwarf64 = true
	}
	if r.err != nil {
		return nil, r.err
	}
	if length > uint64(len(r.b)-r.pos) {
		return nil, errors.New("line table length beyond .debug_line")
	}
	r.b = r.b[:r.pos+int(length)]
	version := r.u16()
	if version < 2 || version > 5 {
		return nil, fmt.Errorf("line table version %d not supported", version)
	}
	if version >= 5 {
		r.u8() // address_size
		r.u8() // segment_selector_size
	}
	if dwarf64 {
		r.u64()
	} else {
		r.u32()
	}
	r.u8() // minimum_instruction_length
	if version >= 4 {
		r.u8() // maximum_operations_per_instruction
	}
	r.u8() // default_is_stmt
	r.u8() // line_base
	r.u8() // line_range
	opBase := r.u8()
	if opBase > 0 {
		r.skip(int(opBase) - 1)
	}
	if r.err != nil {
		return nil, r.err
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
			s := r.cstr()
			if r.err != nil {
				return nil, r.err
			}
			if s == "" {
				break
			}
			dirs = append(dirs, expand(s, compDir))
		}
		names := []string{""}
		for {
			s := r.cstr()
			if r.err != nil {
				return nil, r.err
			}
			if s == "" {
				break
			}
			dir := r.uleb()
			r.uleb() // modification time
			r.uleb() // length
			d := ""
			if dir < uint64(len(dirs)) {
				d = dirs[dir]
			}
			names = append(names, expand(s, d))
		}
		return names, r.err
	}
	readTable := func() ([][2]uint64, uint64, error) {
		nfmt := int(r.u8())
		formats := make([][2]uint64, 0, nfmt)
		for i := 0; i < nfmt; i++ {
			formats = append(formats, [2]uint64{r.uleb(), r.uleb()})
		}
		count := r.uleb()
		if r.err != nil {
			return nil, 0, r.err
		}
		// Each entry takes at least a byte: bound the count by the data left.
		if count > uint64(len(r.b)-r.pos) {
			return nil, 0, errors.New("line table entry count beyond its data")
		}
		return formats, count, nil
	}
	entry := func(formats [][2]uint64) (path string, dir uint64, err error) {
		for _, f := range formats {
			s, v, err := r.form(f[1], dwarf64, lineStr, str)
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
		return path, dir, r.err
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

// byteReader is a bounds-checked cursor recording its first error.
type byteReader struct {
	b   []byte
	pos int
	bo  binary.ByteOrder
	err error
}

var errShort = errors.New("unexpected end of data")

func (r *byteReader) skip(n int) {
	if r.err != nil {
		return
	}
	if n < 0 || n > len(r.b)-r.pos {
		r.err = errShort
		return
	}
	r.pos += n
}

func (r *byteReader) bytes(n int) []byte {
	p := r.pos
	r.skip(n)
	if r.err != nil {
		return nil
	}
	return r.b[p:r.pos]
}

func (r *byteReader) u8() uint8 {
	b := r.bytes(1)
	if b == nil {
		return 0
	}
	return b[0]
}

func (r *byteReader) u16() uint16 {
	b := r.bytes(2)
	if b == nil {
		return 0
	}
	return r.bo.Uint16(b)
}

func (r *byteReader) u32() uint32 {
	b := r.bytes(4)
	if b == nil {
		return 0
	}
	return r.bo.Uint32(b)
}

func (r *byteReader) u64() uint64 {
	b := r.bytes(8)
	if b == nil {
		return 0
	}
	return r.bo.Uint64(b)
}

func (r *byteReader) uleb() uint64 {
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

func (r *byteReader) cstr() string {
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
	r.err = errShort
	return ""
}

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
func (r *byteReader) form(form uint64, dwarf64 bool, lineStr, str []byte) (string, uint64, error) {
	offset := func() uint64 {
		if dwarf64 {
			return r.u64()
		}
		return uint64(r.u32())
	}
	switch form {
	case 0x08: // DW_FORM_string
		return r.cstr(), 0, r.err
	case 0x1f: // DW_FORM_line_strp
		s, err := cstrAt(lineStr, offset())
		return s, 0, err
	case 0x0e: // DW_FORM_strp
		s, err := cstrAt(str, offset())
		return s, 0, err
	case 0x0b: // DW_FORM_data1
		return "", uint64(r.u8()), r.err
	case 0x05: // DW_FORM_data2
		return "", uint64(r.u16()), r.err
	case 0x06: // DW_FORM_data4
		return "", uint64(r.u32()), r.err
	case 0x07: // DW_FORM_data8
		return "", r.u64(), r.err
	case 0x1e: // DW_FORM_data16
		r.skip(16)
		return "", 0, r.err
	case 0x0f: // DW_FORM_udata
		return "", r.uleb(), r.err
	case 0x09: // DW_FORM_block
		n := r.uleb()
		if n > uint64(len(r.b)) {
			return "", 0, errShort
		}
		r.skip(int(n))
		return "", 0, r.err
	}
	return "", 0, fmt.Errorf("form %#x not supported in a line table header", form)
}
