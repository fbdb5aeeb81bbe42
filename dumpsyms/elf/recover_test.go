package elf

import (
	"debug/dwarf"
	"fmt"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// TestDIEPanicRecovered makes debug/dwarf's walk "panic" in the middle of
// one unit of a real program (through dieHook): the dump goes on with a
// warning, keeps the functions of the other units and of the unit's start.
func TestDIEPanicRecovered(t *testing.T) {
	path := corpus.File(t, "elf/x64-dw4/debuglink/deep_chain.debug")
	dump := func() (string, []string) {
		var warns []string
		s, err := Dump(path, dumpsyms.Options{Inlines: true, Warn: func(f string, a ...any) {
			warns = append(warns, fmt.Sprintf(f, a...))
		}})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := s.Write(&b); err != nil {
			t.Fatal(err)
		}
		return b.String(), warns
	}
	// The units and their functions.
	var units []dwarf.Offset
	funcs := map[dwarf.Offset][]dwarf.Offset{}
	dieHook = func(e *dwarf.Entry) {
		switch e.Tag {
		case dwarf.TagCompileUnit:
			units = append(units, e.Offset)
		case dwarf.TagSubprogram:
			u := units[len(units)-1]
			funcs[u] = append(funcs[u], e.Offset)
		}
	}
	defer func() { dieHook = nil }()
	want, _ := dump()
	var bad dwarf.Offset
	for _, u := range units[:len(units)-1] {
		if len(funcs[u]) > 1 {
			bad = funcs[u][len(funcs[u])/2]
			break
		}
	}
	if bad == 0 {
		t.Skipf("%s: no unit with functions before the last (%d units)", path, len(units))
	}
	// Both readers: dieReader (the section at hand) and dwarf.Reader.
	dieHook = func(e *dwarf.Entry) {
		if e.Offset == bad {
			panic("index out of range [7] with length 3")
		}
	}
	got, warns := dump()
	if !strings.Contains(strings.Join(warns, "\n"), "debug/dwarf panicked (index out of range [7] with length 3): the rest of its unit is skipped") {
		t.Errorf("no warning for the panic: %q", warns)
	}
	nw, ng := strings.Count(want, "\nFUNC "), strings.Count(got, "\nFUNC ")
	t.Logf("%d units, panic at %#x: %d of %d functions kept", len(units), bad, ng, nw)
	if ng == 0 || ng >= nw {
		t.Errorf("%d functions after the panic, %d without", ng, nw)
	}
	// The last unit's functions are all there.
	lastFuncs := 0
	for _, l := range strings.Split(want, "\n") {
		if strings.HasPrefix(l, "FUNC ") && strings.Contains(got, l+"\n") {
			lastFuncs++
		}
	}
	if lastFuncs != ng {
		t.Errorf("%d of the %d functions kept differ from the undamaged dump", ng-lastFuncs, ng)
	}
}
