package x86_test

import (
	"fmt"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/unwind"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
	x86unwind "github.com/gobreakpad/gobreakpad/unwind/x86"
)

// TestSignalFrame: a handler (context at 0x401010) returning into the
// vDSO's __kernel_sigreturn (sigframe: signal number, then sigcontext) or
// __kernel_rt_sigreturn (rt_sigframe: signal number, pinfo, puc, siginfo,
// ucontext); the interrupted function's rules are looked up at its pc.
func TestSignalFrame(t *testing.T) {
	const sigreturn, rtSigreturn = 0xf7fc0400, 0xf7fc0410
	for _, rt := range []bool{false, true} {
		env := newEnv()
		env.IsWindows = false
		env.Modules = append(env.Modules, unwindtest.Module{Base: 0xf7fc0000, Size: 0x1000})
		env.Code = map[uint64][]byte{
			sigreturn:   {0x58, 0xb8, 0x77, 0x00, 0x00, 0x00, 0xcd, 0x80},
			rtSigreturn: {0xb8, 0xad, 0x00, 0x00, 0x00, 0xcd, 0x80},
		}
		env.CFIs = []unwindtest.CFIRange{
			{Start: 0x401000, Size: 0x100, Init: ".cfa: $esp 4 + .ra: .cfa -4 + ^ $ebp: $ebp"},
			{Start: 0x402010, Size: 0x10, Init: ".cfa: $esp 4 + .ra: .cfa -4 + ^ $ebp: $ebp"},
		}
		tramp := uint64(sigreturn)
		if rt {
			tramp = rtSigreturn
		}
		sp := env.Push(tramp)
		var sc uint64
		if rt {
			puc := sp + 4 + 12 + 128
			env.Push(11, sp+16, puc)        // sig, pinfo, puc
			env.Push(make([]uint64, 32)...) // siginfo
			env.Push(0, 0, 0, 0, 0)         // uc_flags, uc_link, uc_stack
			sc = puc + 20
		} else {
			env.Push(11) // sig
			sc = sp + 8
		}
		if a := env.Push(0, 0, 0, 0); a != sc {
			t.Fatalf("rt %v: sigcontext at %#x, want %#x", rt, a, sc)
		}
		interruptedSP := sc + 4*24
		want := map[int]uint64{x86.EDI: 0xd1d1, x86.ESI: 0x5151, x86.EBP: 0xb9b9, x86.ESP: interruptedSP,
			x86.EBX: 0xbbbb, x86.EDX: 0xdddd, x86.ECX: 0xcccc, x86.EAX: 0xaaaa, x86.EIP: 0x402010, x86.EFL: 0x246}
		env.Push(want[x86.EDI], want[x86.ESI], want[x86.EBP], want[x86.ESP], want[x86.EBX], want[x86.EDX],
			want[x86.ECX], want[x86.EAX], 14, 4, want[x86.EIP], 0x23, want[x86.EFL])
		env.Push(make([]uint64, 7)...)
		if a := env.Push(0x403020); a != interruptedSP {
			t.Fatalf("rt %v: return address at %#x, want %#x", rt, a, interruptedSP)
		}
		env.Push(0, 0)
		ctx := contextFrame(t, env, 0x401010, uint32(sp), 0)
		frames := unwindtest.Walk(x86unwind.Unwinder{}, env, ctx, 10)
		if len(frames) < 4 {
			t.Fatalf("rt %v: %d frames, want 4", rt, len(frames))
		}
		check(t, frames[1], unwind.TrustCFI, tramp, sp+4, 0)
		unwindtest.CheckSignal(t, x86unwind.Unwinder{}, fmt.Sprintf("rt %v: ", rt), frames, want)
		check(t, frames[3], unwind.TrustCFI, 0x403020, interruptedSP+4, 0xb9b9)
	}
}
