package stackwalk

import (
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	long := strings.Repeat("a", MaxPrintedName+10)
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"libc.so.6", "libc.so.6"},
		{`C:\Windows\x.dll`, `C:\Windows\x.dll`},
		{"a\nb", `a\x0ab`},
		{"a\r\tb\x7f\x00", `a\x0d\x09b\x7f\x00`},
		{"é\n", "é\\x0a"},
		{long, long[:MaxPrintedName] + "...[10 more bytes]"},
		{"\n" + long, `\x0a` + long[:MaxPrintedName-4] + "...[14 more bytes]"},
	} {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%.40q) = %.60q..., want %.60q...", c.in, got, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"a|b\nc\rd", `abc\x0dd`},
		{"|" + long, long[:MaxPrintedName] + "...[10 more bytes]"},
	} {
		if got := stripSeparator(c.in); got != c.want {
			t.Errorf("stripSeparator(%.40q) = %.60q..., want %.60q...", c.in, got, c.want)
		}
	}
	// A cut never splits a character.
	s := strings.Repeat("a", MaxPrintedName-1) + "é" + "b"
	if got := Cap(s); got != s[:MaxPrintedName-1]+"...[3 more bytes]" {
		t.Errorf("Cap split a character: %q", got[len(got)-20:])
	}
}
