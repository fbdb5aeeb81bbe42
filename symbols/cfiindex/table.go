package cfiindex

import (
	"math"
	"slices"

	"github.com/gobreakpad/gobreakpad/symfile"
)

// FromTable returns a Writer holding the unwind records of a parsed symbol
// file as its lookups resolve them, with the header flags it implies; the
// caller sets Source (and FlagNoLookups when it applies).
func FromTable(t *symfile.Table) *Writer {
	w := &Writer{}
	if t.HasCFI() {
		w.Flags |= FlagHasCFI
	}
	if t.Corrupt() {
		w.Flags |= FlagCorrupt
	}
	t.EachCFI(func(r symfile.CFIRules) bool {
		in := Init{Address: r.Address, Size: r.Size, Rules: r.Init, Deltas: make([]Delta, len(r.Deltas))}
		for k, d := range r.Deltas {
			in.Deltas[k] = Delta{Address: d.Address, Rules: d.Rules}
		}
		w.AddInit(in)
		return true
	})
	// STACK WIN answers are constant between the records' bounds: one
	// range per run of addresses answered by the same record.
	b := t.StackWinBounds()
	slices.Sort(b)
	b = slices.Compact(b)
	var cur Win
	have := false
	flush := func() {
		if have {
			w.AddWin(cur)
		}
		have = false
	}
	for k, a := range b {
		last := uint64(math.MaxUint64)
		if k+1 < len(b) {
			last = b[k+1] - 1
		}
		s, ok := t.StackWin(a)
		if !ok {
			flush()
			continue
		}
		r := Win{Address: a, Size: last - a + 1, Type: uint8(s.Type), ParamSize: s.ParamSize,
			SavedRegisterSize: s.SavedRegisterSize, LocalSize: s.LocalSize,
			AllocatesBasePointer: s.AllocatesBasePointer, HasProgram: s.HasProgramString, Program: s.ProgramString}
		if last == math.MaxUint64 && a == 0 {
			r.Size = math.MaxUint64 // the whole space; one address short
		}
		if have && cur.Address+cur.Size == a && sameWin(cur, r) {
			cur.Size += r.Size
			continue
		}
		flush()
		cur, have = r, true
	}
	flush()
	t.EachFunc(func(addr, size, param uint64) bool {
		w.AddFunc(Func{Address: addr, Size: size, ParamSize: uint32(param)})
		return true
	})
	return w
}

func sameWin(a, b Win) bool {
	a.Address, a.Size, b.Address, b.Size = 0, 0, 0, 0
	return a == b
}
