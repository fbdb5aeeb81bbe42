package stackwalk

import "github.com/gobreakpad/gobreakpad/internal/textsafe"

// MaxPrintedName is the longest text (a function, file or module name, an
// OS or CPU string) the outputs print; a longer one is cut there (at a
// character boundary) and marked with "...[N more bytes]". It is
// textsafe.MaxName, the limit of every program's text output.
const MaxPrintedName = textsafe.MaxName

// Escape returns s as the text outputs (human, -m, -b, the messages on
// stderr) print it, the one rule for names from dumps and symbol files,
// shared with minidump_dump (internal/textsafe): each control character
// (below 0x20, and 0x7f) becomes \xNN, so that no name can start a line or
// a field of its own, and the text is cut at MaxPrintedName (see Cap). Text
// without either is returned as is. Backslashes are not escaped (Windows
// paths print as they are), so the escaping cannot be undone exactly; it is
// meant for reading.
func Escape(s string) string { return textsafe.Escape(s) }

// escape is Escape, dropping the bytes of drop (the -m output drops its
// separator and newlines, as Breakpad does).
func escape(s, drop string) string { return textsafe.EscapeDrop(s, drop) }

// Cap returns s cut to MaxPrintedName bytes at a character boundary, with
// "...[N more bytes]" saying how much was left out; JSON output, which
// escapes characters itself, uses it alone.
func Cap(s string) string { return textsafe.Cap(s) }
