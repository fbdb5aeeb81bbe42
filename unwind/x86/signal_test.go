package x86_test

import (
	"fmt"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/unwind"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
	x86unwind "github.com/gobreakpad/gobreakpad/unwind/x86"
)

const sigreturn, rtSigreturn = 0xf7fc0400, 0xf7fc0410

// signalCase is a handler (context at 0x401010) returning into the vDSO's
// __kernel_sigreturn (sigframe: signal number, then sigcontext) or
// __kernel_rt_sigreturn (rt_sigframe: signal number, pinfo, puc, siginfo,
// ucontext), laid out as the kernel does, with the trampolines' code
// bytes not in env.
type signalCase struct {
	env                *unwindtest.Env
	ctx                *unwind.Frame
	sp, tramp, sc, isp uint64 // the handler's sp, the trampoline, the sigcontext, the interrupted sp
	want               map[int]uint64
}

func newSignalCase(t *testing.T, rt bool) *signalCase {
	env := newEnv()
	env.IsWindows = false
	env.Modules = append(env.Modules, unwindtest.Module{Base: 0xf7fc0000, Size: 0x1000})
	env.CFIs = []unwindtest.CFIRange{
		{Start: 0x401000, Size: 0x100, Init: ".cfa: $esp 4 + .ra: .cfa -4 + ^ $ebp: $ebp"},
		{Start: 0x402010, Size: 0x10, Init: ".cfa: $esp 4 + .ra: .cfa -4 + ^ $ebp: $ebp"},
	}
	c := &signalCase{env: env, tramp: sigreturn}
	if rt {
		c.tramp = rtSigreturn
	}
	c.sp = env.Push(c.tramp)
	if rt {
		puc := c.sp + 4 + 12 + 128
		env.Push(11, c.sp+16, puc)      // sig, pinfo, puc
		env.Push(11)                    // si_signo
		env.Push(make([]uint64, 31)...) // the rest of siginfo
		env.Push(0, 0, 0, 0, 0)         // uc_flags, uc_link, uc_stack
		c.sc = puc + 20
	} else {
		env.Push(11) // sig
		c.sc = c.sp + 8
	}
	if a := env.Push(0x2b, 0, 0x2b, 0x2b); a != c.sc { // gs, fs, es, ds
		t.Fatalf("rt %v: sigcontext at %#x, want %#x", rt, a, c.sc)
	}
	c.isp = c.sc + 4*24
	c.want = map[int]uint64{x86.EDI: 0xd1d1, x86.ESI: 0x5151, x86.EBP: 0xb9b9, x86.ESP: c.isp,
		x86.EBX: 0xbbbb, x86.EDX: 0xdddd, x86.ECX: 0xcccc, x86.EAX: 0xaaaa, x86.EIP: 0x402010, x86.EFL: 0x246}
	w := c.want
	env.Push(w[x86.EDI], w[x86.ESI], w[x86.EBP], w[x86.ESP], w[x86.EBX], w[x86.EDX],
		w[x86.ECX], w[x86.EAX], 14, 4, w[x86.EIP], 0x73, w[x86.EFL])
	env.Push(c.isp, 0x7b, 0, 0, 0, 0, 0) // esp_at_signal, ss, fpstate, oldmask, cr2, ...
	if a := env.Push(0x403020); a != c.isp {
		t.Fatalf("rt %v: return address at %#x, want %#x", rt, a, c.isp)
	}
	env.Push(0, 0)
	c.ctx = contextFrame(t, env, 0x401010, uint32(c.sp), 0)
	return c
}

func (c *signalCase) check(t *testing.T, label string) {
	t.Helper()
	frames := unwindtest.Walk(x86unwind.Unwinder{}, c.env, c.ctx, 10)
	if len(frames) < 4 {
		t.Fatalf("%s%d frames, want 4", label, len(frames))
	}
	check(t, frames[1], unwind.TrustCFI, c.tramp, c.sp+4, 0)
	unwindtest.CheckSignal(t, x86unwind.Unwinder{}, label, frames, c.want)
	check(t, frames[3], unwind.TrustCFI, 0x403020, c.isp+4, 0xb9b9)
}

// TestSignalFrame: the trampolines recognised by their code bytes; the
// interrupted function's rules are looked up at its pc.
func TestSignalFrame(t *testing.T) {
	for _, rt := range []bool{false, true} {
		c := newSignalCase(t, rt)
		c.env.Code = map[uint64][]byte{
			sigreturn:   {0x58, 0xb8, 0x77, 0x00, 0x00, 0x00, 0xcd, 0x80},
			rtSigreturn: {0xb8, 0xad, 0x00, 0x00, 0x00, 0xcd, 0x80},
		}
		c.check(t, fmt.Sprintf("rt %v: ", rt))
	}
}

// TestSignalFrameFromStack: without the trampolines' code or names, both
// frames are recognised from the stack: the rt frame by its pinfo and puc,
// the old one by its sigcontext (esp_at_signal, selectors, fpstate).
func TestSignalFrameFromStack(t *testing.T) {
	for _, rt := range []bool{false, true} {
		c := newSignalCase(t, rt)
		c.check(t, fmt.Sprintf("rt %v: ", rt))
	}
}

// TestSignalFrameFromStackRejected: a frame that fails one of the checks is
// not taken for a signal frame.
func TestSignalFrameFromStackRejected(t *testing.T) {
	for _, tc := range []struct {
		name string
		rt   bool
		edit func(c *signalCase)
	}{
		{"no signal number", false, func(c *signalCase) { c.env.Put(c.sp+4, 0) }},
		{"esp_at_signal differs", false, func(c *signalCase) { c.env.Put(c.sc+68, c.isp+16) }},
		{"kernel cs", false, func(c *signalCase) { c.env.Put(c.sc+60, 0x60) }},
		{"kernel ss", false, func(c *signalCase) { c.env.Put(c.sc+72, 0x68) }},
		{"selectors of two kernels", false, func(c *signalCase) { c.env.Put(c.sc+72, 0x2b) }},
		{"fpstate below the frame", false, func(c *signalCase) { c.env.Put(c.sc+76, c.sp) }},
		{"pinfo elsewhere", true, func(c *signalCase) { c.env.Put(c.sp+8, c.sp+20) }},
		{"puc elsewhere", true, func(c *signalCase) { c.env.Put(c.sp+12, c.sp+4) }},
		{"another signal in siginfo", true, func(c *signalCase) { c.env.Put(c.sp+16, 6) }},
		{"pc in no module", true, func(c *signalCase) { c.env.Put(c.sc+56, 0x9000000) }},
		{"sp below the frame", true, func(c *signalCase) { c.env.Put(c.sc+28, c.sc) }},
	} {
		c := newSignalCase(t, tc.rt)
		tc.edit(c)
		for _, f := range unwindtest.Walk(x86unwind.Unwinder{}, c.env, c.ctx, 10) {
			if f.Trust == unwind.TrustSignal || f.Trampoline {
				t.Errorf("%s: signal frame found at %#x", tc.name, f.Regs[x86.EIP])
			}
		}
	}
}
