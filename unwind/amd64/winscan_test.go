package amd64_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/unwind"
	amd64unwind "github.com/gobreakpad/gobreakpad/unwind/amd64"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

// TestWindowsScanChecksCandidates: on Windows, a scanned candidate in a
// module with unwind rules is taken only when its function's rules give a
// plausible caller; one whose rules read junk is passed over (issue 28).
// Candidates in a module without rules are taken as Breakpad takes them,
// and other systems' scans are Breakpad's.
func TestWindowsScanChecksCandidates(t *testing.T) {
	const sysDLL = 0x500000 // a module without symbols, where the context is
	setup := func(windows bool, first uint64) (*unwindtest.Env, uint64) {
		env := newEnv()
		env.IsWindows = windows
		env.Modules = append(env.Modules, unwindtest.Module{Base: sysDLL, Size: 0x1000})
		env.CFIs = []unwindtest.CFIRange{
			{Start: 0x402000, Size: 0x100, Init: ".cfa: $rsp 16 + .ra: .cfa -8 + ^"},
			{Start: 0x403000, Size: 0x100, Init: ".cfa: $rsp 8 + .ra: .cfa -8 + ^"},
		}
		// junk, junk, a stale candidate (its rules read the return
		// address two words up: junk), junk, junk, the true return
		// address into 0x403000's function, whose caller's is right above.
		sp := env.Push(0x11, 0x22, first, 0x33, 0x44, 0x403050, 0x401050, 0)
		return env, sp
	}
	walk := func(env *unwindtest.Env, sp uint64) *unwind.Frame {
		f := contextFrame(t, env, sysDLL+0x100, sp, 1) // rbp 1: no frame chain
		c := (amd64unwind.Unwinder{}).Caller(env, []*unwind.Frame{f}, true)
		if c == nil {
			t.Fatal("no caller")
		}
		return c
	}
	env, sp := setup(true, 0x402050)
	check(t, walk(env, sp), unwind.TrustScan, 0x403050, sp+6*8)

	// Its caller by the rules: 0x401050, at the next word.
	env, sp = setup(true, 0x402050)
	frames := unwindtest.Walk(amd64unwind.Unwinder{}, env, contextFrame(t, env, sysDLL+0x100, sp, 1), 3)
	if len(frames) < 3 {
		t.Fatalf("%d frames", len(frames))
	}
	check(t, frames[2], unwind.TrustCFI, 0x401050, sp+7*8)

	// No rules for the candidate's module: taken, as Breakpad takes it.
	env, sp = setup(true, sysDLL+0x200)
	check(t, walk(env, sp), unwind.TrustScan, sysDLL+0x200, sp+3*8)

	// In a module with rules but no rule at it (0x401000's function: a
	// leaf on Windows x64): the return address is at its stack pointer,
	// 0x33, junk: passed over.
	env, sp = setup(true, 0x401050)
	check(t, walk(env, sp), unwind.TrustScan, 0x403050, sp+6*8)

	// Not Windows: Breakpad's scan.
	env, sp = setup(false, 0x402050)
	check(t, walk(env, sp), unwind.TrustScan, 0x402050, sp+3*8)
}

