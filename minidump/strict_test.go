package minidump_test

import (
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
)

func TestStrictAccessors(t *testing.T) {
	b := synth.New(arch.AMD64, minidump.PlatformWin32NT)
	ctx := synth.AMD64(&amd64.Context{ContextFlags: amd64.ContextFull})
	stack := synth.NewStack(0x7000, 8)
	stack.U64(1)
	b.AddThread(5, ctx, stack)
	b.AddThread(5, ctx, nil)
	b.AddELFModule("a", 0x400000, 0x2000, []byte{1})
	b.AddELFModule("b", 0x401000, 0x1000, []byte{2})
	b.AddMemory(0x10000, make([]byte, 32))
	b.AddMemory(0x10010, make([]byte, 32))
	f, err := b.File()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.CheckStreams(); err != nil {
		t.Errorf("CheckStreams: %v", err)
	}
	threads, err := f.ThreadList()
	if err != nil || len(threads) != 2 {
		t.Fatalf("ThreadList: %d threads, %v", len(threads), err)
	}
	if !threads[0].HasStack() || threads[1].HasStack() {
		t.Errorf("HasStack = %v, %v; want true, false", threads[0].HasStack(), threads[1].HasStack())
	}
	for name, check := range map[string]func() error{
		"StrictThreadList": func() error { _, err := f.StrictThreadList(); return err },
		"StrictModuleList": func() error { _, err := f.StrictModuleList(); return err },
		"StrictMemoryList": func() error { _, err := f.StrictMemoryList(); return err },
	} {
		if err := check(); err == nil {
			t.Errorf("%s accepted the repeat or overlap", name)
		}
	}
	if _, err := f.ModuleList(); err != nil {
		t.Errorf("ModuleList refused overlapping modules: %v", err)
	}
	if _, err := f.RegionBytes(minidump.LocationDescriptor{DataSize: minidump.MaxRegionBytes + 1}); err == nil ||
		!strings.Contains(err.Error(), "exceeds") {
		t.Errorf("RegionBytes of a huge region: %v", err)
	}
}

func TestExceptionParameter(t *testing.T) {
	e := &minidump.Exception{ThreadContext: minidump.LocationDescriptor{DataSize: 0x4d0, Rva: 0x1234}}
	e.ExceptionRecord.ExceptionInformation[14] = 7
	for i, want := range map[uint32]uint64{14: 7, 15: 0x1234_000004d0, 16: 0} {
		if got := e.Parameter(i); got != want {
			t.Errorf("Parameter(%d) = %#x, want %#x", i, got, want)
		}
	}
}
