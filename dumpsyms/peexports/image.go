package peexports

import (
	"debug/pe"
	"fmt"
)

// image maps relative virtual addresses to section bytes.
type image struct {
	f    *pe.File
	data map[*pe.Section][]byte
}

// rest returns the raw bytes of the section holding rva, from rva on.
func (m *image) rest(rva uint32) ([]byte, error) {
	for _, s := range m.f.Sections {
		if rva < s.VirtualAddress || rva-s.VirtualAddress >= max(s.VirtualSize, s.Size) {
			continue
		}
		b, ok := m.data[s]
		if !ok {
			var err error
			if b, err = s.Data(); err != nil {
				return nil, fmt.Errorf("section %s: %w", s.Name, err)
			}
			if m.data == nil {
				m.data = map[*pe.Section][]byte{}
			}
			m.data[s] = b
		}
		off := rva - s.VirtualAddress
		if uint64(off) >= uint64(len(b)) {
			return nil, fmt.Errorf("rva %#x: past the raw data of section %s", rva, s.Name)
		}
		return b[off:], nil
	}
	return nil, fmt.Errorf("rva %#x: in no section", rva)
}

// slice returns n bytes at rva, in one section.
func (m *image) slice(rva, n uint32) ([]byte, error) {
	b, err := m.rest(rva)
	if err != nil {
		return nil, err
	}
	if uint64(n) > uint64(len(b)) {
		return nil, fmt.Errorf("rva %#x: %d bytes past the end of the section", rva, n)
	}
	return b[:n], nil
}
