package minidump

import "fmt"

// maxStringUnits is the longest MINIDUMP_STRING read, in UTF-16 code units
// (Breakpad's limit).
const maxStringUnits = 1024

// String reads the MINIDUMP_STRING (32-bit byte length, then UTF-16LE) at rva
// and returns it as UTF-8. Like Breakpad it refuses odd lengths, strings
// longer than 1024 code units and unpaired surrogates.
func (f *File) String(rva uint32) (string, error) {
	lb, err := f.bytes(uint64(rva), 4)
	if err != nil {
		return "", fmt.Errorf("string at %#x: length: %w", rva, err)
	}
	n := le32(lb)
	if n%2 != 0 {
		return "", fmt.Errorf("string at %#x: odd byte length %d", rva, n)
	}
	if n/2 > maxStringUnits {
		return "", fmt.Errorf("string at %#x: %d code units exceeds %d", rva, n/2, maxStringUnits)
	}
	b, err := f.bytes(uint64(rva)+4, uint64(n))
	if err != nil {
		return "", fmt.Errorf("string at %#x: %w", rva, err)
	}
	s, err := decodeUTF16(b)
	if err != nil {
		return "", fmt.Errorf("string at %#x: %w", rva, err)
	}
	return s, nil
}

// decodeUTF16 converts little-endian UTF-16 to UTF-8 exactly as Breakpad's
// UTF16ToUTF8 does: a high surrogate must be followed by a unit in
// 0xdc00-0xdcff, a unit in 0xdc00-0xdcff may not stand alone, and other
// units (including 0xdd00-0xdfff) are encoded as themselves.
func decodeUTF16(b []byte) (string, error) {
	out := make([]byte, 0, len(b)/2)
	n := len(b) / 2
	for i := 0; i < n; i++ {
		w := uint32(le16(b[2*i:]))
		switch {
		case w >= 0xdc00 && w <= 0xdcff:
			return "", fmt.Errorf("low surrogate %#x without high", w)
		case w >= 0xd800 && w <= 0xdbff:
			if i+1 >= n {
				return "", fmt.Errorf("high surrogate %#x at end of string", w)
			}
			lo := uint32(le16(b[2*i+2:]))
			if lo < 0xdc00 || lo > 0xdcff {
				return "", fmt.Errorf("high surrogate %#x without low (%#x)", w, lo)
			}
			i++
			w = (w-0xd7c0)<<10 | lo&0x3ff
		}
		out = appendUTF8(out, w)
	}
	return string(out), nil
}

// appendUTF8 encodes a code point the way Breakpad does, without rejecting
// surrogate values.
func appendUTF8(b []byte, c uint32) []byte {
	switch {
	case c < 0x80:
		return append(b, byte(c))
	case c < 0x800:
		return append(b, 0xc0|byte(c>>6), 0x80|byte(c&0x3f))
	case c < 0x10000:
		return append(b, 0xe0|byte(c>>12), 0x80|byte(c>>6&0x3f), 0x80|byte(c&0x3f))
	}
	return append(b, 0xf0|byte(c>>18), 0x80|byte(c>>12&0x3f), 0x80|byte(c>>6&0x3f), 0x80|byte(c&0x3f))
}

// utf16String decodes little-endian UTF-16 up to its first NUL unit, the
// way Breakpad converts fixed-size UTF-16 buffers; it returns "" when the
// text is not valid by Breakpad's rules.
func utf16String(b []byte) string {
	for i := 0; i+1 < len(b); i += 2 {
		if b[i] == 0 && b[i+1] == 0 {
			b = b[:i]
			break
		}
	}
	s, err := decodeUTF16(b)
	if err != nil {
		return ""
	}
	return s
}

// UTF16Buffer decodes a little-endian UTF-16 byte buffer up to its first
// NUL unit, as Breakpad converts fixed-size UTF-16 fields ("" when the text
// has unpaired surrogates).
func UTF16Buffer(b []byte) string { return utf16String(b) }
