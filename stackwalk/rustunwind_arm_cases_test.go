package stackwalk_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/arm"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// This file holds rust-minidump's arm unwinder unit tests
// (minidump-unwind/src/arm_unittest.rs, themselves mostly Breakpad's
// stackwalker_arm_unittest.cc) as dumps made with minidump/synth, and the
// helpers the arm, arm64 and MIPS translations share (rustArm*, named for
// the first file that needed them). Where ours differs from rust-minidump
// on purpose, the case says so and docs/compat.md's rust-minidump rows
// (R3, R7, R10-R15) give the reason once.

// rustArmFrame is one expected frame of a translated case: pc, sp and
// trust, and optionally more registers (slot → value) and the number of
// registers known (valid; 0: not checked).
type rustArmFrame struct {
	pc, sp uint64
	trust  unwind.Trust
	regs   map[int]uint64
	valid  int
}

// rustArmModule is one module of a translated case: rust-minidump's
// fixtures name them module1, module2, ...; syms is its symbol file
// without the MODULE line (empty: no symbol file).
type rustArmModule struct {
	name       string
	base, size uint64
	syms       string
}

// rustArmModules are rust-minidump's two modules of every fixture.
func rustArmModules(syms1, syms2 string) []rustArmModule {
	return []rustArmModule{{"module1", 0x40000000, 0x10000, syms1}, {"module2", 0x50000000, 0x10000, syms2}}
}

