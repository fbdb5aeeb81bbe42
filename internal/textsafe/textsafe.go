// Package textsafe is the one escaping rule of the programs' text outputs
// (minidump_stackwalk's human, -m and -b reports, minidump_dump's text, the
// messages on stderr) for names and strings read from dumps and symbol
// files: each control character (below 0x20, and 0x7f) is printed as \xNN,
// so that no name can start a line or a field of its own or drive a
// terminal, and a name is cut at MaxName bytes with "...[N more bytes]".
// Clean text of ordinary length is returned unchanged (the same string), so
// outputs on real input stay byte for byte Breakpad's. JSON output escapes
// characters itself and uses Cap alone. What is printed as the bytes of a
// stream (minidump_dump's raw Linux streams, its -x hex dumps) is not a
// name and is not escaped.
package textsafe

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxName is the longest name (a function, file or module name, an OS or
// CPU string, an annotation) the text outputs print; a longer one is cut
// there (at a character boundary) and marked with "...[N more bytes]".
// Real names are shorter (the longest seen, a C++ name kept by symbolic as a
// large-symbol test case, is 155 KB and no walk prints it), while a 16 MiB
// name in a symbol file would otherwise be printed whole for every frame in
// it.
const MaxName = 64 << 10

// Escape returns s as the text outputs print a name: control characters as
// \xNN, cut at MaxName (see Cap). Backslashes are not escaped (Windows paths
// print as they are), so the escaping cannot be undone exactly; it is meant
// for reading. It reads no further into s than it prints.
func Escape(s string) string { return EscapeDrop(s, "") }

// EscapeDrop is Escape, first dropping the bytes of drop (minidump_stackwalk's
// -m output drops its separator '|' and newlines, as Breakpad does).
func EscapeDrop(s, drop string) string {
	if clean(s, drop, MaxName) {
		return Cap(s)
	}
	var b strings.Builder
	i := 0
	for ; i < len(s) && b.Len() < MaxName; i++ {
		writeByte(&b, s[i], drop)
	}
	if i < len(s) {
		for i < len(s) && !utf8.RuneStart(s[i]) {
			b.WriteByte(s[i])
			i++
		}
		if i < len(s) {
			b.WriteString("...[" + strconv.Itoa(len(s)-i) + " more bytes]")
		}
	}
	return b.String()
}

// Cap returns s cut to MaxName bytes at a character boundary, with
// "...[N more bytes]" saying how much was left out.
func Cap(s string) string {
	if len(s) <= MaxName {
		return s
	}
	n := MaxName
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "...[" + strconv.Itoa(len(s)-n) + " more bytes]"
}

// clean reports whether the first limit+1 bytes of s hold no control
// character and no byte of drop.
func clean(s, drop string, limit int) bool {
	for i := 0; i < len(s) && i <= limit; i++ {
		if c := s[i]; isControl(c) || strings.IndexByte(drop, c) >= 0 {
			return false
		}
	}
	return true
}

func isControl(c byte) bool { return c < 0x20 || c == 0x7f }

// writeByte writes c to b: dropped if in drop, as \xNN if a control
// character, as is otherwise.
func writeByte(b *strings.Builder, c byte, drop string) {
	switch {
	case strings.IndexByte(drop, c) >= 0:
	case isControl(c):
		b.WriteString(`\x`)
		b.WriteByte("0123456789abcdef"[c>>4])
		b.WriteByte("0123456789abcdef"[c&15])
	default:
		b.WriteByte(c)
	}
}
