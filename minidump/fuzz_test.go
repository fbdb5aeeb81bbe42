package minidump_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/arm"
	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
)

// seedDumps returns small synthetic dumps covering every stream the reader
// knows, plus the corpus's small dumps when the corpus is present.
func seedDumps(tb testing.TB) [][]byte {
	var seeds [][]byte
	for _, cpu := range []arch.CPU{arch.X86, arch.AMD64, arch.ARM, arch.ARM64} {
		b := synth.New(cpu, minidump.PlatformLinux)
		var ctx *minidump.Context
		switch cpu {
		case arch.X86:
			ctx = synth.X86(&x86.Context{ContextFlags: x86.ContextFull, Eip: 0x1000, Esp: 0x8000})
		case arch.AMD64:
			ctx = synth.AMD64(&amd64.Context{ContextFlags: amd64.ContextFull, Rip: 0x1000, Rsp: 0x8000})
		case arch.ARM:
			ctx = synth.ARM(&arm.Context{ContextFlags: arm.ContextFull})
		case arch.ARM64:
			ctx = &minidump.Context{CPU: arch.ARM64, ARM64Old: &arm64.OldContext{ContextFlags: arm64.ContextARM64Old | 7}}
		}
		s := synth.NewStack(0x8000, cpu.PointerSize())
		s.Ptr(0x1234)
		b.AddThread(1, ctx, s)
		b.AddELFModule("/bin/a", 0x1000, 0x1000, []byte{1, 2, 3, 4, 5})
		b.AddPDBModule("b.dll", 0x4000, 0x1000, minidump.GUID{Data1: 1}, 2, "b.pdb")
		b.AddMemory(0x2000, []byte("memory"))
		b.SetException(1, 0xb, 0x10, ctx)
		b.SetBreakpadInfo(minidump.BreakpadInfo{Validity: 3, DumpThreadID: 2, RequestingThreadID: 1})
		b.SetMiscInfo(minidump.MiscInfo{SizeOfInfo: minidump.MiscInfo3Size, Flags1: 0xff})
		b.AddStream(minidump.LinuxMaps, []byte("1000-2000 r-xp 00000000 08:01 5 /bin/a\n"))
		b.AddStream(minidump.LinuxCmdLine, []byte("a\x00"))
		b.AddStream(minidump.LinuxAuxv, make([]byte, 32))
		data, err := b.Bytes()
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	w := minidump.NewWriter()
	w.Memory64List([]minidump.MemoryRange{{Start: 0x1000, Data: []byte("abc")}})
	w.MemoryInfoList([]minidump.MemoryInfo{{BaseAddress: 0x1000, RegionSize: 0x1000}})
	if data, err := w.Bytes(); err == nil {
		seeds = append(seeds, data)
	}
	for _, p := range []string{"breakpad/processor/linux_null_dereference.dmp",
		"rust-minidump/testdata/simple-crashpad.dmp",
		"breakpad/processor/thread_name_list.dmp"} {
		// Used when present; the corpus is never copied into the repository.
		if data, err := os.ReadFile(filepath.Join(corpus.Path(), p)); err == nil && len(data) < 1<<20 {
			seeds = append(seeds, data)
		}
	}
	return seeds
}

// readEverything calls every accessor of f; it must never panic.
func readEverything(f *minidump.File) {
	threads, _ := f.ThreadList()
	for i := range threads {
		f.StackMemory(&threads[i])
	}
	mods, _ := f.ModuleList()
	f.CheckModuleList(mods)
	f.StrictModuleList()
	if kept, _, _ := f.ModuleListSkipping(); len(kept) > len(mods) && mods != nil {
		panic("ModuleListSkipping kept more modules than the list has")
	}
	for i := range mods {
		m := &mods[i]
		m.CodeFile()
		m.CodeIdentifier()
		m.DebugFile()
		m.DebugIdentifier()
		m.RustCodeIdentifier()
		m.RustDebugIdentifier()
		m.Version()
	}
	if mem, _ := f.Memory(); mem != nil {
		for _, r := range mem.Regions() {
			mem.ReadMemory(r.Start, int(min(r.Size, 64)))
			mem.ReadMemory(r.End()-1, 8)
		}
		mem.ReadMemory(0x1000, 8)
	}
	f.Exception()
	if si, err := f.SystemInfo(); err == nil {
		si.CPUVendor()
	}
	f.MiscInfo()
	f.BreakpadInfo()
	f.AssertionInfo()
	f.MemoryInfoList()
	f.ThreadNames()
	f.ThreadInfoList()
	if ul, _ := f.UnloadedModuleList(); len(ul) > 0 {
		ul[0].RustCodeIdentifier()
	}
	f.HandleData()
	f.CrashpadInfo()
	maps, mapsErr := f.LinuxMaps()
	if n, err := f.LinuxMapCount(); n != len(maps) || fmt.Sprint(err) != fmt.Sprint(mapsErr) {
		panic(fmt.Sprintf("LinuxMapCount = %d, %v; LinuxMaps gave %d entries, %v", n, err, len(maps), mapsErr))
	}
	f.LinuxDSODebug()
	auxv, _ := f.LinuxAuxv()
	for _, e := range auxv {
		if v, ok := f.LinuxAuxvValue(e.Type); !ok || v != firstAuxv(auxv, e.Type) {
			panic(fmt.Sprintf("LinuxAuxvValue(%d) = %#x, %v; the list's first is %#x", e.Type, v, ok, firstAuxv(auxv, e.Type)))
		}
	}
	f.LinuxCPUInfo()
	f.LinuxProcStatus()
	f.LinuxLSBRelease()
	f.LinuxCmdLine()
	f.LinuxEnviron()
}

// firstAuxv returns the value of the first auxv entry of type typ.
func firstAuxv(entries []minidump.AuxvEntry, typ uint64) uint64 {
	for _, e := range entries {
		if e.Type == typ {
			return e.Value
		}
	}
	return 0
}

func FuzzFile(f *testing.F) {
	for _, s := range seedDumps(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if file, err := minidump.NewFileBytes(data); err == nil {
			readEverything(file)
		}
		if file, err := minidump.NewFile(bytes.NewReader(data), int64(len(data))); err == nil {
			readEverything(file)
		}
	})
}

