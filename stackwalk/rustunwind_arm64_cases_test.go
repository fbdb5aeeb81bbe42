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
// and checks its frames: the context frame (pc, sp) then callers, and,
// when rust (rust-minidump's callers) is not nil, that they differ from
// those.
func rustARM64Walk(t *testing.T, ctx *arm64.Context, st *synth.Stack, mods []rustArmModule, callers, rust []rustArmFrame, notBreakpad string) {
	t.Helper()
	p := rustArmWalk(t, arch.ARM64, minidump.PlatformWin32NT, synth.ARM64(ctx), st, mods, notBreakpad)
	frame0 := rustArmFrame{pc: ctx.Iregs[arm64.RegPC], sp: ctx.Iregs[arm64.RegSP], trust: unwind.TrustContext}
	want := append([]rustArmFrame{frame0}, callers...)
	if rust == nil {
		rustArmCheck(t, p, want, arm64.RegPC, arm64.RegSP)
	} else {
		rustArmCheckDiffers(t, p, want, append([]rustArmFrame{frame0}, rust...), arm64.RegPC, arm64.RegSP)
	}
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
				var rust []rustArmFrame
				if v.name == "zeroed" && callers != nil {
					callers, rust = nil, callers
				}
				rustARM64Walk(t, rustARM64Context(c.pc, sp, v.lr, fp), st, c.mods, callers, rust, "")
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
	fpFrame, record := rustArmFPFrame(arm64.RegFP, arm64.RegLR), rustArmFrameRecord(8)
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
			callers, rust := r.rust, []rustArmFrame(nil)
			if r.ours != nil {
				callers, rust = r.ours, r.rust
			}
			mods := r.mods
			if mods == nil {
				mods = rustArmModules("", "")
			}
			rustARM64Walk(t, rustARM64Context(r.pc, r.sp, r.lr, r.fp), st, mods, callers, rust, r.notBreakpad)
		})
	}
}

// rustARM64CFISyms is module1's symbol file of rust-minidump's arm64 CFI
// tests (arm64_unittest.rs init_cfi_state_common; Breakpad's
// stackwalker_arm64_unittest.cc CFI fixture): enchiridion at 0x4000 pushes
// x19, x20, fp and lr, keeps x19-x22 in x0-x3, saves x1, moves the CFA and
// restores sp explicitly, then recovers pc from its own slot; epictetus at
// 0x5000 ends the stack; palinal's CFA goes backwards; rhetorical's rules
// cannot be evaluated.
const rustARM64CFISyms = `FUNC 4000 1000 10 enchiridion
STACK CFI INIT 4000 100 .cfa: sp 0 + .ra: x30
STACK CFI 4001 .cfa: sp 32 + .ra: .cfa -8 + ^ x19: .cfa -32 + ^ x20: .cfa -24 + ^  x29: .cfa -16 + ^
STACK CFI 4002 x19: x0 x20: x1 x21: x2 x22: x3
STACK CFI 4003 .cfa: sp 40 + x1: .cfa 40 - ^ x19: x19 x20: x20 x21: x21 x22: x22
STACK CFI 4005 .cfa: sp 32 + x1: .cfa 32 - ^ x29: .cfa 8 - ^ .ra: .cfa ^ sp: .cfa 8 +
STACK CFI 4006 .cfa: sp 40 + pc: .cfa 40 - ^
FUNC 5000 1000 10 epictetus
STACK CFI INIT 5000 1000 .cfa: 0 .ra: 0
FUNC 6000 1000 20 palinal
STACK CFI INIT 6000 1000 .cfa: sp 8 - .ra: x30
FUNC 7000 1000 20 rhetorical
STACK CFI INIT 7000 1000 .cfa: moot .ra: ambiguous
`