// TestWindowsScanSaveSlot: a stale candidate whose rules lead to a true
// frame is passed over when a save slot of its chain holds a return
// address whose own rules lead to that same frame (a prologue writes its
// save slots, so they are never stale: the slot is the true return
// address), and the scan goes on from that slot; a save slot holding a
// word that does not rejoin the chain leaves the candidate taken
// (testdata/truth/wincxx's stale __emutls_get_address frames).
func TestWindowsScanSaveSlot(t *testing.T) {
	const sysDLL = 0x500000 // a module without symbols, where the context is
	setup := func(slot uint64) (*unwindtest.Env, uint64) {
		env := newEnv()
		env.IsWindows = true
		env.Modules = append(env.Modules, unwindtest.Module{Base: sysDLL, Size: 0x1000})
		env.CFIs = []unwindtest.CFIRange{
			// The stale callee: a local, rbx saved, the return address.
			{Start: 0x401000, Size: 0x100, Init: ".cfa: $rsp 24 + $rbx: .cfa -16 + ^ .ra: .cfa -8 + ^"},
			// The true callee: no frame of its own.
			{Start: 0x402000, Size: 0x100, Init: ".cfa: $rsp 8 + .ra: .cfa -8 + ^"},
			{Start: 0x403000, Size: 0x100, Init: ".cfa: $rsp 16 + .ra: .cfa -8 + ^"},
		}
		// junk, junk, the stale return address into 0x401000's function, its
		// local, its rbx slot, the return address into 0x403000's
		// function both chains meet at.
		sp := env.Push(0x11, 0x12, 0x401050, 0x22, slot, 0x403050, 0x44, 0)
		return env, sp
	}
	walk := func(env *unwindtest.Env, sp uint64) *unwind.Frame {
		f := contextFrame(t, env, sysDLL+0x100, sp, 1) // rbp 1: no frame chain
		c := (amd64unwind.Unwinder{}).Caller(env, []*unwind.Frame{f}, true)
		if c == nil {
			t.Fatal("no caller")
		}
		return c
	}
	// The rbx slot holds a return address into 0x402000's function, whose
	// rules lead to the frame the stale candidate's lead to: it is taken.
	env, sp := setup(0x402050)
	check(t, walk(env, sp), unwind.TrustScan, 0x402050, sp+5*8)

	// The rbx slot holds a return address whose rules lead elsewhere (its
	// own function's: junk): the candidate is taken, as before.
	env, sp = setup(0x401060)
	check(t, walk(env, sp), unwind.TrustScan, 0x401050, sp+3*8)

	// The rbx slot holds data: the candidate is taken.
	env, sp = setup(0x33)
	check(t, walk(env, sp), unwind.TrustScan, 0x401050, sp+3*8)
}

// TestWindowsScanExceptionRecord: the dump's exception record refutes
// scan candidates Breakpad takes in modules without rules
// (testdata/truth/wincxx, where RaiseException's frame has none): a word
// of an in-stack copy of the record (its ExceptionAddress: the context's
// pc, in a module) is the record's, and a context frame whose pc is the
// record's address with the copy at or above its stack pointer raised the
// exception by a call (RtlRaiseException), so it is no leaf (no simulated
// return) and its return address is not in the 32-byte home space it
// allocated for that call. Without the record, or with a record that does
// not say so, the scan is Breakpad's.
func TestWindowsScanExceptionRecord(t *testing.T) {
	const (
		raiser = 0x500000 // kernelbase: no symbols, the context's pc in it
		other  = 0x600000 // kernel32: no symbols, a stale word into it
		pc     = raiser + 0x100
	)
	type stack struct {
		home0, home2 uint64 // words of the home space
		address      uint64 // the record's ExceptionAddress (its copy's and the dump's)
		below        bool   // the copy below the context's stack pointer (a fault's)
	}
	setup := func(s stack) (*unwindtest.Env, uint64) {
		env := newEnv()
		env.IsWindows = true
		env.Modules = append(env.Modules, unwindtest.Module{Base: raiser, Size: 0x1000}, unwindtest.Module{Base: other, Size: 0x1000})
		env.CFIs = []unwindtest.CFIRange{{Start: 0x403000, Size: 0x100, Init: ".cfa: $rsp 16 + .ra: .cfa -8 + ^"}}
		env.Exc = &unwind.ExceptionRecord{Code: 0x20474343, Address: s.address, NumberParameters: 1, Parameters: []uint64{0x777}}
		record := []uint64{0x20474343, 0, s.address, 1 | 0x5a<<32, 0x777}
		if s.below {
			env.Push(record...)
		}
		sp := env.Push(s.home0, 0, s.home2, 0)
		if !s.below {
			env.Push(record...)
		}
		// a local, the true return address, its caller's.
		env.Push(0x44, 0x403050, 0x401050, 0)
		return env, sp
	}
	caller := func(env *unwindtest.Env, sp uint64) *unwind.Frame {
		c := (amd64unwind.Unwinder{}).Caller(env, []*unwind.Frame{contextFrame(t, env, pc, sp, 1)}, true)
		if c == nil {
			t.Fatal("no caller")
		}
		return c
	}
	trueRSP := func(sp uint64) uint64 { return sp + 11*8 } // home, record, local, return address

	// Raised at the pc, the copy above: the stale home space word and the
	// record's address are passed over.
	env, sp := setup(stack{home2: other + 0x100, address: pc})
	check(t, caller(env, sp), unwind.TrustScan, 0x403050, trueRSP(sp))
	// No record: Breakpad's scan takes the stale word.
	env.Exc = nil
	check(t, caller(env, sp), unwind.TrustScan, other+0x100, sp+3*8)

	// No simulated return either: the frame made a call.
	env, sp = setup(stack{home0: other + 0x200, address: pc})
	check(t, caller(env, sp), unwind.TrustScan, 0x403050, trueRSP(sp))
	env.Exc = nil
	check(t, caller(env, sp), unwind.TrustLeaf, other+0x200, sp+8)

	// The record raised elsewhere (its address is not the pc): the home
	// space is scanned, as Breakpad's scan does...
	env, sp = setup(stack{home2: other + 0x100, address: raiser + 0x200})
	check(t, caller(env, sp), unwind.TrustScan, other+0x100, sp+3*8)
	// ... and its copy's address word is still the record's.
	env, sp = setup(stack{address: raiser + 0x200})
	check(t, caller(env, sp), unwind.TrustScan, 0x403050, trueRSP(sp))
	env.Exc = nil
	check(t, caller(env, sp), unwind.TrustScan, raiser+0x200, sp+7*8)

	// A fault's record, put below the faulting frame: nothing said of the
	// frame's home space.
	env, sp = setup(stack{home2: other + 0x100, address: pc, below: true})
	check(t, caller(env, sp), unwind.TrustScan, other+0x100, sp+3*8)

	// A copy that differs from the dump's record in one field is none.
	env, sp = setup(stack{home2: other + 0x100, address: pc})
	env.Exc.Parameters = []uint64{0x778}
	check(t, caller(env, sp), unwind.TrustScan, other+0x100, sp+3*8)
	env.Exc.Parameters = []uint64{0x777}
	env.Exc.Flags = 1
	check(t, caller(env, sp), unwind.TrustScan, other+0x100, sp+3*8)

	// Not Windows: no Windows scan, Breakpad's scan takes the stale word.
	env, sp = setup(stack{home2: other + 0x100, address: pc})
	env.IsWindows = false
	check(t, caller(env, sp), unwind.TrustScan, other+0x100, sp+3*8)
}

