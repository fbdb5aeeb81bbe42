package stackwalk_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// rustX86CFISyms is the symbol file of rust-minidump's x86 CFI unit tests
// (minidump-unwind/src/x86_unittest.rs init_cfi_state, itself Breakpad's
// stackwalker_x86_unittest.cc CFI fixture): module1's function at 0x4000
// pushes ebx, moves esi into ebx, saves edi, puts the return address in
// edi and finally uses ebp as a frame pointer; its caller at 0x5000 ends
// the stack.
const rustX86CFISyms = `MODULE windows x86 ID module1.pdb
FUNC 4000 1000 10 enchiridion
STACK CFI INIT 4000 100 .cfa: $esp 4 + .ra: .cfa 4 - ^
STACK CFI 4001 .cfa: $esp 8 + $ebx: .cfa 8 - ^
STACK CFI 4002 $esi: $ebx
STACK CFI 4003 .cfa: $esp 20 + $edi: .cfa 16 - ^
STACK CFI 4005 .ra: $edi
STACK CFI 4006 .cfa: $ebp 8 + $ebp: .cfa 12 - ^
FUNC 5000 1000 10 epictetus
STACK CFI INIT 5000 1000 .cfa: $esp .ra 0
`

// TestRustX86CFI holds rust-minidump's test_cfi_at_4000 ... 4006 (x86):
// for each pc of the prologue, the stack the function built so far and
// the registers it changed; the caller must be 0x40005510 (found by CFI)
// with the callee-saved registers of the fixture, and the walk must end
// there (the caller's rules give a return address of 0). Dumps made with
// minidump/synth; the expected values are rust-minidump's.
func TestRustX86CFI(t *testing.T) {
	const sp = 0x80000000
	for _, c := range []struct {
		name               string
		eip                uint32
		stack              []uint32
		ebx, esi, edi, ebp uint32 // the context's (0: the fixture's)
		ebpAt              int    // ebp = sp + 4*ebpAt when > 0
		callerSP           uint32 // sp + 4*words before the caller's frame
	}{
		{name: "4000", eip: 0x40004000, stack: []uint32{0x40005510}, callerSP: sp + 4},
		{name: "4001", eip: 0x40004001, stack: []uint32{0x60f20ce6, 0x40005510}, ebx: 0x91aa9a8b, callerSP: sp + 8},
		{name: "4002", eip: 0x40004002, stack: []uint32{0x60f20ce6, 0x40005510}, ebx: 0x53d1379d, esi: 0xa5c790ed, callerSP: sp + 8},
		{name: "4003", eip: 0x40004003, stack: []uint32{0x56ec3db7, 0xafbae234, 0x53d67131, 0x60f20ce6, 0x40005510},
			ebx: 0x53d1379d, esi: 0xa97f229d, edi: 0xb05cc997, callerSP: sp + 20},
		{name: "4004", eip: 0x40004004, stack: []uint32{0x56ec3db7, 0xafbae234, 0x53d67131, 0x60f20ce6, 0x40005510},
			ebx: 0x53d1379d, esi: 0xa97f229d, edi: 0xb05cc997, callerSP: sp + 20},
		{name: "4005", eip: 0x40004005, stack: []uint32{0xe29782c2, 0xafbae234, 0x5ba29ce9, 0x60f20ce6, 0x8036cc02},
			ebx: 0x53d1379d, esi: 0x0fb7dc4e, edi: 0x40005510, callerSP: sp + 20},
		{name: "4006", eip: 0x40004006, stack: []uint32{0xdcdd25cd, 0xafbae234, 0xc0d4aab9, 0x60f20ce6, 0x8036cc02},
			ebx: 0x53d1379d, esi: 0x743833c9, edi: 0x40005510, ebpAt: 3, callerSP: sp + 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := &x86.Context{ContextFlags: x86.ContextFull, Eip: c.eip, Esp: sp, Ebp: 0xc0d4aab9,
				Ebx: 0x60f20ce6, Esi: 0x53d1379d, Edi: 0xafbae234}
			for _, r := range []struct {
				dst *uint32
				v   uint32
			}{{&ctx.Ebx, c.ebx}, {&ctx.Esi, c.esi}, {&ctx.Edi, c.edi}} {
				if r.v != 0 {
					*r.dst = r.v
				}
			}
			if c.ebpAt > 0 {
				ctx.Ebp = sp + uint32(4*c.ebpAt)
			}
			st := synth.NewStack(sp, 4)
			for _, w := range c.stack {
				st.U32(w)
			}
			st.Zeros(1000)
			b := synth.New(arch.X86, minidump.PlatformWin32NT)
			b.AddThread(1, synth.X86(ctx), st)
			b.AddPDBModule("module1", 0x40000000, 0x10000, minidump.GUID{Data1: 1}, 1, "module1.pdb")
			b.AddPDBModule("module2", 0x50000000, 0x10000, minidump.GUID{Data1: 2}, 1, "module2.pdb")
			b.SetException(1, 0xc0000005, 0, synth.X86(ctx))
			p := walkSynth(t, b, rustX86CFISyms)
			fr := p.Threads[p.RequestingThread].Frames
			if len(fr) != 2 {
				t.Fatalf("%d frames, want 2: %v", len(fr), frames(t, p))
			}
			f := fr[1]
			regs := f.Context().Regs
			if f.Trust != unwind.TrustCFI || regs[x86.EIP] != 0x40005510 || regs[x86.ESP] != uint64(c.callerSP) ||
				regs[x86.EBP] != 0xc0d4aab9 || regs[x86.EBX] != 0x60f20ce6 || regs[x86.ESI] != 0x53d1379d || regs[x86.EDI] != 0xafbae234 {
				t.Errorf("caller: trust %v eip %#x esp %#x ebp %#x ebx %#x esi %#x edi %#x", f.Trust, regs[x86.EIP],
					regs[x86.ESP], regs[x86.EBP], regs[x86.EBX], regs[x86.ESI], regs[x86.EDI])
			}
		})
	}
}

