package minidump_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/arm"
	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
)

func TestRoundTripAMD64Linux(t *testing.T) {
	b := synth.New(arch.AMD64, minidump.PlatformLinux)
	b.SystemInfo.CSDVersion = "Linux 6.1.0 #1 SMP x86_64"
	b.TimeDateStamp = 0x55832fb4
	stack := synth.NewStack(0x7fff0000, 8)
	stack.Zeros(16)
	ret := stack.Ptr(0x401234)
	stack.Zeros(8)
	ctx := &amd64.Context{ContextFlags: amd64.ContextFull, Rip: 0x401000, Rsp: 0x7fff0010, Rbp: 0x7fff0020, R15: 7}
	b.AddThread(0x5028, synth.AMD64(ctx), stack)
	b.AddThread(0x5029, synth.AMD64(&amd64.Context{ContextFlags: amd64.ContextFull, Rip: 0x402000}), nil)
	buildID := []byte{0x7b, 0x4f, 0xc0, 0xb7, 0x2a, 0x5c, 0xaf, 0x80, 0x87, 0x0a, 0x1c, 0x23, 0x46, 0x68, 0xa0, 0xde, 0x11, 0x22, 0x33, 0x44}
	b.AddELFModule("/usr/bin/driver", 0x400000, 0x17000, buildID)
	b.AddModule("/lib/libnoid.so", 0x7f0000000000, 0x1000, nil)
	b.AddMemory(0x600000, []byte("heap bytes"))
	b.SetExceptionRecord(0x5028, minidump.ExceptionRecord{ExceptionCode: 0xb, ExceptionAddress: 0x0, NumberParameters: 2,
		ExceptionInformation: [15]uint64{1, 2}}, synth.AMD64(ctx))
	b.SetBreakpadInfo(minidump.BreakpadInfo{Validity: 3, DumpThreadID: 0x5030, RequestingThreadID: 0x5028})
	maps := "00400000-00417000 r-xp 00000000 08:01 1234   /usr/bin/driver\n7fff0000-7fff1000 rw-p 00000000 00:00 0 [stack]\n"
	b.AddStream(minidump.LinuxMaps, []byte(maps))
	b.AddStream(minidump.LinuxCmdLine, []byte("driver\x00"))
	f, err := b.File()
	if err != nil {
		t.Fatal(err)
	}
	if f.Header.TimeDateStamp != 0x55832fb4 || f.Header.Signature != minidump.HeaderSignature {
		t.Errorf("header = %+v", f.Header)
	}

	threads, err := f.ThreadList()
	if err != nil {
		t.Fatal(err)
	}
	if len(threads) != 2 {
		t.Fatalf("got %d threads, want 2", len(threads))
	}
	th := threads[0]
	if th.ThreadID != 0x5028 || th.ContextErr != nil || th.Context.CPU != arch.AMD64 {
		t.Fatalf("thread 0 = %+v", th)
	}
	if got := *th.Context.AMD64; got != *ctx {
		t.Errorf("context round trip: got %+v", got)
	}
	if th.Context.InstructionPointer() != 0x401000 || th.Context.StackPointer() != 0x7fff0010 {
		t.Errorf("ip/sp = %#x/%#x", th.Context.InstructionPointer(), th.Context.StackPointer())
	}
	st, err := f.StackMemory(&th)
	if err != nil || !bytes.Equal(st, stack.Bytes()) {
		t.Errorf("stack = %x, %v", st, err)
	}

	mem, err := f.Memory()
	if err != nil {
		t.Fatal(err)
	}
	if len(mem.Regions()) != 2 {
		t.Errorf("memory regions = %+v", mem.Regions())
	}
	if v, err := mem.ReadUint64(ret); err != nil || v != 0x401234 {
		t.Errorf("ReadUint64(%#x) = %#x, %v", ret, v, err)
	}
	if got, err := mem.ReadMemory(0x600005, 5); err != nil || string(got) != "bytes" {
		t.Errorf("ReadMemory heap = %q, %v", got, err)
	}
	if _, err := mem.ReadMemory(0x600005, 6); err == nil {
		t.Error("read past the end of a range succeeded")
	}
	if _, err := mem.ReadMemory(0x500000, 1); err == nil {
		t.Error("read of unsaved memory succeeded")
	}

	mods, err := f.ModuleList()
	if err != nil {
		t.Fatal(err)
	}
	m := mods[0]
	if m.CodeFile() != "/usr/bin/driver" || m.DebugFile() != "/usr/bin/driver" {
		t.Errorf("code/debug file = %q/%q", m.CodeFile(), m.DebugFile())
	}
	if got, want := m.CodeIdentifier(), "7b4fc0b72a5caf80870a1c234668a0de11223344"; got != want {
		t.Errorf("code id = %q, want %q", got, want)
	}
	if got, want := m.DebugIdentifier(), "B7C04F7B5C2A80AF870A1C234668A0DE0"; got != want {
		t.Errorf("debug id = %q, want %q", got, want)
	}
	if got := mods[1].CodeIdentifier(); got != "id" {
		t.Errorf("code id without build id = %q, want id", got)
	}
	if got := mods[1].DebugIdentifier(); got != "" {
		t.Errorf("debug id without record = %q", got)
	}

	e, err := f.Exception()
	if err != nil {
		t.Fatal(err)
	}
	if e.ThreadID != 0x5028 || e.ExceptionRecord.ExceptionCode != 0xb || len(e.ExceptionRecord.Parameters()) != 2 || e.Context.AMD64.Rip != 0x401000 {
		t.Errorf("exception = %+v", e)
	}
	si, err := f.SystemInfo()
	if err != nil {
		t.Fatal(err)
	}
	if si.CPU() != arch.AMD64 || si.OSName() != "linux" || si.CPUName() != "x86-64" || si.CSDVersion != "Linux 6.1.0 #1 SMP x86_64" || si.CPUVendor() != "GenuineIntel" {
		t.Errorf("system info = %+v", si)
	}
	bi, err := f.BreakpadInfo()
	if err != nil || bi.DumpThreadID != 0x5030 || bi.RequestingThreadID != 0x5028 {
		t.Errorf("breakpad info = %+v, %v", bi, err)
	}
	entries, err := f.LinuxMaps()
	if err != nil || len(entries) != 2 || entries[1].Path != "[stack]" || entries[0].Inode != 1234 || !entries[0].Executable() {
		t.Errorf("maps = %+v, %v", entries, err)
	}
	if cl, err := f.LinuxStream(minidump.LinuxCmdLine); err != nil || string(cl) != "driver\x00" {
		t.Errorf("cmdline = %q, %v", cl, err)
	}
	if _, err := f.MiscInfo(); !errors.Is(err, minidump.ErrNoStream) {
		t.Errorf("misc info of a dump without one: %v", err)
	}
}