// BenchmarkWindowsScanExceptionRecord measures the scan from a context
// frame without rules over a stack like TestWindowsScanExceptionRecord's,
// its true return address 120 junk words further up (the scan reads its
// whole reach), with the dump's exception record (its copy looked for in
// the scan's reach, the record's address word passed over) and without it
// (the copy's address word 0: no candidate either, the same words read).
func BenchmarkWindowsScanExceptionRecord(b *testing.B) {
	const raiser, pc = 0x500000, 0x500100
	for _, withRecord := range []bool{false, true} {
		name := "without-record"
		if withRecord {
			name = "with-record"
		}
		b.Run(name, func(b *testing.B) {
			env := newEnv()
			env.IsWindows = true
			env.Modules = append(env.Modules, unwindtest.Module{Base: raiser, Size: 0x1000})
			env.CFIs = []unwindtest.CFIRange{{Start: 0x403000, Size: 0x100, Init: ".cfa: $rsp 16 + .ra: .cfa -8 + ^"}}
			address := uint64(0)
			if withRecord {
				address = pc
				env.Exc = &unwind.ExceptionRecord{Code: 0x20474343, Address: pc, NumberParameters: 1, Parameters: []uint64{0x777}}
			}
			sp := env.Push(0x11, 0, 0, 0, 0x20474343, 0, address, 1, 0x777)
			for range 120 {
				env.Push(0x1234)
			}
			env.Push(0x403050, 0x401050, 0)
			f, err := amd64unwind.Unwinder{}.ContextFrame(&amd64.Context{Rip: pc, Rsp: sp, Rbp: 1}, env)
			if err != nil {
				b.Fatal(err)
			}
			frames := []*unwind.Frame{f}
			b.ReportAllocs()
			for b.Loop() {
				if c := (amd64unwind.Unwinder{}).Caller(env, frames, true); c == nil || c.Regs[amd64.RIP] != 0x403050 {
					b.Fatal("wrong caller")
				}
			}
		})
	}
}
