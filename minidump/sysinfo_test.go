package minidump

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
)

// TestArchitecture checks that Architecture inverts SystemInfo.CPU for every
// CPU, and PlatformNamed SystemInfo.OSName for every named platform.
func TestArchitecture(t *testing.T) {
	for c := arch.Unknown; c <= arch.LoongArch64; c++ {
		a := Architecture(c)
		if got := (&SystemInfo{ProcessorArchitecture: a}).CPU(); got != c {
			t.Errorf("Architecture(%v) = %#x, whose CPU is %v", c, uint16(a), got)
		}
	}
	if a := Architecture(arch.X86); a != ArchX86 {
		t.Errorf("Architecture(x86) = %#x, want ArchX86", uint16(a))
	}
	if a := Architecture(arch.ARM64); a != ArchARM64 {
		t.Errorf("Architecture(arm64) = %#x, want ArchARM64", uint16(a))
	}
	named := 0
	for p := PlatformID(0); p <= 0x8300; p++ {
		name := (&SystemInfo{PlatformID: p}).OSName()
		if name == "" {
			continue
		}
		named++
		q, ok := PlatformNamed(name)
		if got := (&SystemInfo{PlatformID: q}).OSName(); !ok || got != name {
			t.Errorf("PlatformNamed(%q) = %#x, %v, whose name is %q", name, uint32(q), ok, got)
		}
	}
	if named != 10 {
		t.Errorf("%d named platforms, want 10", named)
	}
	if p, _ := PlatformNamed("windows"); p != PlatformWin32NT {
		t.Errorf("PlatformNamed(windows) = %#x, want PlatformWin32NT", uint32(p))
	}
	if _, ok := PlatformNamed("beos"); ok {
		t.Error("PlatformNamed(beos) found a platform")
	}
}
