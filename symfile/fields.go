package symfile

import (
	"bytes"
	"encoding/binary"
	"math"
)

// Field scanning over one line of a symbol file, without allocation. Numbers
// follow what Breakpad's strtoull/strtol-based parsing accepts in practice:
// fields separated by runs of spaces, hex with an optional 0x prefix and
// either case, and a number must be followed by a space or the line end. The
// last field of a record (a name, rules text) is the rest of the line after
// the single space ending the field before it.

// skipSpaces returns the index of the first non-space byte of b at or after i.
func skipSpaces(b []byte, i int) int {
	for i < len(b) && b[i] == ' ' {
		i++
	}
	return i
}

// hexField parses a hex number starting at b[i] (after any spaces) and returns
// it with the index just past it.
func hexField(b []byte, i int) (uint64, int, bool) {
	i = skipSpaces(b, i)
	if i+1 < len(b) && b[i] == '0' && (b[i+1] == 'x' || b[i+1] == 'X') {
		i += 2
	}
	start := i
	var v uint64
	for ; i < len(b); i++ {
		d := hexVal[b[i]]
		if d == 0xff {
			if b[i] == ' ' {
				break
			}
			return 0, i, false
		}
		if v>>60 != 0 {
			return 0, i, false // overflow
		}
		v = v<<4 | uint64(d)
	}
	// Breakpad rejects ULLONG_MAX, which strtoull also returns on overflow.
	if i == start || v == math.MaxUint64 {
		return 0, i, false
	}
	return v, i, true
}

// decField parses a decimal number, optionally negative, starting at b[i]
// (after any spaces), and returns it with the index just past it. Values
// outside the int32 range are refused.
func decField(b []byte, i int) (int64, int, bool) {
	i = skipSpaces(b, i)
	neg := false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	start := i
	var v int64
	for ; i < len(b); i++ {
		c := b[i]
		if c == ' ' {
			break
		}
		if c < '0' || c > '9' {
			return 0, i, false
		}
		v = v*10 + int64(c-'0')
		if v > math.MaxInt32 {
			return 0, i, false
		}
	}
	if i == start {
		return 0, i, false
	}
	if neg {
		v = -v
	}
	return v, i, true
}

// restField returns the rest of the line after the separator at b[i], which
// must be a space followed by at least one byte.
func restField(b []byte, i int) (int, bool) {
	if i+1 >= len(b) || b[i] != ' ' {
		return 0, false
	}
	return i + 1, true
}

// word returns the next space-delimited word starting at b[i] (after spaces)
// as [start, end).
func word(b []byte, i int) (int, int) {
	i = skipSpaces(b, i)
	j := i
	for j < len(b) && b[j] != ' ' {
		j++
	}
	return i, j
}

// hasPrefix reports whether b starts with s.
func hasPrefix(b []byte, s string) bool {
	return len(b) >= len(s) && string(b[:len(s)]) == s
}

// multipleFlag skips the optional "m" field of FUNC and PUBLIC records.
func multipleFlag(b []byte, i int) (bool, int) {
	j := skipSpaces(b, i)
	if j+1 < len(b) && b[j] == 'm' && b[j+1] == ' ' {
		return true, j + 1
	}
	return false, i
}

// hexVal maps a byte to its hex digit value, or 0xff.
var hexVal = func() (t [256]uint8) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = uint8(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = uint8(c - 'a' + 10)
		t[c-'a'+'A'] = uint8(c - 'a' + 10)
	}
	return t
}()

