package synth_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/arm"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
)

func TestStack(t *testing.T) {
	s := synth.NewStack(0x1000, 4)
	if a := s.U32(1); a != 0x1000 {
		t.Errorf("first value at %#x", a)
	}
	if a := s.Ptr(0xdeadbeef); a != 0x1004 {
		t.Errorf("pointer at %#x", a)
	}
	if a := s.U64(2); a != 0x1008 {
		t.Errorf("u64 at %#x", a)
	}
	s.Zeros(3)
	s.Align(8)
	if s.Here() != 0x1018 || len(s.Bytes()) != 0x18 || s.Start() != 0x1000 {
		t.Errorf("here %#x, %d bytes", s.Here(), len(s.Bytes()))
	}
	if s.Bytes()[4] != 0xef || s.Bytes()[7] != 0xde {
		t.Errorf("4-byte pointer encoding: %x", s.Bytes()[4:8])
	}
}

func TestBuilderX86Windows(t *testing.T) {
	b := synth.New(arch.X86, minidump.PlatformWin32NT)
	s := synth.NewStack(0x12f000, 4)
	ret := s.Ptr(0x401234)
	ctx := &x86.Context{ContextFlags: x86.ContextFull, Eip: 0x401000, Esp: uint32(ret), Ebp: 0x12f010}
	b.AddThread(0xbf4, synth.X86(ctx), s)
	b.AddPDBModule("app.exe", 0x400000, 0x2d000, minidump.GUID{Data1: 0x5a9832e5}, 1, "app.pdb").TimeDateStamp = 0x45d35f6c
	b.SetException(0xbf4, 0xc0000005, 0x45, synth.X86(ctx))
	b.SetBreakpadInfo(minidump.BreakpadInfo{Validity: 3, DumpThreadID: 1, RequestingThreadID: 0xbf4})
	f, err := b.File()
	if err != nil {
		t.Fatal(err)
	}
	si, err := f.SystemInfo()
	if err != nil || si.CPU() != arch.X86 || si.CPUVendor() != "GenuineIntel" || si.OSName() != "windows" {
		t.Fatalf("system info %+v %v", si, err)
	}
	th, err := f.ThreadList()
	if err != nil || th[0].Context.X86.Eip != 0x401000 {
		t.Fatalf("threads %v", err)
	}
	mem, _ := f.Memory()
	if v, err := mem.ReadUint32(ret); err != nil || v != 0x401234 {
		t.Errorf("return address %#x %v", v, err)
	}
	mods, _ := f.ModuleList()
	if mods[0].CodeIdentifier() != "45D35F6C2d000" || mods[0].DebugIdentifier() != "5A9832E50000000000000000000000001" {
		t.Errorf("identity %q %q", mods[0].CodeIdentifier(), mods[0].DebugIdentifier())
	}
	e, err := f.Exception()
	if err != nil || e.ExceptionRecord.ExceptionAddress != 0x45 || e.Context.CPU != arch.X86 {
		t.Errorf("exception %+v %v", e, err)
	}
}

func TestBuilderARMWithoutStack(t *testing.T) {
	b := synth.New(arch.ARM, minidump.PlatformAndroid)
	b.AddThread(3, synth.ARM(&arm.Context{ContextFlags: arm.ContextFull}), nil)
	f, err := b.File()
	if err != nil {
		t.Fatal(err)
	}
	th, err := f.ThreadList()
	if err != nil || th[0].Stack.Memory.DataSize != 0 || th[0].Context.CPU != arch.ARM {
		t.Errorf("thread %+v %v", th, err)
	}
	if _, err := f.StackMemory(&th[0]); err != nil {
		t.Errorf("empty stack: %v", err)
	}
}
