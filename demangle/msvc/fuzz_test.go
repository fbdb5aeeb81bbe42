package msvc

import (
	"strings"
	"testing"
)

// TestHostile checks that deep nesting, exponential back-references and
// truncations give errors, quickly.
func TestHostile(t *testing.T) {
	deep := "?x@@3" + strings.Repeat("PEA", 10000) + "X"
	// Each parameter list refers to the previous function type ten times.
	expo := "?f@@YAXP6AXHHHHHHHHHH@Z" + strings.Repeat("P6AX0000000000@Z", 40) + "@Z"
	for _, in := range []string{deep, expo, "?", "??", "?f@@YA", "??_C@_1", "??@0123", "?f@?$A@" + strings.Repeat("?$A@", 5000), strings.Repeat("?", 20000)} {
		out, err := Demangle(in, Full)
		if err == nil && len(out) > MaxOutput {
			t.Errorf("%.40q: output of %d bytes", in, len(out))
		}
		if _, err := Demangle(in, Mozilla); err == nil && len(in) > 1000 {
			t.Logf("%.40q: demangled", in)
		}
	}
}

// FuzzDemangle demangles arbitrary names in both styles: no panics, bounded
// output.
func FuzzDemangle(f *testing.F) {
	for _, s := range []string{"?f@S@ns@@QAEHH@Z", "??0C@@QAE@XZ", "??_7C@@6B@", "??_C@_05CJBACGMB@hello?$AA@",
		"??$max@H@std@@YAABHABH0@Z", "?mfp@@3P8S@@AEHH@ZQ1@", "??_R1A@?0A@EA@C@@8", "?f@?A0x12345678@@YAHXZ",
		"?x@?1??f@@YAXXZ@4HA", "??_R0?AVC@@@8", "?f@C@@WBA@EAEXXZ", "??$?BX@C@@QBEPAXXZ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, st := range []Style{Full, Mozilla} {
			out, err := Demangle(in, st)
			if err == nil && len(out) > MaxOutput+64 {
				t.Fatalf("output of %d bytes", len(out))
			}
		}
	})
}
