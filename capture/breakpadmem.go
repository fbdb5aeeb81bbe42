package capture

// breakpadIPMemory is how much code Breakpad's Linux client keeps around
// the crashing thread's program counter (kIPMemorySize: 256 bytes, half
// on either side).
const breakpadIPMemory = 256

// KeepBreakpadMemory cuts the capture's memory down to what Breakpad's
// Linux client (minidump_writer) saves: each thread's stack and the 256
// bytes around the crashing thread's program counter. The vDSO's image,
// the one-page code mappings (qemu-user's signal trampoline page) and the
// code around the stack's return addresses are dropped, so that a dump
// shows what a walker has of a dump Breakpad's client wrote (the signal
// trampoline's code is not in it). Modules, threads and everything else
// are kept.
func (p *Process) KeepBreakpadMemory() {
	var spans []span
	for _, t := range p.Threads {
		if len(t.Stack.Data) > 0 {
			spans = append(spans, span{t.Stack.Addr, t.Stack.End()})
		}
	}
	if len(p.Threads) > 0 {
		pc := p.Threads[0].PC
		lo := pc - breakpadIPMemory/2
		if pc < breakpadIPMemory/2 {
			lo = 0
		}
		hi := pc + breakpadIPMemory/2
		if hi < pc {
			hi = ^uint64(0)
		}
		spans = append(spans, span{lo, hi})
	}
	var out []Region
	for _, s := range mergeSpans(spans) {
		for _, r := range p.Memory {
			if r.End() <= s.start || r.Addr >= s.end {
				continue
			}
			lo, hi := max(r.Addr, s.start), min(r.End(), s.end)
			out = append(out, Region{lo, r.Data[lo-r.Addr : hi-r.Addr]})
		}
	}
	p.Memory = out
	for i, t := range p.Threads {
		if len(t.Stack.Data) > 0 {
			p.Threads[i].Stack = p.slice(span{t.Stack.Addr, t.Stack.End()})
		}
	}
}
