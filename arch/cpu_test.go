package arch

import "testing"

func TestCPU(t *testing.T) {
	for _, c := range []struct {
		cpu  CPU
		name string
		ptr  int
	}{{X86, "x86", 4}, {AMD64, "amd64", 8}, {ARM, "arm", 4}, {ARM64, "arm64", 8}, {Unknown, "unknown", 0}, {CPU(99), "unknown", 0}, {CPU(-1), "unknown", 0}} {
		if c.cpu.String() != c.name || c.cpu.PointerSize() != c.ptr {
			t.Errorf("%d: %q %d", int(c.cpu), c.cpu.String(), c.cpu.PointerSize())
		}
	}
}

func TestCPUNamed(t *testing.T) {
	for c := Unknown; c <= LoongArch64; c++ {
		if got := CPUNamed(c.String()); got != c {
			t.Errorf("CPUNamed(%q) = %v", c.String(), got)
		}
	}
	if got := CPUNamed("x86_64"); got != Unknown {
		t.Errorf("CPUNamed(x86_64) = %v, want unknown", got)
	}
}
