package arm64_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/unwind"
	arm64unwind "github.com/gobreakpad/gobreakpad/unwind/arm64"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

const rtSigreturn = 0x7f0000000800

// TestSignalFrame: a leaf handler (context at 0x401010, lr the vDSO's
// __kernel_rt_sigreturn) above an rt_sigframe; the interrupted function's
// rules are looked up at its pc (0x402010), not pc-4.
func TestSignalFrame(t *testing.T) {
	for _, byName := range []bool{false, true} {
		u := arm64unwind.NewUnwinder(0x7f0000001000)
		env := newEnv(u)
		env.Modules = append(env.Modules, unwindtest.Module{Base: 0x7f0000000000, Size: 0x1000})
		if byName {
			env.FuncNames = map[uint64]string{rtSigreturn: "__kernel_rt_sigreturn"}
		} else {
			env.Code = map[uint64][]byte{rtSigreturn: {0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4}}
		}
		env.CFIs = []unwindtest.CFIRange{
			{Start: 0x401000, Size: 0x100, Init: ".cfa: sp 0 + .ra: x30"},
			{Start: 0x402010, Size: 0x10, Init: ".cfa: sp 0 + .ra: x30"},
		}
		sp := env.Push(make([]uint64, 16)...) // siginfo
		env.Push(make([]uint64, 22)...)       // uc_flags, uc_link, uc_stack, uc_sigmask (176 bytes)
		env.Push(0xdead)                      // fault_address
		want := map[int]uint64{}
		interruptedSP := sp + 128 + 176 + 8 + 8*34 + 64
		for r := 0; r < arm64.NumRegs; r++ {
			v := uint64(0x1000 + r)
			switch r {
			case arm64.RegSP:
				v = interruptedSP
			case arm64.RegPC:
				v = 0x402010
			case arm64.RegLR:
				v = 0x403024
			}
			want[r] = v
			env.Push(v)
		}
		env.Push(make([]uint64, 8)...) // pstate, padding up to the interrupted sp
		env.Push(0, 0)
		ctx := contextFrame(t, u, env, 0x401010, sp, 0, rtSigreturn)
		frames := unwindtest.Walk(u, env, ctx, 10)
		if len(frames) < 4 {
			t.Fatalf("byName %v: %d frames, want 4", byName, len(frames))
		}
		check(t, frames[1], unwind.TrustCFI, rtSigreturn, sp)
		unwindtest.CheckSignal(t, u, "", frames, want)
		check(t, frames[3], unwind.TrustCFI, 0x403024, interruptedSP)
	}
}
