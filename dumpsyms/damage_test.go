package dumpsyms

import (
	"fmt"
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
