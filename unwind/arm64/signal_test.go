package arm64_test

import (
	"fmt"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/unwind"
	arm64unwind "github.com/gobreakpad/gobreakpad/unwind/arm64"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

const rtSigreturn = 0x7f0000000800

// signalCase is a leaf handler (context at 0x401010, lr the vDSO's
// __kernel_rt_sigreturn) above an rt_sigframe laid out as the kernel
// does, the FPSIMD record first in __reserved; the trampoline's code and
// name are not in env.
type signalCase struct {
	u       *arm64unwind.Unwinder
	env     *unwindtest.Env
	ctx     *unwind.Frame
	sp, isp uint64
	want    map[int]uint64
}

func newSignalCase(t *testing.T) *signalCase {
	u := arm64unwind.NewUnwinder(0x7f0000001000)
	env := newEnv(u)
	env.Modules = append(env.Modules, unwindtest.Module{Base: 0x7f0000000000, Size: 0x1000})
	env.CFIs = []unwindtest.CFIRange{
		{Start: 0x401000, Size: 0x100, Init: ".cfa: sp 0 + .ra: x30"},
		{Start: 0x402010, Size: 0x10, Init: ".cfa: sp 0 + .ra: x30"},
	}
	c := &signalCase{u: u, env: env, want: map[int]uint64{}}
	c.sp = env.Push(make([]uint64, 16)...) // siginfo
	env.Push(make([]uint64, 22)...)        // uc_flags, uc_link, uc_stack, uc_sigmask (176 bytes)
	env.Push(0xdead)                       // fault_address
	c.isp = c.sp + 128 + 176 + 288 + 528 + 16
	for r := 0; r < arm64.NumRegs; r++ {
		v := uint64(0x1000 + r)
		switch r {
		case arm64.RegSP:
			v = c.isp
		case arm64.RegPC:
			v = 0x402010
		case arm64.RegLR:
			v = 0x403024
		}
		c.want[r] = v
		env.Push(v)
	}
	env.Push(0x60000000, 0)         // pstate (EL0t, flags), padding to __reserved
	env.Push(528<<32 | 0x46508001)  // FPSIMD record: magic, size
	env.Push(make([]uint64, 65)...) // the rest of it
	env.Push(0, 0)                  // the terminating record
	if a := env.Push(0, 0); a != c.isp {
		t.Fatalf("interrupted sp %#x, want %#x", a, c.isp)
	}
	c.ctx = contextFrame(t, u, env, 0x401010, c.sp, 0, rtSigreturn)
	return c
}

func (c *signalCase) check(t *testing.T, label string) {
	t.Helper()
	frames := unwindtest.Walk(c.u, c.env, c.ctx, 10)
	if len(frames) < 4 {
		t.Fatalf("%s%d frames, want 4", label, len(frames))
	}
	check(t, frames[1], unwind.TrustCFI, rtSigreturn, c.sp)
	unwindtest.CheckSignal(t, c.u, label, frames, c.want)
	check(t, frames[3], unwind.TrustCFI, 0x403024, c.isp)
}

// TestSignalFrame: the trampoline recognised by its code bytes, by its
// name, and from the stack (neither given); the interrupted function's
// rules are looked up at its pc (0x402010), not pc-4.
func TestSignalFrame(t *testing.T) {
	for _, how := range []string{"code", "name", "stack"} {
		c := newSignalCase(t)
		switch how {
		case "name":
			c.env.FuncNames = map[uint64]string{rtSigreturn: "__kernel_rt_sigreturn"}
		case "code":
			c.env.Code = map[uint64][]byte{rtSigreturn: {0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4}}
		}
		c.check(t, fmt.Sprintf("by %s: ", how))
	}
}

// TestSignalFrameFromStackRejected: a frame that fails one of the checks is
// not taken for a signal frame.
func TestSignalFrameFromStackRejected(t *testing.T) {
	mc := uint64(128 + 176)
	for _, tc := range []struct {
		name string
		off  uint64 // from the handler's sp
		v    uint64
	}{
		{"uc_link set", 128 + 8, 0x7fff0000},
		{"pstate at EL1", mc + 8 + 33*8, 0x60000005},
		{"no FPSIMD magic", mc + 288, 528<<32 | 0x46508002},
		{"FPSIMD size", mc + 288, 512<<32 | 0x46508001},
		{"pc in no module", mc + 8 + 32*8, 0x9000000},
		{"sp below the frame", mc + 8 + 31*8, 0},
	} {
		c := newSignalCase(t)
		v := tc.v
		if tc.name == "sp below the frame" {
			v = c.sp + 8
		}
		c.env.Put(c.sp+tc.off, v)
		for _, f := range unwindtest.Walk(c.u, c.env, c.ctx, 10) {
			if f.Trust == unwind.TrustSignal || f.Trampoline {
				t.Errorf("%s: signal frame found at %#x", tc.name, f.Regs[arm64.RegPC])
			}
		}
	}
}
