package stackwalk_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
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
