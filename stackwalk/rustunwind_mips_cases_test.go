package stackwalk_test

import (
	"fmt"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/mips"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// rust-minidump has no MIPS unwinder unit tests (its minidump-unwind has
// arm, arm64, amd64 and x86 ones; mips.rs has none), so this file holds
// the cases rust-minidump's were translated from for the other CPUs:
// Breakpad's stackwalker_mips_unittest.cc and
// stackwalker_mips64_unittest.cc, as dumps made with minidump/synth over
// the helpers of rustunwind_arm_cases_test.go (module1 at 0x400000,
// module2 at 0x500000, Linux). Breakpad's expectations are the reference;
// ours agree with all of them.

// rustMIPSCFISyms is module1's symbol file of Breakpad's MIPS CFI
// fixture: enchiridion at 0x4000 moves sp by 32, saves fp and ra, uses fp
// as the CFA's base; epictetus at 0x5000; palinal's CFA goes backwards;
// rhetorical's rules cannot be evaluated.
const rustMIPSCFISyms = `FUNC 4000 1000 0 enchiridion
STACK CFI INIT 4000 1000 .cfa: $sp 0 + .ra: $ra
STACK CFI 4004 .cfa: $sp 32 +
STACK CFI 4008 $fp: .cfa -8 + ^ .ra: .cfa -4 + ^
STACK CFI 400c .cfa: $fp 32 +
STACK CFI 4018 .cfa: $sp 32 +
STACK CFI 4020 $fp: $fp .cfa: $sp 0 + .ra: .ra
FUNC 5000 1000 0 epictetus
STACK CFI INIT 5000 8 .cfa: $sp 0 + .ra: $ra
FUNC 6000 1000 20 palinal
STACK CFI INIT 6000 1000 .cfa: $sp 4 - .ra: $ra
FUNC 7000 1000 20 rhetorical
STACK CFI INIT 7000 1000 .cfa: moot .ra: ambiguous
`

// TestRustMIPS holds Breakpad's MIPS and MIPS64 stackwalker unit tests
// that walk: GetContextFrame NoStackMemory, GetCallerFrame
// ScanWithoutSymbols, ScanWithFunctionSymbols, CheckStackFrameSizeLimit
// (a scan looks at one 1024-byte frame at most), CFI At4004 (the caller's
// pc is its return address less two instructions; s0-s7, sp, fp and ra
// known, gp too on mips64), RejectBackwards (at 0x40005000, outside every
// module as Breakpad's test has it, and at palinal, 0x406000, as it
// means) and RejectBadExpressions. ScanningNotAllowed and the
// SanityCheck tests exercise Breakpad's API, not a walk.
func TestRustMIPS(t *testing.T) {
	for _, is64 := range []bool{false, true} {
		word := 4
		flags := uint32(mips.ContextMIPS | mips.ContextFull)
		if is64 {
			word, flags = 8, mips.ContextMIPS64|mips.ContextFull
		}
		w := uint64(word)
		put := func(st *synth.Stack, v uint64) uint64 { return st.Ptr(v) }
		scan := func(ra, sp uint64) rustArmFrame {
			return rustArmFrame{pc: ra - 2*w, sp: sp, trust: unwind.TrustScan, regs: map[int]uint64{mips.RegRA: ra}, valid: 4}
		}
		for _, c := range []struct {
			name  string
			start uint64 // the stack's first byte (and sp)
			pc    uint64
			regs  map[int]uint64 // the context's Iregs (sp: start)
			syms  [2]string
			noMem bool
			build func(st *synth.Stack) []rustArmFrame
		}{
			{name: "NoStackMemory", start: 0x80000000, pc: 0x00400020, noMem: true,
				build: func(st *synth.Stack) []rustArmFrame { return nil }},
			{name: "ScanWithoutSymbols", start: 0x80000000, pc: 0x00405510, regs: map[int]uint64{mips.IregRA: 0x00400100},
				build: func(st *synth.Stack) []rustArmFrame {
					st.Zeros(4 * word)
					put(st, 0x00490000)
					put(st, 0x00600000)
					sp1 := put(st, 0) + 2*w
					put(st, 0x00400100)
					rustMIPSPatch(st, sp1-2*w, sp1, word)
					st.Zeros(4 * word)
					put(st, 0xf0000000)
					put(st, 0xd)
					sp2 := put(st, 0) + 2*w
					put(st, 0x00400900)
					rustMIPSPatch(st, sp2-2*w, sp2, word)
					st.Zeros(8 * word)
					return []rustArmFrame{scan(0x00400100, sp1), scan(0x00400900, sp2)}
				}},
			{name: "ScanWithFunctionSymbols", start: 0x80000000, pc: 0x00400200, regs: map[int]uint64{mips.IregRA: 0x00500200},
				syms: [2]string{"FUNC 100 400 10 monotreme\n", "FUNC 100 400 10 marsupial\n"},
				build: func(st *synth.Stack) []rustArmFrame {
					st.Zeros(16)
					put(st, 0x00490000)
					put(st, 0x00600000)
					put(st, 0x00401000) // in modules, in no function
					put(st, 0x0050f000)
					sp1 := put(st, 0) + 2*w
					put(st, 0x00500200)
					rustMIPSPatch(st, sp1-2*w, sp1, word)
					st.Zeros(8 * word)
					return []rustArmFrame{scan(0x00500200, sp1)}
				}},
			{name: "CheckStackFrameSizeLimit", start: 0x80000000, pc: 0x00405510, regs: map[int]uint64{mips.IregRA: 0x00500100},
				build: func(st *synth.Stack) []rustArmFrame {
					st.Zeros(32)
					put(st, 0x00490000)
					put(st, 0x00600000)
					st.Zeros(96)
					sp1 := put(st, 0) + 2*w
					put(st, 0x00500100)
					rustMIPSPatch(st, sp1-2*w, sp1, word)
					st.Zeros(128 * 4)
					put(st, 0x00f00000)
					put(st, 0xd)
					st.Zeros(128 * 4)
					sp2 := put(st, 0) + 2*w
					put(st, 0x00500900) // beyond the 1024 bytes scanned
					rustMIPSPatch(st, sp2-2*w, sp2, word)
					st.Zeros(8 * word)
					return []rustArmFrame{scan(0x00500100, sp1)}
				}},
			{name: "CFI At4004", start: 0x80000000 - 32, pc: 0x00404004, syms: [2]string{rustMIPSCFISyms, ""},
				regs: map[int]uint64{16: 0, 17: 1, 18: 2, 19: 3, 20: 4, 21: 5, 22: 6, 23: 7, mips.IregFP: 0x80000000, mips.IregRA: 0x00405510},
				build: func(st *synth.Stack) []rustArmFrame {
					st.Zeros(32 - 2*word)
					put(st, 0x80000000)
					put(st, 0x00405510)
					regs := map[int]uint64{mips.RegFP: 0x80000000, mips.RegRA: 0x00405510}
					for i := 0; i < 8; i++ {
						regs[mips.RegS0+i] = uint64(i)
					}
					valid := 12
					if is64 {
						regs[mips.RegGP], valid = 0, 13 // gp is callee-saved on mips64
					}
					return []rustArmFrame{{pc: 0x00405510 - 2*w, sp: 0x80000000, trust: unwind.TrustCFI, regs: regs, valid: valid}}
				}},
			{name: "CFI RejectBackwards", start: 0x80000000, pc: 0x40005000, regs: map[int]uint64{mips.IregRA: 0x00405510},
				syms: [2]string{rustMIPSCFISyms, ""}, noMem: true,
				build: func(st *synth.Stack) []rustArmFrame { return nil }},
			{name: "CFI RejectBackwards at palinal", start: 0x80000000, pc: 0x00406000, regs: map[int]uint64{mips.IregRA: 0x00405510},
				syms:  [2]string{rustMIPSCFISyms, ""},
				build: func(st *synth.Stack) []rustArmFrame { st.Zeros(64); return nil }},
			{name: "CFI RejectBadExpressions", start: 0x80000000, pc: 0x00407000, regs: map[int]uint64{mips.IregRA: 0x00405510},
				syms: [2]string{rustMIPSCFISyms, ""}, noMem: true,
				build: func(st *synth.Stack) []rustArmFrame { return nil }},
		} {
			t.Run(fmt.Sprintf("mips%d/%s", 8*word, c.name), func(t *testing.T) {
				ctx := &mips.Context{ContextFlags: flags, EPC: c.pc}
				ctx.Iregs[mips.IregSP] = c.start
				for r, v := range c.regs {
					ctx.Iregs[r] = v
				}
				st := synth.NewStack(c.start, word)
				callers := c.build(st)
				if c.noMem {
					st = nil
				}
				mods := []rustArmModule{{"module1", 0x00400000, 0x10000, c.syms[0]}, {"module2", 0x00500000, 0x10000, c.syms[1]}}
				p := rustArmWalk(t, synth.MIPS(ctx).CPU, minidump.PlatformLinux, synth.MIPS(ctx), st, mods, "")
				want := append([]rustArmFrame{{pc: c.pc, sp: c.start, trust: unwind.TrustContext}}, callers...)
				rustArmCheck(t, p, want, mips.RegPC, mips.RegSP)
			})
		}
	}
}

// rustMIPSPatch overwrites the word of size bytes at addr of st.
func rustMIPSPatch(st *synth.Stack, addr, v uint64, size int) {
	if size == 4 {
		rustArmPatch32(st, addr, uint32(v))
	} else {
		rustArmPatch64(st, addr, v)
	}
}