// TestRustARM64CFI holds rust-minidump's arm64 test_cfi_at_4000 ... 4006,
// test_cfi_at_4005_ptr_auth_strip_apple and ..._high (the caller, found by
// CFI, is 0x40005510 with the fixture's callee-saved registers x19-x28 and
// fp, and x1 where the rules save it: 13 or 14 registers known),
// test_cfi_reject_backwards and test_cfi_reject_bad_exprs (no caller).
func TestRustARM64CFI(t *testing.T) {
	const sp = 0x80000000
	const fp0, ra = 0x0000_00a2_8112_e110, 0x40005510
	fixture := map[int]uint64{19: 0x5e68b5d5b5d55e68, 20: 0x34f3ebd1ebd134f3, 21: 0x74bca31ea31e74bc,
		22: 0x16b32dcb2dcb16b3, 23: 0x21372ada2ada2137, 24: 0x557dbbbbbbbb557d, 25: 0x8ca748bf48bf8ca7,
		26: 0x21f0ab46ab4621f0, 27: 0x146732b732b71467, 28: 0xa673645fa673645f, arm64.RegFP: fp0}
	const calleeFP = 0x5fc4be14be145fc4
	saved := []uint64{0xdd5a48c848c8dd5a, 0xff3dfb81fb81ff3d, 0x34f3ebd1ebd134f3, fp0, ra} // x1, x19, x20, fp, lr
	for _, c := range []struct {
		name   string
		pc, lr uint64
		stack  []uint64
		regs   map[int]uint64 // the context's, over the fixture's
		x1     uint64         // the caller's x1, when the rules save it
		high   bool           // rust-minidump's high_module fixture
		rust   map[int]uint64 // rust-minidump's caller pc and fp, when not ra and the fixture's
		ours   map[int]uint64 // ours, when not rust-minidump's
		none   bool           // no caller
	}{
		{name: "test_cfi_at_4000", pc: 0x40004000, lr: ra},
		{name: "test_cfi_at_4001", pc: 0x40004001, stack: []uint64{0x5e68b5d5b5d55e68, 0x34f3ebd1ebd134f3, fp0, ra},
			regs: map[int]uint64{19: 0xadc9f635a635adc9, 20: 0x623135ac35ac6231, arm64.RegFP: calleeFP}},
		{name: "test_cfi_at_4002", pc: 0x40004002, stack: []uint64{0xff3dfb81fb81ff3d, 0x34f3ebd1ebd134f3, fp0, ra},
			regs: map[int]uint64{0: 0x5e68b5d5b5d55e68, 1: 0x34f3ebd1ebd134f3, 2: 0x74bca31ea31e74bc, 3: 0x16b32dcb2dcb16b3,
				19: 0xadc9f635a635adc9, 20: 0x623135ac35ac6231, 21: 0xac4543564356ac45, 22: 0x2561562f562f2561, arm64.RegFP: calleeFP}},
		{name: "test_cfi_at_4003", pc: 0x40004003, stack: saved,
			regs: map[int]uint64{1: 0xfb756319fb756319, arm64.RegFP: calleeFP}, x1: saved[0]},
		{name: "test_cfi_at_4004", pc: 0x40004004, stack: saved,
			regs: map[int]uint64{1: 0xfb756319fb756319, arm64.RegFP: calleeFP}, x1: saved[0]},
		{name: "test_cfi_at_4005", pc: 0x40004005, stack: saved, regs: map[int]uint64{1: 0xfb756319fb756319}, x1: saved[0]},
		{name: "test_cfi_at_4005_ptr_auth_strip_apple", pc: 0x40004005,
			stack: []uint64{saved[0], saved[1], saved[2], 0xae23_80a2_8112_e110, 0xae1d_0000_4000_5510},
			regs:  map[int]uint64{1: 0xfb756319fb756319}, x1: saved[0],
			// Only return addresses are signed: fp keeps its bits (R14).
			ours: map[int]uint64{arm64.RegFP: 0xae23_80a2_8112_e110}},
		{name: "test_cfi_at_4005_ptr_auth_strip_high", pc: 0x40004005, high: true,
			stack: []uint64{saved[0], saved[1], saved[2], 0x1003_45a2_8112_e110, 0x100d_f700_4000_5510},
			regs:  map[int]uint64{1: 0xfb756319fb756319}, x1: saved[0],
			rust: map[int]uint64{arm64.RegPC: 0x000d_f700_4000_5510, arm64.RegFP: 0x0003_45a2_8112_e110},
			// The stripped pc is in no module, so it keeps its bits; fp
			// is not stripped (R14).
			ours: map[int]uint64{arm64.RegPC: 0x100d_f700_4000_5510, arm64.RegFP: 0x1003_45a2_8112_e110}},
		{name: "test_cfi_at_4006", pc: 0x40004006, stack: []uint64{ra, saved[0], saved[1], saved[2], fp0, 0xf8d157835783f8d1},
			regs: map[int]uint64{1: 0xfb756319fb756319}, x1: saved[0]},
		{name: "test_cfi_reject_backwards", pc: 0x40006000, lr: ra, none: true},
		{name: "test_cfi_reject_bad_exprs", pc: 0x40007000, none: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := rustARM64Context(c.pc, sp, c.lr, 0)
			for r, v := range fixture {
				ctx.Iregs[r] = v
			}
			for r, v := range c.regs {
				ctx.Iregs[r] = v
			}
			st := synth.NewStack(sp, 8)
			for _, w := range c.stack {
				st.U64(w)
			}
			callerSP := st.Here()
			st.Zeros(120)
			mods := rustArmModules(rustARM64CFISyms, "")
			if c.high {
				mods = append(mods, rustArmModule{"high-module", 0x10000000000000, 0x10000, ""})
			}
			// caller is the frame CFI gives with the fixture's registers
			// and those of the maps.
			caller := func(maps ...map[int]uint64) []rustArmFrame {
				regs := map[int]uint64{}
				for r, v := range fixture {
					regs[r] = v
				}
				valid := 13
				if c.x1 != 0 {
					regs[1] = c.x1
					valid++
				}
				pc := uint64(ra)
				for _, m := range maps {
					for r, v := range m {
						if r == arm64.RegPC {
							pc = v
						} else {
							regs[r] = v
						}
					}
				}
				return []rustArmFrame{{pc: pc, sp: callerSP, trust: unwind.TrustCFI, regs: regs, valid: valid}}
			}
			switch {
			case c.none:
				rustARM64Walk(t, ctx, st, mods, nil, nil, "")
			case c.ours != nil:
				rustARM64Walk(t, ctx, st, mods, caller(c.rust, c.ours), caller(c.rust), "")
			default:
				rustARM64Walk(t, ctx, st, mods, caller(c.rust), nil, "")
			}
		})
	}
}
