package symbols_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gobreakpad/gobreakpad/symbols"
)

// fake is a source holding one kind set for the module "m".
type fake struct {
	syms  *symbols.Symbols
	err   error
	calls int
}

func (f *fake) Load(m symbols.Module) (*symbols.Symbols, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	if f.syms == nil || m.DebugFile != "m" {
		return nil, fmt.Errorf("%s: %w", m.DebugFile, symbols.ErrNotFound)
	}
	return f.syms, nil
}

type named string

func (n named) Lookup(uint64, bool) (symbols.Symbol, bool) {
	return symbols.Symbol{Function: string(n)}, true
}
func (n named) CFIRules(_ uint64, dst []string) ([]string, bool) { return append(dst, string(n)), true }
func (n named) StackWin(uint64) (symbols.StackWin, bool) {
	return symbols.StackWin{ProgramString: string(n)}, true
}

func TestChainPerKind(t *testing.T) {
	lookupsOnly := &fake{syms: &symbols.Symbols{Lookup: named("gsym")}}
	broken := &fake{err: errors.New("bad file")}
	full := &fake{syms: &symbols.Symbols{Lookup: named("sym"), CFI: named("sym"), Win: named("sym"), Corrupt: true}}
	never := &fake{syms: &symbols.Symbols{Lookup: named("late"), CFI: named("late"), Win: named("late")}}
	c := symbols.Chain{nil, lookupsOnly, broken, full, never}
	s, err := c.Load(symbols.Module{DebugFile: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if sym, _ := s.Lookup.Lookup(0, false); sym.Function != "gsym" {
		t.Errorf("lookups from %q, want the first source that has them", sym.Function)
	}
	if r, _ := s.CFI.CFIRules(0, nil); len(r) != 1 || r[0] != "sym" {
		t.Errorf("CFI from %q, want the .sym source's", r)
	}
	if w, _ := s.Win.StackWin(0); w.ProgramString != "sym" {
		t.Errorf("STACK WIN from %q, want the .sym source's", w.ProgramString)
	}
	if !s.Corrupt {
		t.Error("corrupt mark of a used source lost")
	}
	if never.calls != 0 {
		t.Error("a source after every kind was found was asked")
	}
}

func TestChainMissing(t *testing.T) {
	c := symbols.Chain{&fake{}, &fake{syms: &symbols.Symbols{}}}
	if _, err := c.Load(symbols.Module{DebugFile: "m"}); !errors.Is(err, symbols.ErrNotFound) {
		t.Errorf("err = %v, want ErrNotFound", err)
	}
	bad := errors.New("bad file")
	c = symbols.Chain{&fake{}, &fake{err: bad}}
	if _, err := c.Load(symbols.Module{DebugFile: "m"}); !errors.Is(err, bad) || errors.Is(err, symbols.ErrNotFound) {
		t.Errorf("err = %v, want the unreadable file's error", err)
	}
	// A corrupt source whose information is not used leaves no mark.
	c = symbols.Chain{&fake{syms: &symbols.Symbols{Lookup: named("a"), CFI: named("a"), Win: named("a")}},
		&fake{syms: &symbols.Symbols{Lookup: named("b"), Corrupt: true}}}
	if s, err := c.Load(symbols.Module{DebugFile: "m"}); err != nil || s.Corrupt {
		t.Errorf("Load = %+v, %v; want a clean result", s, err)
	}
}