func FuzzDecodeContext(f *testing.F) {
	f.Add((&x86.Context{ContextFlags: x86.ContextFull}).Encode(), uint8(arch.X86))
	f.Add((&amd64.Context{ContextFlags: amd64.ContextFull}).Encode(), uint8(arch.AMD64))
	f.Add((&arm.Context{ContextFlags: 0x2}).Encode(), uint8(arch.ARM))
	f.Add((&arm64.Context{ContextFlags: arm64.ContextFull}).Encode(), uint8(arch.ARM64))
	f.Add((&arm64.OldContext{ContextFlags: arm64.ContextARM64Old}).Encode(), uint8(arch.ARM64))
	f.Fuzz(func(t *testing.T, b []byte, cpu uint8) {
		c, err := minidump.DecodeContext(b, arch.CPU(cpu%13))
		if err != nil {
			return
		}
		c.InstructionPointer()
		c.StackPointer()
		c.Flags()
		// A decoded context re-encodes to the bytes it came from.
		enc := c.Encode()
		if len(enc) > len(b) || !bytes.Equal(enc, b[:len(enc)]) {
			t.Fatalf("%v context does not round-trip", c.CPU)
		}
	})
}

func FuzzParseMaps(f *testing.F) {
	f.Add([]byte("00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/a\n7fff0000-7fff1000 rw-p 00000000 00:00 0 [stack]\n"))
	f.Add([]byte("ffffffffff600000-ffffffffff601000 r-xp 00000000 00:"))
	f.Add([]byte("+10-20 r-xp 0x0 00:00 1_0\nFFFFFFFFFFFFFFFF-10000000000000000 ---p 0 0 18446744073709551616\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := minidump.ParseMaps(b)
		for _, e := range entries {
			if e.End < e.Start {
				t.Fatalf("entry ends before it starts: %+v", e)
			}
		}
		// Counting agrees with parsing, error included.
		n, cerr := minidump.CountMaps(b)
		if n != len(entries) || fmt.Sprint(cerr) != fmt.Sprint(err) {
			t.Fatalf("CountMaps = %d, %v; ParseMaps gave %d entries, %v", n, cerr, len(entries), err)
		}
	})
}