func TestContextsRoundTrip(t *testing.T) {
	x := &x86.Context{ContextFlags: x86.ContextFull, Eip: 0x1000, Esp: 0x2000, Ebp: 0x2010}
	x.FloatSave.RegisterArea[3] = 9
	a := &arm.Context{ContextFlags: arm.ContextFull}
	a.Iregs[arm.RegPC], a.Iregs[arm.RegSP] = 0x8000, 0x9000
	a64 := &arm64.Context{ContextFlags: arm64.ContextFull, Cpsr: 0x60000000}
	a64.Iregs[arm64.RegPC], a64.Iregs[arm64.RegSP] = 0x5555, 0x7ffc
	a64.FloatSave.Regs[31] = arch.Uint128{Low: 1, High: 2}
	old := &arm64.OldContext{ContextFlags: arm64.ContextARM64Old | 0x3, Cpsr: 0x20000000}
	old.Iregs[arm64.RegPC], old.Iregs[arm64.RegSP] = 0x1234, 0x4321
	cases := []struct {
		cpu        arch.CPU
		ctx        *minidump.Context
		ip, sp     uint64
		wantFlags  uint32
		sysArch    minidump.ProcessorArchitecture
		wantOldSet bool
	}{
		{arch.X86, synth.X86(x), 0x1000, 0x2000, x86.ContextFull, minidump.ArchX86, false},
		{arch.ARM, synth.ARM(a), 0x8000, 0x9000, arm.ContextFull, minidump.ArchARM, false},
		{arch.ARM64, synth.ARM64(a64), 0x5555, 0x7ffc, arm64.ContextFull, minidump.ArchARM64, false},
		{arch.ARM64, &minidump.Context{CPU: arch.ARM64, ARM64Old: old}, 0x1234, 0x4321, arm64.ContextARM64 | 0x3, minidump.ArchARM64Old, true}, // old integer flag 0x2 becomes integer|control
	}
	for _, c := range cases {
		b := synth.New(c.cpu, minidump.PlatformLinux)
		b.AddThread(1, c.ctx, nil)
		f, err := b.File()
		if err != nil {
			t.Fatal(err)
		}
		threads, err := f.ThreadList()
		if err != nil {
			t.Fatal(err)
		}
		got := threads[0].Context
		if threads[0].ContextErr != nil {
			t.Errorf("%v: %v", c.cpu, threads[0].ContextErr)
			continue
		}
		if got.CPU != c.cpu || got.InstructionPointer() != c.ip || got.StackPointer() != c.sp || got.Flags() != c.wantFlags {
			t.Errorf("%v: cpu %v ip %#x sp %#x flags %#x", c.cpu, got.CPU, got.InstructionPointer(), got.StackPointer(), got.Flags())
		}
		if (got.ARM64Old != nil) != c.wantOldSet {
			t.Errorf("%v: ARM64Old set = %v", c.cpu, got.ARM64Old != nil)
		}
		if !bytes.Equal(got.Encode(), c.ctx.Encode()) {
			t.Errorf("%v: re-encoded context differs", c.cpu)
		}
	}
	if got := *mustContext(t, synth.X86(x)).X86; got != *x {
		t.Errorf("x86 context round trip: %+v", got)
	}
}

