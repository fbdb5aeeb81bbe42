package pdb

import (
	"encoding/binary"
	"fmt"
)

// StringTable is the /names stream: the strings that C13 file checksums
// and FrameData program strings refer to by offset.
type StringTable struct {
	data []byte // the string buffer
}

const stringTableSignature = 0xEFFEEFFE

func parseStringTable(data []byte) (*StringTable, error) {
	b := &buf{b: data, ctx: "/names"}
	sig, ver, n := b.u32(), b.u32(), b.u32()
	if b.err != nil {
		return nil, b.err
	}
	if sig != stringTableSignature {
		return nil, fmt.Errorf("/names: signature %#x: %w", sig, ErrFormat)
	}
	_ = ver
	s := b.bytes(int(n))
	if b.err != nil {
		return nil, b.err
	}
	return &StringTable{data: s}, nil
}

// String returns the string at offset off, or an error when off is past
// the table.
func (t *StringTable) String(off uint32) (string, error) {
	if t == nil || int64(off) >= int64(len(t.data)) {
		return "", fmt.Errorf("/names: offset %#x past the table: %w", off, ErrFormat)
	}
	return cString(t.data[off:]), nil
}

var _ = binary.LittleEndian
