package x86_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/unwind"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
	x86unwind "github.com/gobreakpad/gobreakpad/unwind/x86"
)

// TestVsyscall: a thread stopped in Linux i386's __kernel_vsyscall (the
// vDSO's code not in the dump, no rules) is unwound from the function's
// shape, only while the guard holds: the saved edx, ecx and ebp (or ebp =
// esp, the shape before Linux 4.2) equal the registers, the return address
// is after a call in a module. The registers are those of
// testdata/signal/x86-native-abort-nocode (raise → pthread_kill → tgkill).
func TestVsyscall(t *testing.T) {
	const vdso, pc, ra = 0xf7f32000, 0xf7f325e9, 0x402050
	tail := []byte{0x5d, 0x5a, 0x59, 0xc3}
	for _, c := range []struct {
		name      string
		notVDSO   bool
		ebp       uint32 // 0: esp
		edx       uint32
		code      []byte // at pc
		callerOK  bool   // found by the rule
		callerEBP uint32
		entry     uint64 // AT_SYSINFO; 0: unknown
		named     bool   // the caller is marked CalleeVsyscall
	}{
		{name: "new shape", ebp: 6, edx: 6, callerOK: true, callerEBP: 6},
		{name: "AT_SYSINFO", ebp: 6, edx: 6, callerOK: true, callerEBP: 6, entry: pc - 9, named: true},
		{name: "AT_SYSINFO old shape", ebp: 0, edx: 6, callerOK: true, callerEBP: 6, entry: pc - 16, named: true},
		{name: "AT_SYSINFO too far", ebp: 6, edx: 6, entry: pc - 17},
		{name: "AT_SYSINFO after pc", ebp: 6, edx: 6, entry: pc + 1},
		{name: "AT_SYSINFO outside the vDSO", ebp: 6, edx: 6, callerOK: true, callerEBP: 6, entry: 0x401000},
		{name: "old shape", ebp: 0, edx: 6, callerOK: true, callerEBP: 6},
		{name: "code in dump", ebp: 6, edx: 6, code: tail, callerOK: true, callerEBP: 6},
		{name: "other code in dump", ebp: 6, edx: 6, code: []byte{0x90, 0x90, 0x90, 0xc3}},
		{name: "edx not saved", ebp: 6, edx: 7},
		{name: "not the vDSO", notVDSO: true, ebp: 6, edx: 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv()
			env.IsWindows = false
			env.Modules = append(env.Modules, unwindtest.Module{Base: vdso, Size: 0x2000, VDSO: !c.notVDSO})
			env.Vsyscall = c.entry
			if c.code != nil {
				env.Code = map[uint64][]byte{pc: c.code}
			}
			sp := env.Push(6, 6, 0x7e22, ra, 0, 0)
			ebp := c.ebp
			if ebp == 0 {
				ebp = uint32(sp)
			}
			f, err := x86unwind.Unwinder{}.ContextFrame(&x86.Context{Eip: pc, Esp: uint32(sp), Ebp: ebp,
				Ebx: 0x7e22, Esi: 0x7e22, Edi: 0x81e2380, Ecx: 0x7e22, Edx: c.edx}, env)
			if err != nil {
				t.Fatal(err)
			}
			got := (x86unwind.Unwinder{}).Caller(env, []*unwind.Frame{f}, true)
			if !c.callerOK {
				if got != nil && got.Trust == unwind.TrustFP && got.Regs[x86.ESP] == sp+16 {
					t.Errorf("the rule applied: %+v", got)
				}
				return
			}
			if got == nil {
				t.Fatal("no caller")
			}
			check(t, got, unwind.TrustFP, ra, sp+16, uint64(c.callerEBP))
			if got.CalleeVsyscall != c.named {
				t.Errorf("CalleeVsyscall = %v, want %v", got.CalleeVsyscall, c.named)
			}
			if got.Regs[x86.ECX] != 0x7e22 || got.Regs[x86.EDX] != 6 || got.Regs[x86.EBX] != 0x7e22 || !got.Has(x86.EDI) {
				t.Errorf("caller's registers %+v", got.Context)
			}
		})
	}
}

// TestVsyscallSignalInterrupted: the case: a signal arrived while
// raise's system call was in __kernel_vsyscall; the frame restored from
// the signal frame is interrupted there and unwinds by the shape, to the
// caller in libc, where the ebp chain (ebp pointing at a frame record of an
// older call) skipped raise and its caller.
func TestVsyscallSignalInterrupted(t *testing.T) {
	const vdso, pc, ra = 0xf7f32000, 0xf7f325e9, 0x402050
	env := newEnv()
	env.IsWindows = false
	env.Modules = append(env.Modules, unwindtest.Module{Base: vdso, Size: 0x2000, VDSO: true})
	sp := env.Push(0, 9, 0x7e22, ra, 0, 0)
	old := env.Push(0, 0x403050) // a stale frame record above
	f := &unwind.Frame{Trust: unwind.TrustFP, Interrupted: true}
	f.Regs[x86.EIP], f.Regs[x86.ESP], f.Regs[x86.EBP] = pc, sp, old
	f.Regs[x86.EDX], f.Regs[x86.ECX] = 9, 0x7e22
	f.Valid = 1<<x86.EIP | 1<<x86.ESP | 1<<x86.EBP | 1<<x86.EDX | 1<<x86.ECX
	// ebp is not the saved 0: only the old shape's ebp = esp would pass.
	if got := (x86unwind.Unwinder{}).Caller(env, []*unwind.Frame{f}, true); got != nil && got.Regs[x86.EIP] == ra && got.Trust == unwind.TrustFP {
		t.Errorf("the rule applied with ebp neither saved nor esp")
	}
	env.Put(sp, old)
	got := (x86unwind.Unwinder{}).Caller(env, []*unwind.Frame{f}, true)
	if got == nil {
		t.Fatal("no caller")
	}
	check(t, got, unwind.TrustFP, ra, sp+16, old)
}
