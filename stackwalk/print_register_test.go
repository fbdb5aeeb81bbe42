package stackwalk

import (
	"fmt"
	"testing"
)

// TestAppendRegister: appendRegister prints as the fmt verbs it replaces.
func TestAppendRegister(t *testing.T) {
	for _, r := range []Register{{"eip", 0}, {"rip", 0x7f12_3456_789a}, {"r10", 1<<64 - 1}, {"x", 0x1234_5678_9}, {"longname", 0xab}, {"", 5}} {
		for _, digits := range []int{8, 16} {
			want := fmt.Sprintf(" %5s = 0x%0*x", r.Name, digits, r.Value)
			if got := string(appendRegister([]byte("x"), r, digits)); got != "x"+want {
				t.Errorf("%+v, %d digits: %q, want %q", r, digits, got, "x"+want)
			}
		}
	}
}