// lineRecordAt is the fast path of the indexing pass for the commonest
// record, checking a well-formed line record "address size line filenum"
// that starts at d[i] and reaching its line end without a separate search.
// It returns the end of the line's content and the start of the next line.
// When it reports false the caller takes the general path, which also
// produces the error message.
func lineRecordAt(d []byte, i int) (addr, size uint64, end, next int, ok bool) {
	n := len(d)
	// Two hex fields, each followed by one space (the form every writer uses).
	for f := 0; f < 2; f++ {
		start := i
		var v uint64
		for i < n && hexVal[d[i]] != 0xff {
			v = v<<4 | uint64(hexVal[d[i]])
			i++
		}
		if i == start || i-start > 15 || i >= n || d[i] != ' ' {
			return 0, 0, 0, 0, false
		}
		i++
		if f == 0 {
			addr = v
		} else {
			size = v
		}
	}
	// Two decimal fields, at most 9 digits (within int32).
	for f := 0; f < 2; f++ {
		start := i
		for i < n && d[i]-'0' <= 9 {
			i++
		}
		if i == start || i-start > 9 {
			return 0, 0, 0, 0, false
		}
		if f == 0 {
			if i >= n || d[i] != ' ' {
				return 0, 0, 0, 0, false
			}
			i++
		}
	}
	switch {
	case i == n:
		return addr, size, n, n, true
	case d[i] == '\n':
		return addr, size, i, i + 1, true
	case d[i] == '\r' && i+1 < n && d[i+1] == '\n':
		return addr, size, i, i + 2, true
	}
	return 0, 0, 0, 0, false
}

// The fast paths of the indexing pass below read one record starting at
// d[i] in the form every writer uses (single spaces, hex without 0x, at most
// 15 digits) and find its line end themselves; d ends where the pass's chunk
// does. They report false for anything else, which the general path then
// parses (with the same result, or the error message).

// hexAt parses 1 to 15 hex digits at d[i] followed by a space and returns
// the value and the index after the space.
func hexAt(d []byte, i int) (uint64, int, bool) {
	var v uint64
	n := 0
	for _, c := range d[i:] {
		x := hexVal[c]
		if x == 0xff {
			if c == ' ' && n > 0 && n <= 15 {
				return v, i + n + 1, true
			}
			break
		}
		v = v<<4 | uint64(x)
		n++
	}
	return 0, 0, false
}

// restAt returns the end of the content of the line whose last field starts
// at d[i] (carriage returns ending it dropped) and the start of the next
// line; the field must not be empty.
func restAt(d []byte, i int) (end, next int, ok bool) {
	end, next = len(d), len(d)
	if k := bytes.IndexByte(d[i:], '\n'); k >= 0 {
		end, next = i+k, i+k+1
	}
	for end > i && d[end-1] == '\r' {
		end--
	}
	return end, next, end > i
}

// cfiAt is the fast path for "STACK CFI INIT addr size rules" and
// "STACK CFI addr rules".
func cfiAt(d []byte, i int) (kind int, addr, size uint64, end, next int, ok bool) {
	const stackCFI8 = 'S' | 'T'<<8 | 'A'<<16 | 'C'<<24 | 'K'<<32 | ' '<<40 | 'C'<<48 | 'F'<<56
	if len(d)-i < 12 || binary.LittleEndian.Uint64(d[i:]) != stackCFI8 || d[i+8] != 'I' || d[i+9] != ' ' {
		return
	}
	j := i + 10
	kind = stackCFI
	if d[j] == 'I' {
		if len(d)-j < 5 || binary.LittleEndian.Uint32(d[j:]) != 'I'|'N'<<8|'I'<<16|'T'<<24 || d[j+4] != ' ' {
			return 0, 0, 0, 0, 0, false
		}
		kind = stackCFIInit
		if addr, j, ok = hexAt(d, j+5); !ok {
			return
		}
		if size, j, ok = hexAt(d, j); !ok {
			return
		}
	} else if addr, j, ok = hexAt(d, j); !ok {
		return
	}
	end, next, ok = restAt(d, j)
	return
}

// publicAt is the fast path for "PUBLIC [m ]addr param name".
func publicAt(d []byte, i int) (addr uint64, end, next int, ok bool) {
	if len(d)-i < 8 || string(d[i:i+7]) != "PUBLIC " {
		return
	}
	j := i + 7
	if d[j] == 'm' {
		if len(d)-j < 2 || d[j+1] != ' ' {
			return
		}
		j += 2
	}
	if addr, j, ok = hexAt(d, j); !ok {
		return
	}
	if _, j, ok = hexAt(d, j); !ok {
		return
	}
	end, next, ok = restAt(d, j)
	return
}
