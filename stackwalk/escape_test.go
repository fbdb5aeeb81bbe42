package stackwalk

import (
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/textsafe"
)

// TestEscape checks that the outputs escape and cut names by
// internal/textsafe's rule (whose tests hold the rule itself), the -m output
// dropping its separator and newlines.
func TestEscape(t *testing.T) {
	long := strings.Repeat("a", MaxPrintedName+10)
	for _, in := range []string{"", "libc.so.6", "a\nb", "a|b\nc\rd", "é\n", long, "|" + long, "\n" + long} {
		if got, want := Escape(in), textsafe.Escape(in); got != want {
			t.Errorf("Escape(%.40q) = %.60q..., want %.60q...", in, got, want)
		}
		if got, want := stripSeparator(in), textsafe.EscapeDrop(in, "|\n"); got != want {
			t.Errorf("stripSeparator(%.40q) = %.60q..., want %.60q...", in, got, want)
		}
		if got, want := Cap(in), textsafe.Cap(in); got != want {
			t.Errorf("Cap(%.40q) = %.60q..., want %.60q...", in, got, want)
		}
	}
	if got := stripSeparator("a|b\nc\rd"); got != `abc\x0dd` {
		t.Errorf("stripSeparator kept a separator or newline: %q", got)
	}
}
