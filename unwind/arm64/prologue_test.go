package arm64_test

import (
	"encoding/binary"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/unwind"
	arm64unwind "github.com/gobreakpad/gobreakpad/unwind/arm64"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

func words(ws ...uint32) []byte {
	var b []byte
	for _, w := range ws {
		b = binary.LittleEndian.AppendUint32(b, w)
	}
	return b
}

const (
	nop          = 0xd503201f
	strX30Pre32  = 0xf81e0ffe // str x30, [sp, #-32]!
	stpX19X30Pre = 0xa9bf7bf3 // stp x19, x30, [sp, #-16]!
	stpFPLRPre   = 0xa9bf7bfd // stp x29, x30, [sp, #-16]!
	movFPSP      = 0x910003fd // mov x29, sp
	blTo402000   = 0x940003fe // at 0x401008: bl 0x402000
)

// TestFrameState: functions built without frame pointers (no CFI) store
// x30 where their code says; the code decoded from each function's start
// (the symbols say where it is) gives the return address and how far sp
// moved, frame after frame, where the frame-pointer rule would follow the
// record of an outer function and skip them. Callee-saved registers come
// back from where the function stored them. The outer function's frame
// record then takes over.
func TestFrameState(t *testing.T) {
	u := &arm64unwind.Unwinder{}
	env := newEnv(u)
	env.Code = map[uint64][]byte{
		0x401000: words(strX30Pre32, nop, blTo402000, nop),
		0x402000: words(stpX19X30Pre, nop, nop),
	}
	// B's frame (x19, x30), A's 32 bytes (x30 at its bottom), then C's
	// frame record, which fp points at from the start.
	sp := env.Push(0x5a7ed, 0x40100c, 0x403050, 0, 0, 0)
	fp := env.Push(stackBase+64, 0x404050)
	fp2 := env.Push(0, 0x405050)
	frames := unwindtest.Walk(u, env, contextFrame(t, u, env, 0x402008, sp, fp, 0x402000), 4)
	if len(frames) != 4 {
		t.Fatalf("%d frames; want 4", len(frames))
	}
	check(t, frames[1], unwind.TrustPrologue, 0x40100c, sp+16)
	if frames[1].Regs[19] != 0x5a7ed || frames[1].Regs[arm64.RegFP] != fp {
		t.Errorf("frame 1: x19 %#x fp %#x; want 0x5a7ed %#x", frames[1].Regs[19], frames[1].Regs[arm64.RegFP], fp)
	}
	check(t, frames[2], unwind.TrustPrologue, 0x403050, sp+48)
	// C's own frame record: its return address, once.
	check(t, frames[3], unwind.TrustFP, 0x404050, fp2+16)
}

// TestFrameStateLiveLR: at a function's first instruction (or before it
// stored x30), the context's lr is the return address and sp is the
// caller's; once the function made its frame record, Breakpad's
// frame-pointer rule decides.
func TestFrameStateLiveLR(t *testing.T) {
	u := &arm64unwind.Unwinder{}
	for _, tc := range []struct {
		name  string
		pc    uint64
		trust unwind.Trust
	}{
		{"at the start", 0x402000, unwind.TrustPrologue},
		{"after stp", 0x402004, unwind.TrustPrologue},
		{"record made", 0x402008, unwind.TrustFP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(u)
			env.Code = map[uint64][]byte{0x402000: words(stpFPLRPre, movFPSP, nop)}
			// What stp x29, x30 stored (after it: x29, x30 at sp),
			// then the caller's frame record.
			sp := env.Push(stackBase+16, 0x401050)
			fp := env.Push(0, 0x403050)
			f := contextFrame(t, u, env, tc.pc, sp, fp, 0x401050)
			c := u.Caller(env, []*unwind.Frame{f}, true)
			if c == nil {
				t.Fatal("no caller")
			}
			want := sp
			if tc.pc == 0x402004 {
				want = sp + 16
			}
			if tc.trust == unwind.TrustFP {
				want = fp + 16
			}
			check(t, c, tc.trust, 0x401050, want)
		})
	}
}
