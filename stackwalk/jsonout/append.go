package jsonout

import (
	"slices"
	"strconv"
	"unicode/utf8"
)

// The compact form of a thread's frames, the bulk of every report, is
// written by hand rather than by encoding/json's reflection (a third of the
// crash server's CPU per crash went there): byte for byte what
// json.Encoder with SetEscapeHTML(false) writes for the same values, which
// TestAppendFrameAsEncoder checks.

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string exactly as encoding/json writes it
// without HTML escaping: '"' and '\\' escaped, \b \f \n \r \t by name, the
// other control characters as \u00XX, invalid UTF-8 as \ufffd, U+2028 and
// U+2029 as \u2028 and \u2029.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendStringp appends an optional string: null when nil.
func appendStringp(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	return appendString(dst, *s)
}

// appendIntp appends an optional int: null when nil.
func appendIntp(dst []byte, n *int) []byte {
	if n == nil {
		return append(dst, "null"...)
	}
	return strconv.AppendInt(dst, int64(*n), 10)
}

// appendHex appends v as 0x and at least digits lowercase hexadecimal
// digits, as fmt's %0Nx after "0x".
func appendHex(dst []byte, v uint64, digits int) []byte {
	var buf [16]byte
	i := len(buf)
	for v != 0 || i > len(buf)-digits {
		i--
		buf[i] = hexDigits[v&0xF]
		v >>= 4
	}
	dst = append(dst, '0', 'x')
	return append(dst, buf[i:]...)
}

// appendFrame appends a frame as encoding/json encodes the frame type
// (keys in the struct's order, registers omitted when empty, their keys
// sorted).
func appendFrame(dst []byte, fr *frame) []byte {
	dst = append(dst, `{"file":`...)
	dst = appendStringp(dst, fr.File)
	dst = append(dst, `,"frame":`...)
	dst = strconv.AppendInt(dst, int64(fr.Frame), 10)
	dst = append(dst, `,"function":`...)
	dst = appendStringp(dst, fr.Function)
	dst = append(dst, `,"function_offset":`...)
	dst = appendStringp(dst, fr.FunctionOffset)
	dst = append(dst, `,"inlines":`...)
	if fr.Inlines == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i := range fr.Inlines {
			if i > 0 {
				dst = append(dst, ',')
			}
			in := &fr.Inlines[i]
			dst = append(dst, `{"file":`...)
			dst = appendStringp(dst, in.File)
			dst = append(dst, `,"function":`...)
			dst = appendStringp(dst, in.Function)
			dst = append(dst, `,"line":`...)
			dst = appendIntp(dst, in.Line)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"line":`...)
	dst = appendIntp(dst, fr.Line)
	dst = append(dst, `,"missing_symbols":`...)
	dst = strconv.AppendBool(dst, fr.MissingSymbols)
	dst = append(dst, `,"module":`...)
	dst = appendStringp(dst, fr.Module)
	dst = append(dst, `,"module_offset":`...)
	dst = appendStringp(dst, fr.ModuleOffset)
	dst = append(dst, `,"offset":`...)
	dst = appendString(dst, fr.Offset)
	if len(fr.Registers) > 0 {
		dst = append(dst, `,"registers":{`...)
		keys := make([]string, 0, len(fr.Registers))
		for k := range fr.Registers {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			dst = appendString(dst, fr.Registers[k])
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `,"trust":`...)
	dst = appendString(dst, fr.Trust)
	dst = append(dst, `,"unloaded_modules":`...)
	if fr.UnloadedModules == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i := range fr.UnloadedModules {
			if i > 0 {
				dst = append(dst, ',')
			}
			h := &fr.UnloadedModules[i]
			dst = append(dst, `{"module":`...)
			dst = appendString(dst, h.Module)
			dst = append(dst, `,"offsets":`...)
			if h.Offsets == nil {
				dst = append(dst, "null"...)
			} else {
				dst = append(dst, '[')
				for j, o := range h.Offsets {
					if j > 0 {
						dst = append(dst, ',')
					}
					dst = appendString(dst, o)
				}
				dst = append(dst, ']')
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}
