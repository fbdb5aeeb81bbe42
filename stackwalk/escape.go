package stackwalk

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxPrintedName is the longest text (a function, file or module name, an
// OS or CPU string) the outputs print; a longer one is cut there (at a
// character boundary) and marked with "...[N more bytes]". Real names are
// shorter (the corpus' longest, a C++ name kept by symbolic as a large-symbol
// test case, is 155 KB and no walk prints it), while a 16 MiB name in a
// symbol file would otherwise be printed whole for every frame in it.
const MaxPrintedName = 64 << 10

// Escape returns s as the text outputs (human, -m, -b, the messages on
// stderr) print it, the one rule for names from dumps and symbol files:
// each control character (below 0x20, and 0x7f) becomes \xNN, so that no
// name can start a line or a field of its own, and the text is cut at
// MaxPrintedName (see Cap). Text without either is returned as is.
// Backslashes are not escaped (Windows paths print as they are), so the
// escaping cannot be undone exactly; it is meant for reading.
func Escape(s string) string { return escape(s, "") }

// escape is Escape, dropping the bytes of drop (the -m output drops its
// separator and newlines, as Breakpad does). It reads no further into s
// than it prints.
func escape(s, drop string) string {
	clean := true
	for i := 0; i < len(s) && i <= MaxPrintedName; i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || strings.IndexByte(drop, c) >= 0 {
			clean = false
			break
		}
	}
	if clean {
		return Cap(s)
	}
	var b strings.Builder
	i := 0
	for ; i < len(s) && b.Len() < MaxPrintedName; i++ {
		c := s[i]
		switch {
		case strings.IndexByte(drop, c) >= 0:
		case c < 0x20 || c == 0x7f:
			b.WriteString(`\x`)
			b.WriteByte("0123456789abcdef"[c>>4])
			b.WriteByte("0123456789abcdef"[c&15])
		default:
			b.WriteByte(c)
		}
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

// Cap returns s cut to MaxPrintedName bytes at a character boundary, with
// "...[N more bytes]" saying how much was left out; JSON output, which
// escapes characters itself, uses it alone.
func Cap(s string) string {
	if len(s) <= MaxPrintedName {
		return s
	}
	n := MaxPrintedName
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "...[" + strconv.Itoa(len(s)-n) + " more bytes]"
}
