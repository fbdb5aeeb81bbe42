package textsafe

import (
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	long := strings.Repeat("a", MaxName+10)
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"libc.so.6", "libc.so.6"},
		{`C:\Windows\x.dll`, `C:\Windows\x.dll`},
		{"a\nb", `a\x0ab`},
		{"a\r\tb\x7f\x00", `a\x0d\x09b\x7f\x00`},
		{"é\n", "é\\x0a"},
		{"\x1b[2J", `\x1b[2J`},
		{long, long[:MaxName] + "...[10 more bytes]"},
		{"\n" + long, `\x0a` + long[:MaxName-4] + "...[14 more bytes]"},
	} {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%.40q) = %.60q..., want %.60q...", c.in, got, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"a|b\nc\rd", `abc\x0dd`},
		{"|" + long, long[:MaxName] + "...[10 more bytes]"},
	} {
		if got := EscapeDrop(c.in, "|\n"); got != c.want {
			t.Errorf("EscapeDrop(%.40q) = %.60q..., want %.60q...", c.in, got, c.want)
		}
	}
	// A cut never splits a character.
	s := strings.Repeat("a", MaxName-1) + "é" + "b"
	if got := Cap(s); got != s[:MaxName-1]+"...[3 more bytes]" {
		t.Errorf("Cap split a character: %q", got[len(got)-20:])
	}
}

// BenchmarkEscapeLong is Escape of a 16 MiB name: it must not scan the
// whole name.
func BenchmarkEscapeLong(b *testing.B) {
	s := strings.Repeat("a", 16<<20)
	for b.Loop() {
		Escape(s)
	}
}
