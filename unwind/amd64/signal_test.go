package amd64_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/unwind"
	amd64unwind "github.com/gobreakpad/gobreakpad/unwind/amd64"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

const restoreRT = 0x7f0000000100

// signalEnv lays out a handler (context frame at 0x401010) that returns to
// __restore_rt, the rt_sigframe above it, and the interrupted function at
// 0x402010 whose CFI starts at its pc, returning to 0x403020. It returns
// the env, the context frame and the registers the signal frame saves.
func signalEnv(t *testing.T) (*unwindtest.Env, *unwind.Frame, map[int]uint64) {
	env := newEnv()
	env.Modules = append(env.Modules, unwindtest.Module{Base: 0x7f0000000000, Size: 0x1000})
	env.CFIs = []unwindtest.CFIRange{
		{Start: 0x401000, Size: 0x100, Init: ".cfa: $rsp 8 + .ra: .cfa -8 + ^"},
		{Start: 0x402010, Size: 0x10, Init: ".cfa: $rsp 8 + .ra: .cfa -8 + ^"},
	}
	sp := env.Push(restoreRT)
	env.Push(0, 0, 0, 0, 0) // uc_flags, uc_link, uc_stack
	// struct sigcontext: r8-r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip.
	order := []int{amd64.R8, amd64.R9, amd64.R10, amd64.R11, amd64.R12, amd64.R13, amd64.R14, amd64.R15,
		amd64.RDI, amd64.RSI, amd64.RBP, amd64.RBX, amd64.RDX, amd64.RAX, amd64.RCX, amd64.RSP, amd64.RIP}
	want := map[int]uint64{}
	interruptedSP := sp + 8*(1+5+17+4)
	for _, r := range order {
		v := uint64(0x1000 + r)
		switch r {
		case amd64.RSP:
			v = interruptedSP
		case amd64.RIP:
			v = 0x402010
		}
		want[r] = v
		env.Push(v)
	}
	env.Push(0, 0, 0, 0)
	if a := env.Push(0x403020); a != interruptedSP {
		t.Fatalf("layout: return address at %#x, want %#x", a, interruptedSP)
	}
	env.Push(0, 0)
	return env, contextFrame(t, env, 0x401010, sp, 0), want
}

func checkSignalWalk(t *testing.T, env *unwindtest.Env, ctx *unwind.Frame, want map[int]uint64) {
	t.Helper()
	frames := unwindtest.Walk(amd64unwind.Unwinder{}, env, ctx, 10)
	if len(frames) < 4 {
		t.Fatalf("%d frames, want 4", len(frames))
	}
	check(t, frames[1], unwind.TrustCFI, restoreRT, ctx.Regs[amd64.RSP]+8)
	unwindtest.CheckSignal(t, amd64unwind.Unwinder{}, "", frames, want)
	// The interrupted function's rules are looked up at its pc, not pc-1.
	check(t, frames[3], unwind.TrustCFI, 0x403020, want[amd64.RSP]+8)
}

// TestSignalFrameByCode: __restore_rt recognised by its code bytes.
func TestSignalFrameByCode(t *testing.T) {
	env, ctx, want := signalEnv(t)
	env.Code = map[uint64][]byte{restoreRT: {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05}}
	checkSignalWalk(t, env, ctx, want)
}

// TestSignalFrameByName: __restore_rt recognised by its symbol.
func TestSignalFrameByName(t *testing.T) {
	env, ctx, want := signalEnv(t)
	env.FuncNames = map[uint64]string{restoreRT: "__restore_rt"}
	checkSignalWalk(t, env, ctx, want)
}

// TestNoSignalFrame: other code at the return address is no trampoline.
func TestNoSignalFrame(t *testing.T) {
	env, ctx, _ := signalEnv(t)
	env.Code = map[uint64][]byte{restoreRT: {0x48, 0xc7, 0xc0, 0x3c, 0x00, 0x00, 0x00, 0x0f, 0x05}}
	frames := unwindtest.Walk(amd64unwind.Unwinder{}, env, ctx, 10)
	for _, f := range frames {
		if f.Trust == unwind.TrustSignal {
			t.Errorf("signal frame found at %#x without a trampoline", f.Regs[amd64.RIP])
		}
	}
}

// stackSignalEnv is signalEnv with what the kernel writes besides the
// registers: uc_flags, cs and ss in csgsfs, and the fpstate pointer
// (into the frame above the ucontext, 64-byte aligned). It returns the
// ucontext's address too.
func stackSignalEnv(t *testing.T) (*unwindtest.Env, *unwind.Frame, map[int]uint64, uint64) {
	env, ctx, want := signalEnv(t)
	uc := ctx.Regs[amd64.RSP] + 8
	env.Push(make([]uint64, 64)...)
	env.Put(uc, 7)                    // uc_flags
	env.Put(uc+40+144, 0x2b<<48|0x33) // csgsfs
	env.Put(uc+40+184, (uc+304+63)&^63)
	return env, ctx, want, uc
}

// TestSignalFrameFromStack: without __restore_rt's code or name, the
// rt_sigframe is recognised from the stack.
func TestSignalFrameFromStack(t *testing.T) {
	env, ctx, want, _ := stackSignalEnv(t)
	checkSignalWalk(t, env, ctx, want)
}

// TestSignalFrameFromStackRejected: a frame that fails one of the checks is
// not taken for a signal frame.
func TestSignalFrameFromStackRejected(t *testing.T) {
	for _, tc := range []struct {
		name string
		off  uint64 // from the ucontext
		v    uint64
	}{
		{"uc_link set", 8, 0x7fff0000},
		{"uc_flags junk", 0, 0x401000},
		{"kernel cs", 40 + 144, 0x10},
		{"kernel ss", 40 + 144, 0x18<<48 | 0x33},
		{"fs set", 40 + 144, 0x2b<<48 | 0x63<<32 | 0x33},
		{"32-bit cs", 40 + 144, 0x2b<<48 | 0x23},
		{"fpstate below the frame", 40 + 184, 0x1000},
		{"fpstate unaligned", 40 + 184, 0},
		{"pc in no module", 40 + 128, 0x9000000},
	} {
		env, ctx, _, uc := stackSignalEnv(t)
		v := tc.v
		if tc.name == "fpstate unaligned" {
			v = (uc+304+63)&^63 + 8
		}
		env.Put(uc+tc.off, v)
		for _, f := range unwindtest.Walk(amd64unwind.Unwinder{}, env, ctx, 10) {
			if f.Trust == unwind.TrustSignal || f.Trampoline {
				t.Errorf("%s: signal frame found at %#x", tc.name, f.Regs[amd64.RIP])
			}
		}
	}
}
