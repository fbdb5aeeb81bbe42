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
func rustARM64Walk(t *testing.T, ctx *arm64.Context, st *synth.Stack, mods []rustArmModule, callers []rustArmFrame, notBreakpad string) {
	t.Helper()
	p := rustArmWalk(t, arch.ARM64, minidump.PlatformWin32NT, synth.ARM64(ctx), st, mods, notBreakpad)
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
				rustARM64Walk(t, rustARM64Context(c.pc, sp, v.lr, fp), st, c.mods, callers, "")
			})
		}
	}
}

// TestRustARM64FramePointers holds rust-minidump's arm64 frame-pointer
// tests but test_frame_pointer: test_frame_pointer_preserves_lr_for_entry_cfi,
// ..._lr_whole_function_leaf_cfi, ..._stackless_leaf, ..._stackful_leaf,
// ..._ptr_auth_strip, ..._overflow, ..._barely_no_overflow and
// ..._infinite_equality. Each case has rust-minidump's frames (rust) and,
// where ours differ, ours: Breakpad's frame-pointer step takes the
// caller's pc from the callee's lr (R7).
func TestRustARM64FramePointers(t *testing.T) {
	const ra1, ra2 = 0x50000100, 0x50000900
	type result struct {
		pc, sp, lr, fp uint64
		mods           []rustArmModule
		rust, ours     []rustArmFrame // callers; ours nil: rust's
		notBreakpad    string         // why ours is not Breakpad's either
	}
	fpFrame := func(pc, sp, fp, lr uint64, valid int) rustArmFrame {
		regs := map[int]uint64{arm64.RegFP: fp}
		if valid == 4 {
			regs[arm64.RegLR] = lr
		}
		return rustArmFrame{pc: pc, sp: sp, trust: unwind.TrustFP, regs: regs, valid: valid}
	}
	// record appends 64 bytes of zeros, two junk words and a frame record
	// {fp, lr} (fp patched later), returning the record's address.
	record := func(st *synth.Stack, lr uint64) uint64 {
		st.Zeros(64)
		st.U64(0xd)
		st.U64(0xf0000000)
		a := st.U64(0)
		st.U64(lr)
		return a
	}
	for _, c := range []struct {
		name  string
		start uint64
		build func(st *synth.Stack) result
	}{
		{"test_frame_pointer_preserves_lr_for_entry_cfi", 0x80000000, func(st *synth.Stack) result {
			st.Zeros(64)
			fp0 := st.U64(0)
			st.U64(0x40002004)
			sp1 := st.Here()
			st.Zeros(64)
			fp1 := st.U64(0)
			st.U64(0x50000104)
			st.Zeros(64)
			rustArmPatch64(st, fp0, fp1)
			mods := rustArmModules("FUNC 1000 100 10 callee\nFUNC 2000 100 10 caller\nSTACK CFI INIT 2000 100 .cfa: sp 0 + .ra: x30\n",
				"FUNC 100 100 10 grandcaller\nSTACK CFI INIT 100 100 .cfa: 0 .ra: 0\n")
			return result{0x40001010, st.Start(), 0x1fe0fe10, fp0, mods,
				[]rustArmFrame{fpFrame(0x40002004, sp1, fp1, 0x50000104, 4), {pc: 0x50000104, sp: sp1, trust: unwind.TrustCFI}},
				// lr first; then caller's CFI (.ra: x30) gives lr with sp
				// unchanged, which ends the walk.
				[]rustArmFrame{fpFrame(0x1fe0fe10, sp1, fp1, 0x40002004, 4), fpFrame(0x40002004, fp1+16, 0, 0x50000104, 4)}, ""}
		}},
		{"test_frame_pointer_lr_whole_function_leaf_cfi", 0x80000000, func(st *synth.Stack) result {
			var fp [4]uint64
			ras := []uint64{0x40002044, 0x40003044, 0x40004044, 0}
			for i := range fp {
				st.Zeros(64)
				fp[i] = st.U64(0)
				st.U64(ras[i])
			}
			st.Zeros(64)
			for i := 0; i < 3; i++ {
				rustArmPatch64(st, fp[i], fp[i+1])
			}
			rule := ".cfa: x29 16 + x29: .cfa -16 + ^ .ra: .cfa -8 + ^"
			mods := rustArmModules("FUNC 1000 100 10 callee\nFUNC 2000 100 10 merged_stub\nSTACK CFI INIT 2000 100 .cfa: sp .ra: x30\n"+
				"FUNC 3000 100 10 frame_caller\nSTACK CFI INIT 3000 100 "+rule+"\nFUNC 4000 100 10 outer\nSTACK CFI INIT 4000 100 "+rule+"\n", "")
			return result{0x40001010, st.Start(), 0x1fe0fe10, fp[0], mods,
				[]rustArmFrame{{pc: ras[0], sp: fp[0] + 16, trust: unwind.TrustFP}, fpFrame(ras[1], fp[1]+16, fp[2], 0, 0),
					{pc: ras[2], sp: fp[2] + 16, trust: unwind.TrustCFI}},
				[]rustArmFrame{fpFrame(0x1fe0fe10, fp[0]+16, fp[1], ras[0], 4), fpFrame(ras[0], fp[1]+16, fp[2], ras[1], 4)}, ""}
		}},
		{"test_frame_pointer_stackless_leaf", 0x80000000, func(st *synth.Stack) result {
			st.Zeros(64)
			st.U64(0xd)
			st.U64(0xf0000000)
			fp1 := record(st, ra2)
			sp2 := st.Here()
			fp2 := record(st, 0)
			rustArmPatch64(st, fp1, fp2)
			return result{0x40005510, st.Start(), ra1, fp1, nil,
				// rust-minidump loses ra1 ("this test breaking might
				// mean you've made things work better").
				[]rustArmFrame{fpFrame(ra2, sp2, fp2, 0, 4)},
				[]rustArmFrame{fpFrame(ra1, sp2, fp2, ra2, 4), fpFrame(ra2, fp2+16, 0, 0, 4)}, ""}
		}},
		{"test_frame_pointer_stackful_leaf", 0x80000000, func(st *synth.Stack) result {
			fp1 := record(st, ra2)
			sp2 := st.Here()
			fp2 := record(st, 0)
			rustArmPatch64(st, fp1, fp2)
			return result{0x40005510, st.Start(), ra1, fp1, nil,
				[]rustArmFrame{fpFrame(ra2, sp2, fp2, 0, 4)},
				[]rustArmFrame{fpFrame(ra1, sp2, fp2, ra2, 4), fpFrame(ra2, fp2+16, 0, 0, 4)}, ""}
		}},
		{"test_frame_pointer_ptr_auth_strip", 0x80000000, func(st *synth.Stack) result {
			fp0 := record(st, ra1|0x0013_8000_0000_0000)
			sp1 := st.Here()
			fp1 := record(st, ra2|0x1110_0000_0000_0000)
			sp2 := st.Here()
			fp2 := record(st, 0)
			rustArmPatch64(st, fp0, fp1|0xa310_0000_0000_0000)
			rustArmPatch64(st, fp1, fp2|0xf31e_8000_0000_0000)
			return result{0x40005510, st.Start(), 0x1fe0fe10, fp0, nil,
				[]rustArmFrame{fpFrame(ra1, sp1, fp1, ra2, 4), fpFrame(ra2, sp2, fp2, 0, 4)},
				// lr first; the frame pointer it restores keeps its high
				// bits (only return addresses are signed, R14), which
				// ends the chain.
				[]rustArmFrame{fpFrame(0x1fe0fe10, sp1, fp1|0xa310_0000_0000_0000, ra1, 4)}, ""}
		}},
		{"test_frame_pointer_overflow", 0xffffffffffffffff - 1000, func(st *synth.Stack) result {
			st.Zeros(1000)
			return result{0x00007400c0000200, st.Start(), 0x00007500b0000110, 0xffffffffffffffff, nil, nil, nil, ""}
		}},
		{"test_frame_pointer_barely_no_overflow", 0xffffffffffffffff - 24, func(st *synth.Stack) result {
			const ra = 0x00007500b0000110
			fp0 := st.U64(0)
			st.U64(ra)
			fp1 := st.U64(0)
			rustArmPatch64(st, fp0, fp1)
			// rust-minidump's highest_module fixture: a module so high that
			// no pointer-authentication bits are stripped.
			mods := append(rustArmModules("", ""), rustArmModule{"highest-module", 0xa000_0000_0000_0000, 0x10000, ""})
			return result{0x00007400c0000200, st.Start(), ra, fp0, mods,
				[]rustArmFrame{fpFrame(ra, fp1, fp1, 0, 3)},
				[]rustArmFrame{fpFrame(ra, fp1, fp1, ra, 4)}, ""}
		}},
		{"test_frame_pointer_infinite_equality", 0x80000000, func(st *synth.Stack) result {
			fp0 := record(st, ra1)
			sp1 := st.Here()
			fp1 := record(st, ra2)
			sp2 := st.Here()
			fp2 := record(st, 0)
			rustArmPatch64(st, fp0, fp0) // the record points at itself
			rustArmPatch64(st, fp1, fp2)
			return result{0x40005510, st.Start(), 0x1fe0fe10, fp0, nil,
				[]rustArmFrame{fpFrame(ra1, sp1, fp0, 0, 4)},
				// lr first; then the frame pointer (fp0) is below the
				// stack pointer (fp0+16): junk, left to scanning, which
				// finds ra2 (rust-minidump: "never get to frame 2, alas").
				[]rustArmFrame{fpFrame(0x1fe0fe10, sp1, fp0, ra1, 4), {pc: ra2, sp: sp2, trust: unwind.TrustScan, valid: 2}},
				"a frame pointer below the stack pointer is junk (docs/stackwalk.md): Breakpad follows it and ends the walk"}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := synth.NewStack(c.start, 8)
			r := c.build(st)
			callers := r.rust
			if r.ours != nil {
				callers = r.ours
			}
			mods := r.mods
			if mods == nil {
				mods = rustArmModules("", "")
			}
			rustARM64Walk(t, rustARM64Context(r.pc, r.sp, r.lr, r.fp), st, mods, callers, r.notBreakpad)
		})
	}
}
