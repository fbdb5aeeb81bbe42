package jsonout

import (
	"sort"

	"github.com/gobreakpad/gobreakpad/stackwalk"
)

// rustModules is rust-minidump's index of the loaded modules
// (MinidumpModuleList::from_modules, through into_rangemap_safe), which
// decides the module of every frame of its JSON: the modules' ranges sorted
// by (base, end), the dump's order at equal ranges, each left out when it
// overlaps the last one kept, so that the lowest base wins (at one base, the
// shortest) and a module overlapping it is dropped whole. An empty module,
// and one whose end (base + size) does not fit in 64 bits, is never found.
// Breakpad's rules differ (stackwalk.ProcessState.ModulesByAddress).
type rustModules []rustRange

type rustRange struct {
	lo, hi uint64 // inclusive
	m      *stackwalk.Module
}

func newRustModules(mods []*stackwalk.Module) rustModules {
	in := make([]rustRange, 0, len(mods))
	for _, m := range mods {
		if m.Size == 0 || m.Base+m.Size <= m.Base {
			continue
		}
		in = append(in, rustRange{m.Base, m.Base + m.Size - 1, m})
	}
	sort.SliceStable(in, func(i, j int) bool {
		if in[i].lo != in[j].lo {
			return in[i].lo < in[j].lo
		}
		return in[i].hi < in[j].hi
	})
	out := in[:0]
	for _, r := range in {
		if len(out) > 0 && r.lo <= out[len(out)-1].hi {
			continue
		}
		out = append(out, r)
	}
	return out
}

// at returns the module rust-minidump finds at addr, or nil.
func (rm rustModules) at(addr uint64) *stackwalk.Module {
	i := sort.Search(len(rm), func(i int) bool { return rm[i].hi >= addr })
	if i == len(rm) || addr < rm[i].lo {
		return nil
	}
	return rm[i].m
}
