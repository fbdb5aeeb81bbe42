package symbols_test

import (
	"fmt"
	"time"

	"github.com/gobreakpad/gobreakpad/symbols"
)

// slowSource answers after a delay, as a symbol server does.
type slowSource struct{}

func (slowSource) Load(m symbols.Module) (*symbols.Symbols, error) {
	time.Sleep(10 * time.Millisecond)
	if m.DebugFile == "missing.pdb" {
		return nil, fmt.Errorf("%s: %w", m.DebugFile, symbols.ErrNotFound)
	}
	return &symbols.Symbols{Lookup: named(m.DebugFile)}, nil
}

// The modules' symbols load four at once from the start; each Load then
// waits for its module's load (or runs it at once if its turn has not
// come), and gives the wrapped source's answer.
func ExamplePrefetch() {
	mods := []symbols.Module{
		{DebugFile: "app.pdb", DebugID: "1"},
		{DebugFile: "kernel32.pdb", DebugID: "2"},
		{DebugFile: "missing.pdb", DebugID: "3"},
	}
	p := symbols.NewPrefetch(slowSource{}, mods, 4)
	defer p.Stop() // no more loads start; those running are waited for
	for _, m := range mods {
		s, err := p.Load(m)
		if err != nil {
			fmt.Println(m.DebugFile, "error:", err)
			continue
		}
		sym, _ := s.Lookup.Lookup(0, false)
		fmt.Println(m.DebugFile, "symbols:", sym.Function)
	}
	// Output:
	// app.pdb symbols: app.pdb
	// kernel32.pdb symbols: kernel32.pdb
	// missing.pdb error: missing.pdb: symbols: not found
}
