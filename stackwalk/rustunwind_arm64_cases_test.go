package stackwalk_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// This file holds rust-minidump's arm64 unwinder unit tests
// (minidump-unwind/src/arm64_unittest.rs, mostly Breakpad's
// stackwalker_arm64_unittest.cc) but test_frame_pointer (in
// rustunwind_test.go) as dumps made with minidump/synth, over the helpers
// of rustunwind_arm_cases_test.go. rust-minidump's arm64 fixture is
// Windows; so are these dumps.

// rustARM64Context is the context of rust-minidump's arm64 fixture: all
// zeros but pc, sp, lr and fp (x29).
func rustARM64Context(pc, sp, lr, fp uint64) *arm64.Context {
	c := &arm64.Context{ContextFlags: arm64.ContextFull}
	c.Iregs[arm64.RegPC], c.Iregs[arm64.RegSP], c.Iregs[arm64.RegLR], c.Iregs[arm64.RegFP] = pc, sp, lr, fp
	return c
}

// rustARM64Walk walks one arm64 case on Windows (rust-minidump's fixture)
// and checks its frames: the context frame (pc, sp) then callers.
func rustARM64Walk(t *testing.T, ctx *arm64.Context, st *synth.Stack, mods []rustArmModule, callers []rustArmFrame) {
	t.Helper()
	p := rustArmWalk(t, arch.ARM64, minidump.PlatformWin32NT, synth.ARM64(ctx), st, mods)
	want := append([]rustArmFrame{{pc: ctx.Iregs[arm64.RegPC], sp: ctx.Iregs[arm64.RegSP], trust: unwind.TrustContext}}, callers...)
	rustArmCheck(t, p, want, arm64.RegPC, arm64.RegSP)
}

// TestRustARM64Scan holds rust-minidump's arm64 test_simple,
// test_scan_without_symbols, test_scan_with_symbols (words in modules but
// in no function are no return addresses) and test_scan_first_frame.
func TestRustARM64Scan(t *testing.T) {
	const sp = 0x80000000
	const ra1, ra2 = 0x50000100, 0x50000900
	scan := func(pc, sp uint64) rustArmFrame {
		return rustArmFrame{pc: pc, sp: sp, trust: unwind.TrustScan, valid: 2}
	}
	for _, c := range []struct {
		name  string
		pc    uint64
		mods  []rustArmModule
		build func(st *synth.Stack) []rustArmFrame
	}{
		{"test_simple", 0x4000c020, rustArmModules("", ""), func(st *synth.Stack) []rustArmFrame { return nil }},
		{"test_scan_without_symbols", 0x40005510, rustArmModules("", ""), func(st *synth.Stack) []rustArmFrame {
			st.Zeros(16)
			st.U64(0x40090000)
			st.U64(0x60000000)
			st.U64(ra1)
			sp1 := st.Here()
			st.Zeros(16)
			st.U64(0xf0000000)
			st.U64(0xd)
			st.U64(ra2)
			sp2 := st.Here()
			st.Zeros(64)
			return []rustArmFrame{scan(ra1, sp1), scan(ra2, sp2)}
		}},
		{"test_scan_with_symbols", 0x40000200, rustArmModules("FUNC 100 400 10 monotreme\n", "FUNC 100 400 10 marsupial\n"), func(st *synth.Stack) []rustArmFrame {
			st.Zeros(16)
			st.U64(0x40090000)
			st.U64(0x60000000)
			st.U64(0x40001000) // in modules, in no function
			st.U64(0x5000f000)
			st.U64(0x50000200)
			sp1 := st.Here()
			st.Zeros(64)
			return []rustArmFrame{scan(0x50000200, sp1)}
		}},
		{"test_scan_first_frame", 0x40005510, rustArmModules("", ""), func(st *synth.Stack) []rustArmFrame {
			st.Zeros(16)
			st.U64(0x40090000)
			st.U64(0x60000000)
			st.Zeros(96)
			st.U64(ra1)
			sp1 := st.Here()
			st.Zeros(32)
			st.U64(0xf0000000)
			st.U64(0xd)
			st.Zeros(336)
			st.U64(ra2) // beyond a later frame's scan
			st.Zeros(64)
			return []rustArmFrame{scan(ra1, sp1)}
		}},
	} {
		// rust-minidump's context is zeros but pc and sp; so ends ours,
		// as Breakpad's (R13): the frame-pointer step from fp 0 gives
		// the caller pc lr = 0, the end of the stack, and no scan is
		// tried. Breakpad's own fixture fills the context with junk
		// (BrandContext): with its fp and lr the scans find rust-minidump's
		// callers.
		for _, v := range []struct {
			name   string
			lr, fp uint64
		}{{"zeroed", 0, 0}, {"branded", 0xad9c8b7a69584736, 0x251403f2e1d0bfae}} {
			t.Run(c.name+"/"+v.name, func(t *testing.T) {
				st := synth.NewStack(sp, 8)
				callers := c.build(st)
				fp := v.fp
				if c.name == "test_simple" {
					fp = 0x80000000
				}
				if v.name == "zeroed" {
					callers = nil
				}
				rustARM64Walk(t, rustARM64Context(c.pc, sp, v.lr, fp), st, c.mods, callers)
			})
		}
	}
}