func mustContext(t *testing.T, c *minidump.Context) *minidump.Context {
	t.Helper()
	d, err := minidump.DecodeContext(c.Encode(), arch.Unknown)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestContextCPUFromSystemInfo(t *testing.T) {
	// An ARM context with no CPU bits in its flags gets its CPU from the system info.
	a := &arm.Context{ContextFlags: 0x2}
	a.Iregs[arm.RegPC] = 0x10
	got, err := minidump.DecodeContext(a.Encode(), arch.ARM)
	if err != nil || got.CPU != arch.ARM || got.InstructionPointer() != 0x10 {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := minidump.DecodeContext(a.Encode(), arch.Unknown); err == nil {
		t.Error("context without CPU bits or system info decoded")
	}
	if _, err := minidump.DecodeContext([]byte{1, 2}, arch.X86); err == nil {
		t.Error("2-byte context decoded")
	}
	// Wrong size for its CPU.
	if _, err := minidump.DecodeContext(make([]byte, 100), arch.X86); err == nil {
		t.Error("100-byte x86 context decoded")
	}
}

func TestWindowsModuleIdentity(t *testing.T) {
	b := synth.New(arch.X86, minidump.PlatformWin32NT)
	g := minidump.GUID{Data1: 0x1b504308, Data2: 0x5f17, Data3: 0x4da3, Data4: [8]byte{0x85, 0x52, 0x1d, 0xd4, 0x74, 0x0d, 0x17, 0x30}}
	m := b.AddPDBModule(`D:\crashme\Debug\crashme.exe`, 0x400000, 0x1a000, g, 0x14, `D:\crashme\Debug\crashme.pdb`)
	m.TimeDateStamp = 0x4ca3b56e
	m.VersionInfo = minidump.VSFixedFileInfo{Signature: minidump.VSFixedFileInfoSignature, StructVersion: 0x10000, FileVersionHi: 0x50001, FileVersionLo: 0xa280000}
	b.AddModule("nb10.dll", 0x500000, 0x2000, minidump.CodeViewPDB20Record(0x3c1a2b4d, 2, "nb10.pdb"))
	misc := make([]byte, 12, 32)
	misc = append(misc, "misc.dbg"...)
	misc[4] = byte(len(misc))
	b.AddModule("misc.dll", 0x600000, 0x2000, nil).Misc = misc
	f, err := b.File()
	if err != nil {
		t.Fatal(err)
	}
	mods, err := f.ModuleList()
	if err != nil {
		t.Fatal(err)
	}
	want := [][4]string{
		{"4CA3B56E1a000", `D:\crashme\Debug\crashme.pdb`, "1B5043085F174DA385521DD4740D173014", "5.1.2600.0"},
		{"000000002000", "nb10.pdb", "3C1A2B4D2", ""},
		{"000000002000", "misc.dbg", "", ""},
	}
	for i, w := range want {
		m := &mods[i]
		got := [4]string{m.CodeIdentifier(), m.DebugFile(), m.DebugIdentifier(), m.Version()}
		if got != w {
			t.Errorf("module %d: got %q, want %q (cv err %v, misc err %v)", i, got, w, m.CodeViewErr, m.MiscErr)
		}
	}
	if r, ok := mods[0].PDB70(); !ok || r.Signature != g || r.Age != 0x14 {
		t.Errorf("PDB70 = %+v, %v", r, ok)
	}
}

func TestMiscInfoVersions(t *testing.T) {
	for _, size := range []uint32{minidump.MiscInfoSize, minidump.MiscInfo2Size, minidump.MiscInfo3Size, minidump.MiscInfo4Size, minidump.MiscInfo5Size} {
		b := synth.New(arch.X86, minidump.PlatformWin32NT)
		mi := minidump.MiscInfo{SizeOfInfo: size, Flags1: 0xf7, ProcessID: 5376, ProcessCreateTime: 0x4ca3b571, ProcessorMaxMhz: 2262, ProcessCookie: 77}
		mi.TimeZone.Bias = 480
		copy(mi.TimeZone.StandardName[:], []uint16{'P', 'S', 'T'})
		b.SetMiscInfo(mi)
		f, err := b.File()
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.MiscInfo()
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if got.SizeOfInfo != size || got.ProcessID != 5376 || got.ProcessCreateTime != 0x4ca3b571 {
			t.Errorf("size %d: %+v", size, got)
		}
		if (got.ProcessorMaxMhz == 2262) != (size >= minidump.MiscInfo2Size) {
			t.Errorf("size %d: processor_max_mhz %d", size, got.ProcessorMaxMhz)
		}
		if (minidump.UTF16String(got.TimeZone.StandardName[:]) == "PST") != (size >= minidump.MiscInfo3Size) {
			t.Errorf("size %d: standard name %q", size, minidump.UTF16String(got.TimeZone.StandardName[:]))
		}
		if (got.ProcessCookie == 77) != (size >= minidump.MiscInfo5Size) {
			t.Errorf("size %d: cookie %d", size, got.ProcessCookie)
		}
	}
}

func TestMemory64List(t *testing.T) {
	w := minidump.NewWriter()
	w.Memory64List([]minidump.MemoryRange{{Start: 0x1000, Data: []byte("abcd")}, {Start: 0x3000, Data: []byte("efghij")}})
	data, err := w.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	f, err := minidump.NewFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	mem, err := f.Memory()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := mem.ReadMemory(0x3002, 4); err != nil || string(got) != "ghij" {
		t.Errorf("ReadMemory = %q, %v", got, err)
	}
	if got, err := mem.ReadMemory(0x1000, 4); err != nil || string(got) != "abcd" {
		t.Errorf("ReadMemory = %q, %v", got, err)
	}
}

func TestMemoryInfoList(t *testing.T) {
	w := minidump.NewWriter()
	w.MemoryInfoList([]minidump.MemoryInfo{{BaseAddress: 0x1000, RegionSize: 0x1000, State: minidump.MemCommit, Protect: minidump.PageExecuteRead}})
	data, _ := w.Bytes()
	f, err := minidump.NewFileBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	l, err := f.MemoryInfoList()
	if err != nil || len(l.Entries) != 1 || !l.Entries[0].Executable() || l.Entries[0].RegionSize != 0x1000 {
		t.Errorf("memory info list = %+v, %v", l, err)
	}
}

func TestUnloadedModuleList(t *testing.T) {
	want := []minidump.UnloadedModule{
		{BaseOfImage: 0x7ff000000000, SizeOfImage: 0x2000, CheckSum: 7, TimeDateStamp: 0x5e000000, Name: `C:\Windows\gone.dll`},
		{BaseOfImage: 0x10000, SizeOfImage: 0x1000, Name: "other.dll"},
	}
	w := minidump.NewWriter()
	w.UnloadedModuleList(want)
	data, _ := w.Bytes()
	f, err := minidump.NewFileBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.UnloadedModuleList()
	if err != nil || len(got) != len(want) {
		t.Fatalf("unloaded modules = %+v, %v", got, err)
	}
	for i := range want {
		got[i].ModuleNameRva = 0
		if got[i] != want[i] {
			t.Errorf("unloaded module %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestOpenMappedAndRead(t *testing.T) {
	big := bytes.Repeat([]byte{0xab}, 3<<20) // past the size Open reads whole: mapped
	for _, size := range []int{100, len(big)} {
		w := minidump.NewWriter()
		w.AddMemory(0x10000, big[:size])
		data, err := w.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "m.dmp")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := minidump.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		m, err := f.Memory()
		if err != nil {
			t.Fatal(err)
		}
		if b, err := m.ReadMemory(0x10000+uint64(size)-4, 4); err != nil || !bytes.Equal(b, big[:4]) {
			t.Errorf("size %d: read %x, %v", size, b, err)
		}
		if f.Size() != int64(len(data)) {
			t.Errorf("Size = %d, want %d", f.Size(), len(data))
		}
		if err := f.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}
	empty := filepath.Join(t.TempDir(), "empty.dmp")
	os.WriteFile(empty, nil, 0o644)
	if _, err := minidump.Open(empty); err == nil {
		t.Error("empty file opened")
	}
	if _, err := minidump.Open(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("missing file opened")
	}
}

func TestProcessUptime(t *testing.T) {
	m := &minidump.MiscInfo{Flags1: minidump.MiscInfoProcessTimes, ProcessCreateTime: 100}
	if s, ok := m.ProcessUptime(160); !ok || s != 60 {
		t.Errorf("uptime = %d, %v", s, ok)
	}
	if _, ok := m.ProcessUptime(50); ok {
		t.Error("uptime before creation")
	}
	m.Flags1 = minidump.MiscInfoProcessID
	if _, ok := m.ProcessUptime(160); ok {
		t.Error("uptime without valid process times")
	}
}

func TestWriterSkipsEmptyMemory(t *testing.T) {
	w := minidump.NewWriter()
	w.ThreadList([]minidump.ThreadData{{ThreadID: 1, StackStart: 0x1000, Stack: []byte{}}})
	if d := w.AddMemory(0x2000, nil); d.Memory.DataSize != 0 || d.StartOfMemoryRange != 0x2000 {
		t.Errorf("empty memory descriptor = %+v", d)
	}
	w.AddMemory(0x3000, []byte{1})
	data, _ := w.Bytes()
	f, _ := minidump.NewFileBytes(data)
	list, err := f.MemoryList()
	if err != nil || len(list) != 1 || list[0].StartOfMemoryRange != 0x3000 {
		t.Errorf("memory list = %+v, %v", list, err)
	}
	th, _ := f.ThreadList()
	if th[0].Stack.StartOfMemoryRange != 0x1000 || th[0].Stack.Memory.DataSize != 0 {
		t.Errorf("empty stack descriptor = %+v", th[0].Stack)
	}
}

func TestConcurrentUse(t *testing.T) {
	b := synth.New(arch.AMD64, minidump.PlatformLinux)
	s := synth.NewStack(0x7000, 8)
	s.Ptr(42)
	b.AddThread(1, synth.AMD64(&amd64.Context{ContextFlags: amd64.ContextFull}), s)
	f, err := b.File()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 8)
	for range 8 {
		go func() {
			m, err := f.Memory()
			if err == nil {
				var v uint64
				v, err = m.ReadUint64(0x7000)
				if err == nil && v != 42 {
					err = errors.New("wrong value")
				}
			}
			if err == nil {
				_, err = f.ThreadList()
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// Every field of the largest misc info version survives a write and a read.
func TestMiscInfoAllFields(t *testing.T) {
	m := minidump.MiscInfo{SizeOfInfo: minidump.MiscInfo5Size, Flags1: 0x3f7, ProcessID: 1, ProcessCreateTime: 2,
		ProcessUserTime: 3, ProcessKernelTime: 4, ProcessorMaxMhz: 5, ProcessorCurrentMhz: 6, ProcessorMhzLimit: 7,
		ProcessorMaxIdleState: 8, ProcessorCurrentIdleState: 9, ProcessIntegrityLevel: 10, ProcessExecuteFlags: 11,
		ProtectedProcess: 12, TimeZoneID: 13, ProcessCookie: 14}
	m.TimeZone.Bias = -60
	m.TimeZone.StandardName[31] = 'S'
	m.TimeZone.StandardDate = minidump.SystemTime{Year: 1, Month: 2, DayOfWeek: 3, Day: 4, Hour: 5, Minute: 6, Second: 7, Milliseconds: 8}
	m.TimeZone.StandardBias = -1
	m.TimeZone.DaylightName[0] = 'D'
	m.TimeZone.DaylightDate.Milliseconds = 999
	m.TimeZone.DaylightBias = -2
	m.BuildString[259] = 'B'
	m.DbgBldStr[39] = 'G'
	m.XStateData = minidump.XStateConfigFeatureMscInfo{SizeOfInfo: 528, ContextSize: 0x5f0, EnabledFeatures: 1<<63 | 7}
	m.XStateData.Features[63] = minidump.XStateFeature{Offset: 0x400, Size: 0x40}
	w := minidump.NewWriter()
	w.MiscInfo(&m)
	data, _ := w.Bytes()
	f, _ := minidump.NewFileBytes(data)
	got, err := f.MiscInfo()
	if err != nil {
		t.Fatal(err)
	}
	if *got != m {
		t.Errorf("misc info round trip:\n got %+v\nwant %+v", *got, m)
	}
}

func TestThreadNamesRoundTrip(t *testing.T) {
	w := minidump.NewWriter()
	w.ThreadNames([]minidump.ThreadName{{ThreadID: 7, Name: "main"}, {ThreadID: 8, Name: "wörker"}})
	data, _ := w.Bytes()
	f, _ := minidump.NewFileBytes(data)
	names, err := f.ThreadNames()
	if err != nil || len(names) != 2 || names[0].ThreadID != 7 || names[0].Name != "main" || names[1].Name != "wörker" || names[1].NameErr != nil {
		t.Errorf("thread names = %+v, %v", names, err)
	}
}

func TestLinuxDSODebugRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		arch minidump.ProcessorArchitecture
		ptr  int
	}{{minidump.ArchX86, 4}, {minidump.ArchAMD64, 8}} {
		w := minidump.NewWriter()
		w.SystemInfo(&minidump.SystemInfo{ProcessorArchitecture: tc.arch, PlatformID: minidump.PlatformLinux})
		want := minidump.DSODebug{Version: 1, Brk: 0x1000, LDBase: 0x2000, Dynamic: 0x3000, LinkMaps: []minidump.LinkMap{
			{Addr: 0, LD: 0x3000},
			{Addr: 0x7000, Name: "/lib/libc.so.6", LD: 0x7100},
		}}
		w.LinuxDSODebug(&want, tc.ptr)
		data, err := w.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		f, err := minidump.NewFileBytes(data)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.LinuxDSODebug()
		if err != nil {
			t.Fatalf("%d-bit: %v", 8*tc.ptr, err)
		}
		if got.Version != want.Version || got.Brk != want.Brk || got.LDBase != want.LDBase || got.Dynamic != want.Dynamic ||
			got.DSOCount != 2 || len(got.LinkMaps) != 2 {
			t.Fatalf("%d-bit: dso debug = %+v, want %+v", 8*tc.ptr, got, want)
		}
		for i, m := range got.LinkMaps {
			w := want.LinkMaps[i]
			if m.Addr != w.Addr || m.Name != w.Name || m.LD != w.LD || (m.Name == "") != (m.NameRva == 0) {
				t.Errorf("%d-bit: link map %d = %+v, want %+v", 8*tc.ptr, i, m, w)
			}
		}
	}
	w := minidump.NewWriter()
	w.LinuxDSODebug(&minidump.DSODebug{Version: 1}, 8)
	data, _ := w.Bytes()
	f, _ := minidump.NewFileBytes(data)
	if got, err := f.LinuxDSODebug(); err != nil || got.MapRva != 0 || len(got.LinkMaps) != 0 {
		t.Errorf("empty dso debug = %+v, %v", got, err)
	}
}

func TestLinuxArchitecture(t *testing.T) {
	for cpu, want := range map[arch.CPU]minidump.ProcessorArchitecture{
		arch.X86: minidump.ArchX86, arch.AMD64: minidump.ArchAMD64, arch.ARM: minidump.ArchARM,
		arch.ARM64: minidump.ArchARM64, arch.MIPS: minidump.ArchMIPS, arch.MIPS64: minidump.ArchMIPS64, arch.PPC: minidump.ArchUnknown, arch.Unknown: minidump.ArchUnknown,
	} {
		got := minidump.LinuxArchitecture(cpu)
		if got != want {
			t.Errorf("LinuxArchitecture(%s) = %#x, want %#x", cpu, got, want)
		}
		if si := (minidump.SystemInfo{ProcessorArchitecture: got}); want != minidump.ArchUnknown && si.CPU() != cpu {
			t.Errorf("LinuxArchitecture(%s) reads back as %s", cpu, si.CPU())
		}
	}
}

// breakpadAccepts is Breakpad's MinidumpContext::CheckAgainstSystemInfo: the
// CPU bits of a raw context's flags (the low word: the old arm64 context's
// flags are 64 bits; the amd64 context's follow six home words) against the
// system info's processor architecture. Breakpad reads no context of a
// thread that fails it.
func breakpadAccepts(raw []byte, a minidump.ProcessorArchitecture) bool {
	off := 0
	if len(raw) == len((&amd64.Context{}).Encode()) {
		off = 48
	}
	if len(raw) < off+4 {
		return false
	}
	flags := uint32(raw[off]) | uint32(raw[off+1])<<8 | uint32(raw[off+2])<<16 | uint32(raw[off+3])<<24
	switch flags & 0xffffff00 {
	case x86.ContextX86:
		return a == minidump.ArchX86 || a == minidump.ArchX86Win64 || a == minidump.ArchAMD64
	case amd64.ContextAMD64:
		return a == minidump.ArchAMD64
	case arm.ContextARM:
		return a == minidump.ArchARM
	case arm64.ContextARM64:
		return a == minidump.ArchARM64
	case arm64.ContextARM64Old:
		return a == minidump.ArchARM64Old
	}
	return false
}

// TestWrittenPairBreakpadReads checks that synth (so minidump.Writer's
// users, capture's writer among them) writes each context beside a system
// info Breakpad pairs it with: the current arm64 context with ArchARM64
// (0xc), the old one with ArchARM64Old (0x8003).
func TestWrittenPairBreakpadReads(t *testing.T) {
	a64 := &arm64.Context{ContextFlags: arm64.ContextFull}
	old := &arm64.OldContext{ContextFlags: arm64.ContextARM64Old | 0x3}
	for _, c := range []struct {
		cpu  arch.CPU
		ctx  *minidump.Context
		want minidump.ProcessorArchitecture
	}{
		{arch.X86, synth.X86(&x86.Context{ContextFlags: x86.ContextFull}), minidump.ArchX86},
		{arch.AMD64, synth.AMD64(&amd64.Context{ContextFlags: amd64.ContextFull}), minidump.ArchAMD64},
		{arch.ARM, synth.ARM(&arm.Context{ContextFlags: arm.ContextFull}), minidump.ArchARM},
		{arch.ARM64, synth.ARM64(a64), minidump.ArchARM64},
		{arch.ARM64, &minidump.Context{CPU: arch.ARM64, ARM64Old: old}, minidump.ArchARM64Old},
	} {
		b := synth.New(c.cpu, minidump.PlatformLinux)
		b.AddThread(1, c.ctx, nil)
		b.SetException(1, 11, 0, c.ctx)
		f, err := b.File()
		if err != nil {
			t.Fatal(err)
		}
		si, err := f.SystemInfo()
		if err != nil {
			t.Fatal(err)
		}
		if si.ProcessorArchitecture != c.want {
			t.Errorf("%v: system info CPU %#x, want %#x", c.cpu, si.ProcessorArchitecture, c.want)
		}
		if !breakpadAccepts(c.ctx.Encode(), si.ProcessorArchitecture) {
			t.Errorf("%v: Breakpad reads no context with flags %#x beside CPU %#x", c.cpu, c.ctx.Encode()[:4], si.ProcessorArchitecture)
		}
		if got := minidump.ContextArchitecture(c.ctx); got != c.want {
			t.Errorf("%v: ContextArchitecture = %#x, want %#x", c.cpu, got, c.want)
		}
	}
}
