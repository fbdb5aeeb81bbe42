package capture

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/x86"
)

// unhex decodes space-separated hex bytes.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The registers of a 32-bit program (crasher segv, i686-linux-gnu-gcc -O0)
// stopped at its SIGSEGV, as a 64-bit tracer read them on Linux 6.18 x86-64:
// PTRACE_GETREGSET NT_PRSTATUS returns i386's 68-byte user_regs_struct (what
// Go's syscall.PtraceGetRegs asks for), PTRACE_GETREGS the 216-byte x86-64
// one. gdb shows the same stop, addresses moved by ASLR aside, as eip
// crash_here+221 (module offset 0x1316), eax 3, ecx 0x62, edx 0,
// eflags 0x10202, cs 0x23, ss/ds/es 0x2b, fs 0, gs 0x63.
const (
	i386Regset = `f4 5f 58 56 62 00 00 00 00 00 00 00 70 52 ab ff 80 3b fb f7 a8 51 ab ff 03 00 00 00 2b 00 00 00
		2b 00 00 00 00 00 00 00 63 00 00 00 ff ff ff ff 16 33 58 56 23 00 00 00 02 02 01 00 90 51 ab ff 2b 00 00 00`
	amd64GetRegs = `00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
		a8 51 ab ff 00 00 00 00 f4 5f 58 56 00 00 00 00 92 02 00 00 00 00 00 00 00 00 00 00 00 00 00 00
		00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 03 00 00 00 00 00 00 00 62 00 00 00 00 00 00 00
		00 00 00 00 00 00 00 00 70 52 ab ff 00 00 00 00 80 3b fb f7 00 00 00 00 ff ff ff ff ff ff ff ff
		16 33 58 56 00 00 00 00 23 00 00 00 00 00 00 00 02 02 01 00 00 00 00 00 90 51 ab ff 00 00 00 00
		2b 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 40 75 f7 f7 00 00 00 00 2b 00 00 00 00 00 00 00
		2b 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 63 00 00 00 00 00 00 00`
)

// TestLiveContext32 converts both forms of a 32-bit process's registers: the
// same x86 context either way, equal to what gdb showed. (The capture took
// NT_PRSTATUS's i386 words for x86-64 ones and wrote an amd64 context of junk.)
func TestLiveContext32(t *testing.T) {
	fx := make([]byte, fxsaveSize)
	fx[0], fx[1], fx[24], fx[25] = 0x7f, 0x03, 0x80, 0x1f // fcw 0x37f, mxcsr 0x1f80
	want := x86.Context{
		Eax: 3, Ecx: 0x62, Edx: 0, Ebx: 0x56585ff4, Esp: 0xffab5190, Ebp: 0xffab51a8, Esi: 0xffab5270, Edi: 0xf7fb3b80,
		Eip: 0x56583316, EFlags: 0x10202, Cs: 0x23, Ss: 0x2b, Ds: 0x2b, Es: 0x2b, Fs: 0, Gs: 0x63,
	}
	for _, form := range []struct{ name, regs string }{{"NT_PRSTATUS", i386Regset}, {"PTRACE_GETREGS", amd64GetRegs}} {
		c, cpu, err := liveContext(unhex(t, form.regs), fx)
		if err != nil {
			t.Fatalf("%s: %v", form.name, err)
		}
		xc, ok := c.(*x86.Context)
		if cpu != arch.X86 || !ok {
			t.Fatalf("%s: cpu %v, context %T; want x86", form.name, cpu, c)
		}
		got := *xc
		got.ContextFlags, got.FloatSave, got.ExtendedRegisters = 0, x86.FloatingSaveArea{}, [512]byte{}
		if got != want {
			t.Errorf("%s: context\n%+v\nwant\n%+v", form.name, got, want)
		}
		if xc.ContextFlags&x86.ContextFull != x86.ContextFull || xc.ExtendedRegisters[24] != 0x80 || xc.FloatSave.ControlWord&0xffff != 0x37f {
			t.Errorf("%s: flags %#x, fxsave or fsave not kept", form.name, xc.ContextFlags)
		}
	}
}

// TestLiveContext64 converts a 64-bit process's NT_PRSTATUS and rejects
// register sets of other sizes.
func TestLiveContext64(t *testing.T) {
	r := make([]byte, amd64NumRegs*8)
	r[amd64Rip*8], r[amd64Rsp*8], r[amd64Cs*8] = 0x11, 0x22, 0x33
	c, cpu, err := liveContext(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ac, ok := c.(*amd64.Context); cpu != arch.AMD64 || !ok || ac.Rip != 0x11 || ac.Rsp != 0x22 || ac.Cs != 0x33 {
		t.Errorf("cpu %v context %+v", cpu, c)
	}
	for _, n := range []int{0, 4, 64, 72, 208, 224} {
		if _, _, err := liveContext(make([]byte, n), nil); err == nil {
			t.Errorf("%d bytes of registers accepted", n)
		}
	}
}

// TestMachine checks the machine name of the system info's uname line: the
// host's for a CPU that runs natively on it, as Breakpad's client in a
// 32-bit x86 process on x86-64 records x86_64; the CPU's own otherwise.
func TestMachine(t *testing.T) {
	for _, c := range []struct {
		host string
		cpu  arch.CPU
		want string
	}{
		{"x86_64", arch.X86, "x86_64"},
		{"x86_64", arch.AMD64, "x86_64"},
		{"x86_64", arch.ARM64, "aarch64"}, // a qemu-aarch64 core converted here
		{"aarch64", arch.ARM64, "aarch64"},
		{"", arch.X86, "i686"},
		{"i686", arch.X86, "i686"},
	} {
		p := &Process{CPU: c.cpu, OSMachine: c.host, OSRelease: "6.1", OSVersion: "#1"}
		if got := p.machine(); got != c.want {
			t.Errorf("%s host, %v process: machine %q, want %q", c.host, c.cpu, got, c.want)
		}
		if csd := p.systemInfo().CSDVersion; !strings.HasSuffix(csd, " "+c.want) {
			t.Errorf("%s host, %v process: uname line %q", c.host, c.cpu, csd)
		}
	}
}
