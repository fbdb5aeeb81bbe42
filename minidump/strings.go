package minidump

import (
	"fmt"
	"unicode/utf16"
)

// maxStringBytes bounds a MINIDUMP_STRING; Breakpad refuses longer ones too.
const maxStringBytes = 1 << 16

// String reads the MINIDUMP_STRING (32-bit byte length, then UTF-16LE) at rva
// and returns it as UTF-8. Unpaired surrogates become U+FFFD.
func (f *File) String(rva uint32) (string, error) {
	lb, err := f.bytes(uint64(rva), 4)
	if err != nil {
		return "", fmt.Errorf("string at %#x: length: %w", rva, err)
	}
	n := le32(lb)
	if n%2 != 0 {
		return "", fmt.Errorf("string at %#x: odd byte length %d", rva, n)
	}
	if n > maxStringBytes {
		return "", fmt.Errorf("string at %#x: length %d exceeds %d", rva, n, maxStringBytes)
	}
	b, err := f.bytes(uint64(rva)+4, uint64(n))
	if err != nil {
		return "", fmt.Errorf("string at %#x: %w", rva, err)
	}
	return utf16String(b), nil
}

// utf16String decodes little-endian UTF-16 (an odd trailing byte is dropped).
func utf16String(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = le16(b[2*i:])
	}
	return string(utf16.Decode(u))
}