// rustAMD64CFISyms is the symbol file of rust-minidump's amd64 CFI unit
// tests (amd64_unittest.rs init_cfi_state; Breakpad's
// stackwalker_amd64_unittest.cc): push rbx, r12 saved in rbx, r13 saved,
// the return address in r13, rbp as frame pointer.
const rustAMD64CFISyms = `MODULE Linux x86_64 ID module1
FUNC 4000 1000 10 enchiridion
STACK CFI INIT 4000 100 .cfa: $rsp 8 + .ra: .cfa 8 - ^
STACK CFI 4001 .cfa: $rsp 16 + $rbx: .cfa 16 - ^
STACK CFI 4002 $r12: $rbx
STACK CFI 4003 .cfa: $rsp 40 + $r13: .cfa 32 - ^
STACK CFI 4005 .ra: $r13
STACK CFI 4006 .cfa: $rbp 16 + $rbp: .cfa 24 - ^
FUNC 5000 1000 10 epictetus
STACK CFI INIT 5000 1000 .cfa: $rsp .ra 0
`

// TestRustAMD64CFI holds rust-minidump's amd64 test_cfi_at_4000 ... 4006:
// the caller is 0x7400c0005510 by CFI with the fixture's callee-saved
// registers (rbx, rbp, r12-r15) and the walk ends there.
func TestRustAMD64CFI(t *testing.T) {
	const sp = 0x8000000080000000
	const (
		rbp0, rbx0, r120, r130 = 0x68995b1de4700266, 0x5a5beeb38de23be8, 0xed1b02e8cc0fc79c, 0x1d20ad8acacbe930
		r140, r150, ra         = 0xe94cffc2f7adaa28, 0xb638d17d8da413b5, 0x00007400c0005510
	)
	for _, c := range []struct {
		name          string
		rip           uint64
		stack         []uint64
		rbx, r12, r13 uint64 // the context's (0: the fixture's)
		rbpAt         int
		callerSP      uint64
	}{
		{name: "4000", rip: 0x7400c0004000, stack: []uint64{ra}, callerSP: sp + 8},
		{name: "4001", rip: 0x7400c0004001, stack: []uint64{rbx0, ra}, rbx: 0xbe0487d2f9eafe29, callerSP: sp + 16},
		{name: "4002", rip: 0x7400c0004002, stack: []uint64{rbx0, ra}, rbx: r120, r12: 0xb0118de918a4bcea, callerSP: sp + 16},
		{name: "4003", rip: 0x7400c0004003, stack: []uint64{0x0e023828dffd4d81, r130, 0x319e68b49e3ace0f, rbx0, ra},
			rbx: r120, r12: 0x89d04fa804c87a43, r13: 0x5118e02cbdb24b03, callerSP: sp + 40},
		{name: "4004", rip: 0x7400c0004004, stack: []uint64{0x0e023828dffd4d81, r130, 0x319e68b49e3ace0f, rbx0, ra},
			rbx: r120, r12: 0x46b1b8868891b34a, r13: 0x5118e02cbdb24b03, callerSP: sp + 40},
		{name: "4005", rip: 0x7400c0004005, stack: []uint64{0x4b516dd035745953, r130, 0xa6d445e16ae3d872, rbx0, 0xaa95fa054aedfbae},
			rbx: r120, r12: 0x46b1b8868891b34a, r13: ra, callerSP: sp + 40},
		{name: "4006", rip: 0x7400c0004006, stack: []uint64{0x043c6dfceb91aa34, r130, rbp0, rbx0, 0xf015ee516ad89eab},
			rbx: r120, r12: 0x26e007b341acfebd, r13: ra, rbpAt: 3, callerSP: sp + 40},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := &amd64.Context{ContextFlags: amd64.ContextFull, Rip: c.rip, Rsp: sp, Rbp: rbp0,
				Rbx: rbx0, R12: r120, R13: r130, R14: r140, R15: r150}
			for _, r := range []struct {
				dst *uint64
				v   uint64
			}{{&ctx.Rbx, c.rbx}, {&ctx.R12, c.r12}, {&ctx.R13, c.r13}} {
				if r.v != 0 {
					*r.dst = r.v
				}
			}
			if c.rbpAt > 0 {
				ctx.Rbp = sp + uint64(8*c.rbpAt)
			}
			st := synth.NewStack(sp, 8)
			for _, w := range c.stack {
				st.U64(w)
			}
			st.Zeros(1000)
			b := synth.New(arch.AMD64, minidump.PlatformLinux)
			b.AddThread(1, synth.AMD64(ctx), st)
			b.AddELFModule("module1", 0x7400c0000000, 0x10000, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
			b.AddELFModule("module2", 0x7500b0000000, 0x10000, []byte{2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
			b.SetException(1, 11, 0, synth.AMD64(ctx))
			p := walkSynth(t, b, rustAMD64CFISyms)
			fr := p.Threads[p.RequestingThread].Frames
			if len(fr) != 2 {
				t.Fatalf("%d frames, want 2: %v", len(fr), frames(t, p))
			}
			f := fr[1]
			regs := f.Context().Regs
			want := map[int]uint64{amd64.RIP: ra, amd64.RSP: c.callerSP, amd64.RBP: rbp0, amd64.RBX: rbx0,
				amd64.R12: r120, amd64.R13: r130, amd64.R14: r140, amd64.R15: r150}
			if f.Trust != unwind.TrustCFI {
				t.Errorf("caller trust %v, want cfi", f.Trust)
			}
			for r, v := range want {
				if regs[r] != v {
					t.Errorf("caller's register %d = %#x, want %#x", r, regs[r], v)
				}
			}
		})
	}
}

// TestRustAMD64FramePointer holds rust-minidump's amd64
// test_caller_pushed_rbp (Linux) and test_windows_rbp_scan (Windows): an
// rbp frame record with junk below it, modules without symbols. On Linux
// ours follows rbp as rust-minidump (trust frame_pointer). On Windows
// rust-minidump looks for the caller's rbp on the stack and follows the
// chain; ours, as Breakpad, has no rbp chain on Windows (code compiled for
// Windows need not keep rbp as a frame pointer: its unwinding is the
// .pdata tables'), and finds the same caller (rip, rsp) by scanning, its
// rbp left unknown: a deliberate difference (Breakpad's rule).
func TestRustAMD64FramePointer(t *testing.T) {
	const sp, ra = 0x8000000080000000, 0x00007500b0000110
	for _, c := range []struct {
		name      string
		os        minidump.PlatformID
		junk      []uint64 // below the frame record, after 16 bytes of zeros
		rbpAtJunk int      // the context's rbp: sp + 16 + 8*rbpAtJunk
		trust     unwind.Trust
	}{
		{"linux", minidump.PlatformLinux, []uint64{0x00007400b0000000, 0x00007500b0000000, 0x00007400c0001000, 0x00007500b000aaaa}, 4, unwind.TrustFP},
		{"windows", minidump.PlatformWin32NT, []uint64{0xb0000000, 0xb0000000, 0xc0001000, 0xb000aaaa}, 2, unwind.TrustScan},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := synth.NewStack(sp, 8)
			st.Zeros(16)
			for _, w := range c.junk {
				st.U64(w)
			}
			record := st.Here()
			frame1SP := record + 16
			frame1RBP := frame1SP + 32
			st.U64(frame1RBP)
			st.U64(ra)
			st.Zeros(32)
			st.U64(0)
			ctx := &amd64.Context{ContextFlags: amd64.ContextFull, Rip: 0x00007400c0000200, Rsp: sp,
				Rbp: sp + 16 + uint64(8*c.rbpAtJunk)}
			b := synth.New(arch.AMD64, c.os)
			b.AddThread(1, synth.AMD64(ctx), st)
			if c.os == minidump.PlatformWin32NT {
				b.AddPDBModule("module1", 0x7400c0000000, 0x10000, minidump.GUID{Data1: 1}, 1, "module1.pdb")
				b.AddPDBModule("module2", 0x7500b0000000, 0x10000, minidump.GUID{Data1: 2}, 1, "module2.pdb")
			} else {
				b.AddELFModule("module1", 0x7400c0000000, 0x10000, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
				b.AddELFModule("module2", 0x7500b0000000, 0x10000, []byte{2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
			}
			b.SetException(1, 11, 0, synth.AMD64(ctx))
			p := processBuilt(t, b, stackwalk.Options{})
			fr := p.Threads[p.RequestingThread].Frames
			if len(fr) < 2 {
				t.Fatalf("%d frames: %v", len(fr), frames(t, p))
			}
			ctx1 := fr[1].Context()
			regs := ctx1.Regs
			if c.trust == unwind.TrustScan && !ctx1.Has(amd64.RBP) {
				// Breakpad's scan recovers rbp only from a word right
				// below the return address that the callee's rbp points
				// at; here rbp points lower (rust-minidump: frame1RBP).
				regs[amd64.RBP] = frame1RBP
			}
			if fr[1].Trust != c.trust || regs[amd64.RIP] != ra || regs[amd64.RSP] != frame1SP || regs[amd64.RBP] != frame1RBP {
				t.Errorf("frame 1: trust %v rip %#x rsp %#x rbp %#x; want %v %#x %#x %#x", fr[1].Trust,
					regs[amd64.RIP], regs[amd64.RSP], regs[amd64.RBP], c.trust, uint64(ra), frame1SP, frame1RBP)
			}
			if len(fr) != 2 {
				t.Errorf("%d frames, want 2 (rust-minidump's): %v", len(fr), frames(t, p))
			}
		})
	}
}

// TestRustARM64FramePointer holds rust-minidump's arm64 test_frame_pointer
// (arm64_unittest.rs; Breakpad's stackwalker_arm64_unittest.cc
// FramePointer): two frame records, junk below each, the context's lr
// outside every module; no symbols. Both walks give module2's two return
// addresses; ours, as Breakpad, first a frame at lr (below).
func TestRustARM64FramePointer(t *testing.T) {
	const sp, ra1, ra2 = 0x80000000, 0x50000100, 0x50000900
	st := synth.NewStack(sp, 8)
	st.Zeros(64)
	st.U64(0xd)
	st.U64(0xf0000000)
	fp0 := st.Here()
	fp1 := fp0 + 16 + 64 + 16
	sp1 := fp0 + 16
	st.U64(fp1)
	st.U64(ra1)
	st.Zeros(64)
	st.U64(0xd)
	st.U64(0xf0000000)
	fp2 := fp1 + 16 + 64 + 16
	sp2 := fp1 + 16
	st.U64(fp2)
	st.U64(ra2)
	st.Zeros(64)
	st.U64(0xd)
	st.U64(0xf0000000)
	st.U64(0)
	st.U64(0)
	ctx := &arm64.Context{ContextFlags: arm64.ContextFull}
	ctx.Iregs[arm64.RegPC], ctx.Iregs[arm64.RegLR] = 0x40005510, 0x1fe0fe10
	ctx.Iregs[arm64.RegFP], ctx.Iregs[arm64.RegSP] = fp0, sp
	b := synth.New(arch.ARM64, minidump.PlatformLinux)
	b.AddThread(1, synth.ARM64(ctx), st)
	b.AddELFModule("module1", 0x40000000, 0x10000, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	b.AddELFModule("module2", 0x50000000, 0x10000, []byte{2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	b.SetException(1, 11, 0, synth.ARM64(ctx))
	p := processBuilt(t, b, stackwalk.Options{})
	fr := p.Threads[p.RequestingThread].Frames
	// A deliberate difference: Breakpad's frame-pointer step takes the
	// caller's pc from the callee's lr (the context frame's lr is the
	// return address of a leaf that made no frame record), so frame 1 is
	// lr's 0x1fe0fe10 (outside every module) and module2's return
	// addresses are frames 2 and 3; rust-minidump passes over an lr that
	// is in no module and gives 3 frames.
	if len(fr) != 4 {
		t.Fatalf("%d frames, want 4 (rust-minidump: 3): %v", len(fr), frames(t, p))
	}
	if pc := fr[1].Context().Regs[arm64.RegPC]; pc != 0x1fe0fe10 {
		t.Errorf("frame 1 pc %#x, want lr 0x1fe0fe10", pc)
	}
	// Frames 2 and 3: module2's return addresses. Their sp and fp are one
	// frame record on from rust-minidump's (frame 1's sp1, fp1 and frame
	// 2's sp2, fp2): each frame's pc comes from its callee's lr.
	for i, w := range []struct{ pc, sp, fp uint64 }{{ra1, sp2, fp2}, {ra2, sp2 + 0x60, 0}} {
		regs := fr[i+2].Context().Regs
		if fr[i+2].Trust != unwind.TrustFP || regs[arm64.RegPC] != w.pc || regs[arm64.RegSP] != w.sp || regs[arm64.RegFP] != w.fp {
			t.Errorf("frame %d: trust %v pc %#x sp %#x fp %#x; want frame_pointer %#x %#x %#x (rust-minidump's frame %d: sp %#x fp %#x)",
				i+2, fr[i+2].Trust, regs[arm64.RegPC], regs[arm64.RegSP], regs[arm64.RegFP], w.pc, w.sp, w.fp, i+1, []uint64{sp1, sp2}[i], []uint64{fp1, fp2}[i])
		}
	}
}
