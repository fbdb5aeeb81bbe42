package dumpsyms

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

func TestDamageCounts(t *testing.T) {
	var nilD *Damage
	nilD.Add("x", "y") // a nil Damage ignores reports
	if nilD.Len() != 0 || nilD.Err() != nil {
		t.Error("nil Damage")
	}
	var d Damage
	var warned []string
	o := Options{Damage: &d, Warn: func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }}
	o.Damaged("b", "first b %d", 1)
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() { defer wg.Done(); d.Add("a", fmt.Sprint(i)) }()
	}
	wg.Wait()
	o.Damaged("b", "second b")
	if d.Len() != 12 || len(warned) != 2 {
		t.Errorf("Len %d, warned %q", d.Len(), warned)
	}
	l := d.Lines()
	if len(l) != 2 || l[0] != "b: 2 failed to parse, left out (first: first b 1)" || l[1][:22] != "a: 10 failed to parse," {
		t.Errorf("Lines %q", l)
	}
}

// TestInconsistent: a part that parsed but contradicts the rest is said
// with its own wording, counted, and makes Err (so --strict refuses it).
func TestInconsistent(t *testing.T) {
	var d Damage
	d.AddInconsistent("frame data programs", "frame data at 0x10: empty")
	d.AddInconsistent("frame data programs", "frame data at 0x20: empty")
	d.Add("public symbols", "bad")
	want := []string{"frame data programs: 2 inconsistent with the rest of the file, used as read (first: frame data at 0x10: empty)",
		"public symbols: 1 failed to parse, left out (first: bad)"}
	if got := d.Lines(); !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
	if d.Len() != 3 || !errors.Is(d.Err(), ErrDamaged) {
		t.Errorf("len %d, err %v", d.Len(), d.Err())
	}
}
