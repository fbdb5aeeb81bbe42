package amd64

import (
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// frameKey is a frame as the chain of a candidate reaches it.
type frameKey struct{ rsp, rip uint64 }

// chainSteps bounds how many callers of a scanned candidate its rules are
// followed to (callersOf).
const chainSteps = 1

// winScan is the scan of Windows x64 walks with validated candidates
// (issue 28, docs/stackwalk.md). Each candidate Breakpad's scan takes
// (unwind.ScanForCaller) whose module has unwind rules (STACK CFI from the
// PE's .pdata) is checked before it is accepted: a call instruction must
// end at it when its code is in the dump, and its function's rules at it
// (or, where no rule covers it, the rule of a leaf function: the return
// address at the stack pointer) must give a caller whose return address is
// plausible (in a function of a module, in executable memory when the
// dump's map says, after a call when the code is known) at a stack address
// above it, and no register save slot of its chain may hold a return
// address whose rules rejoin that chain (savedSlotContradicts). A
// candidate that fails is passed over, and the scan goes on past it. A
// candidate in a module without rules cannot be checked by them and is
// taken as Breakpad takes it, unless the dump's exception record refutes
// it: a word of an in-stack copy of the record is the record's field (its
// ExceptionAddress is the context's pc, in a module), and a context frame
// that raised the exception by a call (raisedByCall) keeps its callee's
// home space below its return address.
func winScan(env unwind.Env, last *unwind.Frame) (loc, rip uint64, trust unwind.Trust, ok bool) {
	start := last.Regs[amd64.RSP]
	end := start + uint64(unwind.ScanWords(last.Trust)*8)
	rec := env.Exception()
	s := start
	if raisedByCall(env, last) {
		s += homeSpace
	}
	for s <= end && s >= start {
		l, ip, t, found := unwind.ScanForCaller(env, s, int((end-s)/8), 8, callBefore)
		if !found {
			break
		}
		s = l + 8
		if _, inRecord := rec.CopyHolding(env, l); inRecord {
			continue
		}
		if _, valid := callersOf(env, l, ip); !valid {
			continue
		}
		if slot, bad := savedSlotContradicts(env, l, ip); bad {
			// The words between l and slot lie in the frames of the
			// stale chain: the scan goes on from the slot.
			s = slot
			continue
		}
		return l, ip, t, true
	}
	return 0, 0, unwind.TrustNone, false
}

// homeSpace is the Windows x64 calling convention's register parameter
// area: a caller allocates these 32 bytes at its stack pointer for every
// call it makes, where the callee may save rcx, rdx, r8 and r9. Its own
// return address lies above them.
const homeSpace = 32

// raisedByCall reports whether last, the context frame of a Windows x64
// walk, stands at the return address of a call it made at its stack
// pointer: the dump's exception record (unwind.Env's Exception) was raised
// at last's pc (ExceptionAddress) and a copy of it lies on the stack at or
// above last's stack pointer, within the scan's reach. Code that raises an
// exception builds its record there (RaiseException, crashpad's
// DumpWithoutCrash) and passes it to RtlRaiseException, which sets
// ExceptionAddress to the pc of the context it unwinds its own frame to:
// its caller's return address (RtlCaptureContext's callers do the same
// with the context it captures). The record of a fault is put by the
// system below the faulting frame's stack pointer, and its address is the
// faulting instruction, not a return address. So last is no leaf, and its
// own return address is not in the home space at its stack pointer.
func raisedByCall(env unwind.Env, last *unwind.Frame) bool {
	rec := env.Exception()
	if rec == nil || last.Trust != unwind.TrustContext || !last.Has(amd64.RIP) || !last.Has(amd64.RSP) ||
		rec.Address != last.Regs[amd64.RIP] {
		return false
	}
	rsp := last.Regs[amd64.RSP]
	_, ok := rec.FindCopy(env, rsp, rsp+uint64(unwind.ScanWords(last.Trust)*8))
	return ok
}

// callersOf checks the candidate return address rip found at loc and
// returns the chain of callers its module's rules give (see winScan); valid
// false when the candidate fails the check.
func callersOf(env unwind.Env, loc, rip uint64) (chain []frameKey, valid bool) {
	if !env.HasCFI(rip - 1) {
		return nil, true
	}
	if callBefore(env, rip) == unwind.NoCallBefore {
		return nil, false
	}
	f := &unwind.Frame{Trust: unwind.TrustScan}
	f.Set(amd64.RIP, rip)
	f.Set(amd64.RSP, loc+8)
	for k := 0; k < chainSteps; k++ {
		pc := f.Regs[amd64.RIP]
		if !env.HasCFI(pc - 1) {
			break
		}
		g := ruleCaller(env, f)
		if g == nil {
			break // the rules need registers the scan does not know
		}
		if !plausibleCaller(env, f, g) {
			if k == 0 {
				return nil, false
			}
			break
		}
		chain = append(chain, frameKey{g.Regs[amd64.RSP], g.Regs[amd64.RIP]})
		f = g
	}
	return chain, true
}

// ruleCaller is the caller of f (a frame at a return address) by the STACK
// CFI at its pc, or by the leaf rule where none covers it.
func ruleCaller(env unwind.Env, f *unwind.Frame) *unwind.Frame {
	if rules := env.CFI(f.Regs[amd64.RIP] - 1); rules != nil {
		if unwind.Outermost(rules) {
			return nil
		}
		return byCFI(env, f, rules)
	}
	rsp := f.Regs[amd64.RSP]
	ra, ok := unwind.Read64(env, rsp)
	if !ok {
		return nil
	}
	g := &unwind.Frame{Trust: unwind.TrustCFI}
	g.Set(amd64.RIP, ra)
	g.Set(amd64.RSP, rsp+8)
	return g
}

// plausibleCaller reports whether g, found by rules from f, can be f's
// caller: its return address in a function of a module, in executable
// memory when the dump's map says, after a call when the code is in the
// dump; its stack pointer above f's, its return address read from the
// stack.
func plausibleCaller(env unwind.Env, f, g *unwind.Frame) bool {
	ra, rsp := g.Regs[amd64.RIP], g.Regs[amd64.RSP]
	if ra < 1<<12 || nonCanonical(ra) || rsp <= f.Regs[amd64.RSP] {
		return false
	}
	if _, ok := unwind.Read64(env, rsp-8); !ok {
		return false
	}
	if !env.InModule(ra-1) || !env.SeemsValid(ra-1) {
		return false
	}
	if exec, known := env.Executable(ra - 1); known && !exec {
		return false
	}
	return callBefore(env, ra) != unwind.NoCallBefore
}

// saveSteps bounds how many frames of a candidate's chain have their save
// slots checked (savedSlotContradicts).
const saveSteps = 3

// slotRecorder is an Env that records the stack addresses a rule reads.
type slotRecorder struct {
	unwind.Env
	reads []uint64
}

// ReadMemory records addr and reads it from the wrapped Env.
func (r *slotRecorder) ReadMemory(addr uint64, n int) ([]byte, error) {
	if n == 8 {
		r.reads = append(r.reads, addr)
	}
	return r.Env.ReadMemory(addr, n)
}

// savedSlotContradicts reports whether the chain the rules give from the
// candidate rip found at loc is contradicted by a word its own rules say
// is a saved register: a slot where a frame of the chain saved one of its
// caller's registers holding a return address (in a function of a module
// with rules, after a call as far as the code is known) whose function's
// rules give, from that slot, a frame of the same chain further up. A
// save slot is written by the function's prologue before any call it
// makes, so in a true frame it holds a register's value, never a stale
// word; a register holding a return address whose frame lands exactly on
// the chain is the mark of a return address slot, and the candidate is a
// stale return address of a call made earlier from that chain (its frames
// cover the true callee's: testdata/truth/wincxx, docs/stackwalk.md).
func savedSlotContradicts(env unwind.Env, loc, rip uint64) (slot uint64, contradicts bool) {
	if !env.HasCFI(rip - 1) {
		return 0, false
	}
	type step struct {
		slots []uint64 // save slots read by the rules of this frame
		next  frameKey // the caller they give
	}
	var steps []step
	f := &unwind.Frame{Trust: unwind.TrustScan}
	f.Set(amd64.RIP, rip)
	f.Set(amd64.RSP, loc+8)
	for k := 0; k < saveSteps; k++ {
		pc := f.Regs[amd64.RIP]
		if !env.HasCFI(pc-1) || env.CFI(pc-1) == nil {
			break
		}
		rec := &slotRecorder{Env: env}
		g := ruleCaller(rec, f)
		if g == nil || !plausibleCaller(env, f, g) {
			break
		}
		var slots []uint64
		for _, a := range rec.reads {
			if a != g.Regs[amd64.RSP]-8 && a >= f.Regs[amd64.RSP] && a < g.Regs[amd64.RSP] {
				slots = append(slots, a)
			}
		}
		steps = append(steps, step{slots, frameKey{g.Regs[amd64.RSP], g.Regs[amd64.RIP]}})
		f = g
	}
	for i, s := range steps {
		for _, a := range s.slots {
			w, ok := unwind.Read64(env, a)
			if !ok || w < 1<<12 || nonCanonical(w) || !env.HasCFI(w-1) || !env.SeemsValid(w-1) ||
				callBefore(env, w) == unwind.NoCallBefore {
				continue
			}
			h := &unwind.Frame{Trust: unwind.TrustScan}
			h.Set(amd64.RIP, w)
			h.Set(amd64.RSP, a+8)
			c := ruleCaller(env, h)
			if c == nil || !plausibleCaller(env, h, c) {
				continue
			}
			key := frameKey{c.Regs[amd64.RSP], c.Regs[amd64.RIP]}
			for _, later := range steps[i:] {
				if later.next == key {
					return a, true
				}
			}
		}
	}
	return 0, false
}
