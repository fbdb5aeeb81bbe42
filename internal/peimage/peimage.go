// Package peimage maps the relative virtual addresses of a PE file to the
// bytes of the sections that hold them, reading each section once: for the
// readers of a PE's tables (unwind information, exports, the debug
// directory).
package peimage

import (
	"debug/pe"
	"fmt"
)

// Image is a PE file's sections, addressed by relative virtual address.
type Image struct {
	secs []*pe.Section
	data [][]byte
	errs []error
}

// New returns the Image of f's sections; none is read yet.
func New(f *pe.File) *Image {
	return &Image{secs: f.Sections, data: make([][]byte, len(f.Sections)), errs: make([]error, len(f.Sections))}
}

// Rest returns the bytes of the section holding rva from rva to the
// section's end (its raw data; the zero fill beyond is not addressable).
func (m *Image) Rest(rva uint32) ([]byte, error) {
	for i, s := range m.secs {
		if rva < s.VirtualAddress || rva-s.VirtualAddress >= max(s.VirtualSize, s.Size) {
			continue
		}
		if m.data[i] == nil && m.errs[i] == nil {
			m.data[i], m.errs[i] = s.Data()
		}
		if m.errs[i] != nil {
			return nil, fmt.Errorf("section %s: %w", s.Name, m.errs[i])
		}
		off := rva - s.VirtualAddress
		if uint64(off) >= uint64(len(m.data[i])) {
			return nil, fmt.Errorf("rva %#x: past the raw data of section %s", rva, s.Name)
		}
		return m.data[i][off:], nil
	}
	return nil, fmt.Errorf("rva %#x: in no section", rva)
}

// Slice returns n bytes at rva, all in one section.
func (m *Image) Slice(rva, n uint32) ([]byte, error) {
	b, err := m.Rest(rva)
	if err != nil {
		return nil, err
	}
	if uint64(n) > uint64(len(b)) {
		return nil, fmt.Errorf("rva %#x: %d bytes past the end of the section", rva, n)
	}
	return b[:n], nil
}

// Size returns the raw size of the image's sections: what bounds the work
// of a reader over them.
func (m *Image) Size() int64 {
	var n int64
	for _, s := range m.secs {
		n += int64(s.Size)
	}
	return n
}