// rustArmWalk makes the dump of one translated case (one thread, its
// context ctx and stack st, the modules mods: ELF modules, or PDB ones on
// Windows), stores each module's symbols where breakpad.Dirs finds them,
// and walks it. With $GOBREAKPAD_BREAKPAD_STACKWALK set (Google Breakpad's
// minidump_stackwalk, tools/breakpad/build.sh), Breakpad walks the same
// dump and symbols and its frames must be ours, line for line: what pins
// a case where ours differs from rust-minidump as Breakpad's behaviour;
// unless notBreakpad says why ours differs from Breakpad's too (then they
// must differ).
func rustArmWalk(t *testing.T, cpu arch.CPU, platform minidump.PlatformID, ctx *minidump.Context, st *synth.Stack, mods []rustArmModule, notBreakpad string) *stackwalk.ProcessState {
	t.Helper()
	b := synth.New(cpu, platform)
	b.AddThread(1, ctx, st)
	for i, m := range mods {
		if platform == minidump.PlatformWin32NT {
			b.AddPDBModule(m.name, m.base, uint32(m.size), minidump.GUID{Data1: uint32(i + 1)}, 1, m.name+".pdb")
		} else {
			b.AddELFModule(m.name, m.base, uint32(m.size), []byte{byte(i + 1), 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
		}
	}
	b.SetException(1, 11, 0, ctx)
	f, err := b.File()
	if err != nil {
		t.Fatal(err)
	}
	list, err := f.ModuleList()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for i, m := range mods {
		if m.syms == "" {
			continue
		}
		dm := &list[i]
		storeSymText(t, root, dm, fmt.Sprintf("MODULE Linux %s %s %s\n%s", cpu, dm.DebugIdentifier(), dm.DebugFile(), m.syms))
	}
	dirs := symbreakpad.NewDirs(root)
	t.Cleanup(func() { dirs.Close() })
	p := processFile(t, f, stackwalk.Options{Symbols: dirs})
	if bin := os.Getenv(breakpadStackwalkEnv); bin != "" {
		dump := filepath.Join(t.TempDir(), "case.dmp")
		if err := b.WriteFile(dump); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, dump, root).Output()
		if err != nil {
			t.Fatalf("%s %s %s: %v", bin, dump, root, err)
		}
		var ours bytes.Buffer
		if err := stackwalk.Print(&ours, p, stackwalk.PrintOptions{}); err != nil {
			t.Fatal(err)
		}
		bp, us := rustArmThread0(out), rustArmThread0(ours.Bytes())
		if bp == "" {
			t.Fatalf("Breakpad's report has no thread 0:\n%s", out)
		}
		if bp != us && notBreakpad == "" {
			t.Errorf("Breakpad's frames:\n%s\nours:\n%s", bp, us)
		}
		if bp == us && notBreakpad != "" {
			t.Errorf("Breakpad's frames are ours now, where the case says %q", notBreakpad)
		}
	}
	return p
}

// rustArmThread0 returns the frames of thread 0 of a minidump_stackwalk
// report: the lines after "Thread 0" up to the next blank line.
func rustArmThread0(out []byte) string {
	s := string(out)
	i := strings.Index(s, "\nThread 0")
	if i < 0 {
		return ""
	}
	s = s[i+1:]
	if j := strings.Index(s, "\n\n"); j >= 0 {
		s = s[:j]
	}
	return s
}

// rustArmCheck compares the requesting thread's frames with want (frame 0
// included: the context frame).
func rustArmCheck(t *testing.T, p *stackwalk.ProcessState, want []rustArmFrame, pcSlot, spSlot int) {
	t.Helper()
	for _, d := range rustArmDiff(p, want, pcSlot, spSlot) {
		t.Error(d)
	}
	if t.Failed() {
		t.Logf("frames: %v", frames(t, p))
	}
}

// rustArmCheckDiffers checks the frames with ours, and that they are not
// rust's (rust-minidump's expectations, for a case where the table says
// ours differ).
func rustArmCheckDiffers(t *testing.T, p *stackwalk.ProcessState, ours, rust []rustArmFrame, pcSlot, spSlot int) {
	t.Helper()
	rustArmCheck(t, p, ours, pcSlot, spSlot)
	if len(rustArmDiff(p, rust, pcSlot, spSlot)) == 0 {
		t.Errorf("the frames are rust-minidump's now: drop the difference from the case and docs/compat.md")
	}
}

// rustArmInstruction is how far below a caller's pc its instruction is
// (what lookups and --json's offset take), by CPU: rust-minidump's and
// Breakpad's pc - 2 on arm and pc - 4 on arm64; on MIPS Breakpad's
// caller pc is already two instructions before the return address and is
// the instruction (rust-minidump: pc the return address, instruction 8
// below it: R15).
var rustArmInstruction = map[string]uint64{"arm": 2, "arm64": 4, "mips": 0, "mips64": 0}

// rustArmDiff lists how the requesting thread's frames differ from want.
func rustArmDiff(p *stackwalk.ProcessState, want []rustArmFrame, pcSlot, spSlot int) []string {
	var d []string
	adjust, ok := rustArmInstruction[p.System.CPU]
	if !ok {
		d = append(d, fmt.Sprintf("CPU %q: no instruction adjustment known", p.System.CPU))
	}
	fr := p.Threads[p.RequestingThread].Frames
	if len(fr) != len(want) {
		d = append(d, fmt.Sprintf("%d frames, want %d", len(fr), len(want)))
	}
	for i := 0; i < len(fr) && i < len(want); i++ {
		w, f := want[i], fr[i]
		c := f.Context()
		if f.Trust != w.trust || c.Regs[pcSlot] != w.pc || c.Regs[spSlot] != w.sp {
			d = append(d, fmt.Sprintf("frame %d: trust %v pc %#x sp %#x; want %v %#x %#x", i, f.Trust, c.Regs[pcSlot], c.Regs[spSlot], w.trust, w.pc, w.sp))
		}
		for r, v := range w.regs {
			if !c.Has(r) || c.Regs[r] != v {
				d = append(d, fmt.Sprintf("frame %d: register %d = %#x (known %v), want %#x", i, r, c.Regs[r], c.Has(r), v))
			}
		}
		if i > 0 && f.Instruction != c.Regs[pcSlot]-adjust {
			d = append(d, fmt.Sprintf("frame %d: instruction %#x, want pc - %d", i, f.Instruction, adjust))
		}
		if n := bits.OnesCount64(c.Valid); w.valid != 0 && n != w.valid {
			d = append(d, fmt.Sprintf("frame %d: %d registers known, want %d", i, n, w.valid))
		}
	}
	return d
}

// rustArmFPFrame returns a maker of the frames a frame-pointer step
// finds in the frame-pointer tests, for a CPU whose frame pointer and lr
// are in slots fpSlot and lrSlot: pc, sp and fp, lr too when valid is 4.
func rustArmFPFrame(fpSlot, lrSlot int) func(pc, sp, fp, lr uint64, valid int) rustArmFrame {
	return func(pc, sp, fp, lr uint64, valid int) rustArmFrame {
		regs := map[int]uint64{fpSlot: fp}
		if valid == 4 {
			regs[lrSlot] = lr
		}
		return rustArmFrame{pc: pc, sp: sp, trust: unwind.TrustFP, regs: regs, valid: valid}
	}
}

// rustArmFrameRecord returns what the frame-pointer tests call record,
// for a stack of word-byte words: it appends 8 words of zeros, two junk
// words (0xd, 0xf0000000) and a frame record {fp, lr} (fp patched later),
// returning the record's address.
func rustArmFrameRecord(word int) func(st *synth.Stack, lr uint64) uint64 {
	return func(st *synth.Stack, lr uint64) uint64 {
		st.Zeros(8 * word)
		st.Ptr(0xd)
		st.Ptr(0xf0000000)
		a := st.Ptr(0)
		st.Ptr(lr)
		return a
	}
}

// rustArmPatch32 overwrites the 32-bit word at addr of st (a label of
// rust-minidump's test_assembler resolved after the words that use it).
func rustArmPatch32(st *synth.Stack, addr uint64, v uint32) {
	binary.LittleEndian.PutUint32(st.Bytes()[addr-st.Start():], v)
}

// rustArmPatch64 is rustArmPatch32 for a 64-bit word.
func rustArmPatch64(st *synth.Stack, addr, v uint64) {
	binary.LittleEndian.PutUint64(st.Bytes()[addr-st.Start():], v)
}

// rustARMContext is the context of rust-minidump's arm fixture: all zeros
// but pc, sp, lr and the frame pointer its tests call "fp" (r11 in
// rust-minidump on every system; here the system's frame pointer: r7 on
// iOS, as Apple's ABI and Breakpad have it, r11 elsewhere: R10).
func rustARMContext(platform minidump.PlatformID, pc, sp, lr, fp uint32) *arm.Context {
	c := &arm.Context{ContextFlags: arm.ContextFull}
	c.Iregs[arm.RegPC], c.Iregs[arm.RegSP], c.Iregs[arm.RegLR] = pc, sp, lr
	if platform == minidump.PlatformIOS {
		c.Iregs[arm.RegIOSFP] = fp
	} else {
		c.Iregs[arm.RegFP] = fp
	}
	return c
}

// TestRustARMScan holds rust-minidump's arm test_simple,
// test_scan_without_symbols, test_scan_first_frame and test_invalid_lr:
// modules without symbols, callers found by scanning (iOS, but
// test_invalid_lr on Linux, where lr and the frame pointer are not
// followed).
func TestRustARMScan(t *testing.T) {
	const sp = 0x80000000
	const ra1, ra2 = 0x50000100, 0x50000900
	for _, c := range []struct {
		name     string
		platform minidump.PlatformID
		stack    func(st *synth.Stack) (lr, fp uint32, want []rustArmFrame)
	}{
		{"test_simple", minidump.PlatformIOS, func(st *synth.Stack) (uint32, uint32, []rustArmFrame) {
			return 0, 0x80000000, nil
		}},
		{"test_scan_without_symbols", minidump.PlatformIOS, func(st *synth.Stack) (uint32, uint32, []rustArmFrame) {
			st.Zeros(16)
			st.U32(0x40090000)
			st.U32(0x60000000)
			st.U32(ra1)
			sp1 := st.Here()
			st.Zeros(16)
			st.U32(0xf0000000)
			st.U32(0xd)
			st.U32(ra2)
			sp2 := st.Here()
			st.Zeros(32)
			return 0, 1, []rustArmFrame{{pc: ra1, sp: sp1, trust: unwind.TrustScan, valid: 2}, {pc: ra2, sp: sp2, trust: unwind.TrustScan, valid: 2}}
		}},
		{"test_scan_first_frame", minidump.PlatformIOS, func(st *synth.Stack) (uint32, uint32, []rustArmFrame) {
			st.Zeros(16)
			st.U32(0x40090000)
			st.U32(0x60000000)
			st.Zeros(96)
			st.U32(ra1)
			sp1 := st.Here()
			st.Zeros(32)
			st.U32(0xf0000000)
			st.U32(0xd)
			st.Zeros(336)
			st.U32(ra2) // beyond a later frame's scan
			st.Zeros(64)
			return 0, 1, []rustArmFrame{{pc: ra1, sp: sp1, trust: unwind.TrustScan, valid: 2}}
		}},
		{"test_invalid_lr", minidump.PlatformLinux, func(st *synth.Stack) (uint32, uint32, []rustArmFrame) {
			st.Zeros(32)
			lr := st.U32(0xd) // lr points into the stack
			st.U32(0xf0000000)
			fp1 := st.U32(0) // frame2_fp, below
			st.U32(ra1)
			sp1 := st.Here()
			st.Zeros(32)
			st.U32(0xd)
			st.U32(0xf0000000)
			fp2 := st.U32(0)
			st.U32(ra2)
			sp2 := st.Here()
			rustArmPatch32(st, fp1, uint32(fp2))
			return uint32(lr), uint32(fp1), []rustArmFrame{{pc: ra1, sp: sp1, trust: unwind.TrustScan, valid: 2}, {pc: ra2, sp: sp2, trust: unwind.TrustScan, valid: 2}}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := synth.NewStack(sp, 4)
			lr, fp, callers := c.stack(st)
			pc := uint32(0x40005510)
			if c.name == "test_simple" {
				pc = 0x4000c020
			}
			ctx := synth.ARM(rustARMContext(c.platform, pc, sp, lr, fp))
			p := rustArmWalk(t, arch.ARM, c.platform, ctx, st, rustArmModules("", ""), "")
			want := append([]rustArmFrame{{pc: uint64(pc), sp: sp, trust: unwind.TrustContext}}, callers...)
			rustArmCheck(t, p, want, arm.SlotPC, arm.SlotSP)
			if m := p.Threads[p.RequestingThread].Frames[0].Module; m == nil || m.CodeFile != "module1" {
				t.Errorf("frame 0's module %v, want module1", m)
			}
		})
	}
}

// TestRustARMFramePointer holds rust-minidump's arm frame-pointer tests
// (iOS): test_frame_pointer, test_frame_pointer_stackless_leaf,
// test_frame_pointer_stackful_leaf, test_frame_pointer_infinite_equality,
// test_frame_pointer_overflow, ..._overflow_nonsense_32bit_stack and
// ..._barely_no_overflow. Each case has rust-minidump's frames (rust) and,
// where ours differ, ours (Breakpad's: the caller's pc is the callee's lr
// and its lr the record's saved one, R11).
func TestRustARMFramePointer(t *testing.T) {
	const ra1, ra2 = 0x50000100, 0x50000900
	const pc0, wildPC, wildRA = 0x40005510, 0x7a100000, 0x7b302000
	type result struct {
		pc, lr, fp uint32
		rust, ours []rustArmFrame // callers; ours nil: rust's
	}
	fpFrame, record := rustArmFPFrame(arm.RegIOSFP, arm.SlotLR), rustArmFrameRecord(4)
	for _, c := range []struct {
		name  string
		start uint64
		build func(st *synth.Stack) result
	}{
		{"test_frame_pointer", 0x80000000, func(st *synth.Stack) result {
			fp0 := record(st, ra1)
			sp1 := st.Here()
			fp1 := record(st, ra2)
			sp2 := st.Here()
			fp2 := record(st, 0)
			rustArmPatch32(st, fp0, uint32(fp1))
			rustArmPatch32(st, fp1, uint32(fp2))
			return result{pc0, ra1, uint32(fp0),
				[]rustArmFrame{fpFrame(ra1, sp1, fp1, 0, 3), fpFrame(ra2, sp2, fp2, 0, 3)},
				// lr (ra1) is frame 0's return address and its record's
				// saved lr too: ra1 twice, each frame's sp and fp one
				// record on from rust-minidump's.
				[]rustArmFrame{fpFrame(ra1, sp1, fp1, ra1, 4), fpFrame(ra1, sp2, fp2, ra2, 4), fpFrame(ra2, fp2+8, 0, 0, 4)}}
		}},
		{"test_frame_pointer_stackless_leaf", 0x80000000, func(st *synth.Stack) result {
			fp1 := record(st, ra2)
			sp2 := st.Here()
			fp2 := record(st, 0)
			rustArmPatch32(st, fp1, uint32(fp2))
			return result{pc0, ra1, uint32(fp1),
				// rust-minidump loses ra1 ("this test breaking might
				// mean you've made things work better").
				[]rustArmFrame{fpFrame(ra2, sp2, fp2, 0, 3)},
				[]rustArmFrame{fpFrame(ra1, sp2, fp2, ra2, 4), fpFrame(ra2, fp2+8, 0, 0, 4)}}
		}},
		{"test_frame_pointer_stackful_leaf", 0x80000000, func(st *synth.Stack) result {
			st.Zeros(64)
			st.U64(0xd)
			st.U64(0xf0000000)
			fp1 := record(st, ra2)
			sp2 := st.Here()
			fp2 := record(st, 0)
			rustArmPatch32(st, fp1, uint32(fp2))
			return result{pc0, ra1, uint32(fp1),
				[]rustArmFrame{fpFrame(ra2, sp2, fp2, 0, 3)},
				[]rustArmFrame{fpFrame(ra1, sp2, fp2, ra2, 4), fpFrame(ra2, fp2+8, 0, 0, 4)}}
		}},
		{"test_frame_pointer_infinite_equality", 0x80000000, func(st *synth.Stack) result {
			fp0 := record(st, ra1)
			sp1 := st.Here()
			fp1 := record(st, ra2)
			fp2 := record(st, 0)
			rustArmPatch32(st, fp0, uint32(fp0)) // the record points at itself
			rustArmPatch32(st, fp1, uint32(fp2))
			return result{pc0, ra1, uint32(fp0),
				[]rustArmFrame{fpFrame(ra1, sp1, fp0, 0, 3)},
				[]rustArmFrame{fpFrame(ra1, sp1, fp0, ra1, 4)}}
		}},
		{"test_frame_pointer_overflow", 0xffffffff - 1000, func(st *synth.Stack) result {
			st.Zeros(1000)
			return result{wildPC, wildRA, 0xffffffff, nil, nil}
		}},
		{"test_frame_pointer_overflow_nonsense_32bit_stack", 0xffffffff + 8 - 1000, func(st *synth.Stack) result {
			st.Zeros(1000) // past 4 GiB: 32-bit pointer arithmetic must wrap
			return result{wildPC, wildRA, 0xffffffff - 4, nil, nil}
		}},
		{"test_frame_pointer_barely_no_overflow", 0xffffffff - 12, func(st *synth.Stack) result {
			fp0 := st.U32(0)
			st.U32(wildRA)
			fp1 := st.U32(0)
			rustArmPatch32(st, fp0, uint32(fp1))
			return result{wildPC, wildRA, uint32(fp0),
				[]rustArmFrame{fpFrame(wildRA, fp1, fp1, 0, 3)},
				[]rustArmFrame{fpFrame(wildRA, fp1, fp1, wildRA, 4)}}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := synth.NewStack(c.start, 4)
			r := c.build(st)
			ctx := synth.ARM(rustARMContext(minidump.PlatformIOS, r.pc, uint32(c.start), r.lr, r.fp))
			p := rustArmWalk(t, arch.ARM, minidump.PlatformIOS, ctx, st, rustArmModules("", ""), "")
			frame0 := rustArmFrame{pc: uint64(r.pc), sp: c.start, trust: unwind.TrustContext}
			rust := append([]rustArmFrame{frame0}, r.rust...)
			if r.ours == nil {
				rustArmCheck(t, p, rust, arm.SlotPC, arm.SlotSP)
			} else {
				rustArmCheckDiffers(t, p, append([]rustArmFrame{frame0}, r.ours...), rust, arm.SlotPC, arm.SlotSP)
			}
		})
	}
}

// rustARMCFISyms is module1's symbol file of rust-minidump's arm CFI tests
// (arm_unittest.rs init_cfi_state; Breakpad's stackwalker_arm_unittest.cc
// CFI fixture): enchiridion at 0x4000 pushes r4, fp and lr, keeps r4-r7 in
// r0-r3, saves r1, moves the CFA and restores sp explicitly, then recovers
// pc from its own slot; epictetus at 0x5000 ends the stack; palinal's CFA
// goes backwards; rhetorical's rules cannot be evaluated.
const rustARMCFISyms = `FUNC 4000 1000 10 enchiridion
STACK CFI INIT 4000 100 .cfa: sp .ra: lr
STACK CFI 4001 .cfa: sp 12 + r4: .cfa 12 - ^ r11: .cfa 8 - ^ .ra: .cfa 4 - ^
STACK CFI 4002 r4: r0 r5: r1 r6: r2 r7: r3
STACK CFI 4003 .cfa: sp 16 + r1: .cfa 16 - ^ r4: r4 r5: r5 r6: r6 r7: r7
STACK CFI 4005 .cfa: sp 12 + r1: .cfa 12 - ^ r11: .cfa 4 - ^ .ra: .cfa ^ sp: .cfa 4 +
STACK CFI 4006 .cfa: sp 16 + pc: .cfa 16 - ^
FUNC 5000 1000 10 epictetus
STACK CFI INIT 5000 1000 .cfa: 0 .ra: 0
FUNC 6000 1000 20 palinal
STACK CFI INIT 6000 1000 .cfa: sp 4 - .ra: lr
FUNC 7000 1000 20 rhetorical
STACK CFI INIT 7000 1000 .cfa: moot .ra: ambiguous
`

// TestRustARMCFI holds rust-minidump's arm test_cfi_at_4000 ... 4006 (the
// caller, found by CFI, is 0x40005510 with the fixture's callee-saved
// registers r4-r10 and fp, and r1 where the rules save it; 10 or 11
// registers known), test_cfi_reject_backwards and
// test_cfi_reject_bad_exprs (no caller). rust-minidump's fixture is iOS,
// whose CFI Breakpad and ours do not use (R12): the cases run on Linux,
// and test_cfi_at_4001 once more on iOS, where the caller is found by
// scanning.
func TestRustARMCFI(t *testing.T) {
	const sp = 0x80000000
	fixture := map[int]uint32{4: 0xb5d55e68, 5: 0xebd134f3, 6: 0xa31e74bc, 7: 0x2dcb16b3, 8: 0x2ada2137,
		9: 0xbbbb557d, 10: 0x48bf8ca7, arm.RegFP: 0x8112e110}
	for _, c := range []struct {
		name     string
		platform minidump.PlatformID
		pc, lr   uint32
		stack    []uint32
		regs     map[int]uint32 // the context's, over the fixture's
		r1       uint32         // the caller's r1, when the rules save it
		none     bool           // no caller
		ios      bool           // found by scanning: iOS
	}{
		{name: "test_cfi_at_4000", pc: 0x40004000, lr: 0x40005510},
		{name: "test_cfi_at_4001", pc: 0x40004001, stack: []uint32{0xb5d55e68, 0x8112e110, 0x40005510},
			regs: map[int]uint32{4: 0x635adc9f, arm.RegFP: 0xbe145fc4}},
		{name: "test_cfi_at_4002", pc: 0x40004002, stack: []uint32{0xfb81ff3d, 0x8112e110, 0x40005510},
			regs: map[int]uint32{0: 0xb5d55e68, 1: 0xebd134f3, 2: 0xa31e74bc, 3: 0x2dcb16b3, 4: 0xfdd35466,
				5: 0xf18c946c, 6: 0xac2079e8, 7: 0xa449829f, arm.RegFP: 0xbe145fc4}},
		{name: "test_cfi_at_4003", pc: 0x40004003, stack: []uint32{0x48c8dd5a, 0xcb78040e, 0x8112e110, 0x40005510},
			regs: map[int]uint32{1: 0xfb756319}, r1: 0x48c8dd5a},
		{name: "test_cfi_at_4004", pc: 0x40004004, stack: []uint32{0x48c8dd5a, 0xcb78040e, 0x8112e110, 0x40005510},
			regs: map[int]uint32{1: 0xfb756319}, r1: 0x48c8dd5a},
		{name: "test_cfi_at_4005", pc: 0x40004005, stack: []uint32{0x48c8dd5a, 0xf013f841, 0x8112e110, 0x40005510},
			regs: map[int]uint32{1: 0xfb756319}, r1: 0x48c8dd5a},
		{name: "test_cfi_at_4006", pc: 0x40004006, stack: []uint32{0x40005510, 0x48c8dd5a, 0xf013f841, 0x8112e110, 0xf8d15783},
			regs: map[int]uint32{1: 0xfb756319}, r1: 0x48c8dd5a},
		{name: "test_cfi_reject_backwards", pc: 0x40006000, lr: 0x40005510, none: true},
		{name: "test_cfi_reject_bad_exprs", pc: 0x40007000, none: true},
		{name: "test_cfi_at_4001 on iOS", platform: minidump.PlatformIOS, pc: 0x40004001, stack: []uint32{0xb5d55e68, 0x8112e110, 0x40005510},
			regs: map[int]uint32{4: 0x635adc9f, arm.RegFP: 0xbe145fc4}, ios: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			platform := c.platform
			if platform == 0 {
				platform = minidump.PlatformLinux
			}
			ctx := &arm.Context{ContextFlags: arm.ContextFull}
			ctx.Iregs[arm.RegPC], ctx.Iregs[arm.RegSP], ctx.Iregs[arm.RegLR] = c.pc, sp, c.lr
			for r, v := range fixture {
				ctx.Iregs[r] = v
			}
			for r, v := range c.regs {
				ctx.Iregs[r] = v
			}
			st := synth.NewStack(sp, 4)
			for _, w := range c.stack {
				st.U32(w)
			}
			callerSP := st.Here()
			st.Zeros(120)
			p := rustArmWalk(t, arch.ARM, platform, synth.ARM(ctx), st, rustArmModules(rustARMCFISyms, ""), "")
			want := []rustArmFrame{{pc: uint64(c.pc), sp: sp, trust: unwind.TrustContext}}
			switch {
			case c.none:
			case c.ios:
				// rust-minidump: the caller by CFI, as on Linux.
				want = append(want, rustArmFrame{pc: 0x40005510, sp: callerSP, trust: unwind.TrustScan, valid: 2})
			default:
				regs := map[int]uint64{}
				for r, v := range fixture {
					if r == arm.RegFP {
						r = arm.SlotFP
					}
					regs[r] = uint64(v)
				}
				valid := 10
				if c.r1 != 0 {
					regs[1] = uint64(c.r1)
					valid++
				}
				want = append(want, rustArmFrame{pc: 0x40005510, sp: callerSP, trust: unwind.TrustCFI, regs: regs, valid: valid})
			}
			rustArmCheck(t, p, want, arm.SlotPC, arm.SlotSP)
		})
	}
}
