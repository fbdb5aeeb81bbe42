package stackwalk

import (
	"encoding/binary"
	"slices"

	"github.com/gobreakpad/gobreakpad/symbols"
)

// Bounds on the stack words read to list a prefetch's modules
// (Options.Prefetch): a Windows stack overflow's whole 1 MiB stack, and at
// most a few milliseconds of reading in all.
const (
	prefetchStackBytes = 2 << 20  // per thread, from its stack pointer up
	prefetchTotalBytes = 16 << 20 // all threads together, contexts included
)

// prefetchOrder lists the modules of mm whose symbols a walk of p may ask
// for, most likely first: the modules of the threads' program counters
// (the requesting thread's first), then those holding a value of a thread's
// context or a word of its stack (read from the stack pointer up, the order
// in which frames are found). A frame's return address is a register's
// value or a stack word, so the others are left out: a walk reaches them
// only through memory outside the stacks, and then loads them itself.
// (Breakpad's minidump_crashpad_annotation.dmp: 22 modules of 354.)
func (p *ProcessState) prefetchOrder(mm *moduleMap) []symbols.Module {
	var out []symbols.Module
	seen := make(map[*Module]bool, len(mm.sorted))
	add := func(addr uint64) {
		m := mm.at(addr)
		if m == nil || seen[m] {
			return
		}
		seen[m] = true
		out = append(out, m.symbolsKey())
	}
	threads := slices.Clone(p.Threads)
	if r := p.RequestingThread; r > 0 && r < len(threads) {
		threads[0], threads[r] = threads[r], threads[0]
	}
	for _, cs := range threads {
		if cs.context != nil {
			add(cs.context.InstructionPointer())
		}
	}
	budget := prefetchTotalBytes
	for _, cs := range threads {
		if cs.context == nil || len(seen) == len(mm.sorted) || budget <= 0 {
			continue
		}
		ps := cs.context.CPU.PointerSize()
		if ps != 4 && ps != 8 {
			continue
		}
		word := func(b []byte) uint64 {
			if ps == 4 {
				return uint64(binary.LittleEndian.Uint32(b))
			}
			return binary.LittleEndian.Uint64(b)
		}
		raw := cs.context.Encode()
		budget -= len(raw)
		for i := 0; i+ps <= len(raw); i += 4 {
			add(word(raw[i:]))
		}
		r, ok := cs.Memory.(*region)
		if !ok {
			continue
		}
		start := uint64(0)
		if sp := cs.context.StackPointer(); sp > r.base && sp < r.end() {
			start = sp - r.base
		}
		data := r.data[start:]
		data = data[:min(len(data), prefetchStackBytes, budget)]
		budget -= len(data)
		for i := 0; i+ps <= len(data); i += ps {
			add(word(data[i:]))
		}
	}
	return out
}
