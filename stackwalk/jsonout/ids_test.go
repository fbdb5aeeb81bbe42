package jsonout

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
	"github.com/gobreakpad/gobreakpad/stackwalk"
)

// TestRustIdentifiers: modules' code_id and debug_id, unloaded modules'
// code_id and main_module are rust-minidump's (minidump/src/minidump.rs
// MinidumpModule::code_identifier and debug_identifier,
// MinidumpUnloadedModule::code_identifier; minidump-processor's
// process_state.rs print_json: a missing debug id is written as a nil
// DebugId, 33 zeros, a missing code id as ""; main_module is always 0),
// where Breakpad's processor gives "id" to Mach-O modules and Linux modules
// with a PDB record, "" to modules without a CodeView record and to unloaded
// modules. The human and -m outputs keep Breakpad's (stackwalk.Module's
// CodeID and DebugID are unchanged).
func TestRustIdentifiers(t *testing.T) {
	guid := minidump.GUID{Data1: 0x0102a3b4, Data2: 0xc5d6, Data3: 0x0708, Data4: [8]byte{0xe9, 0xfa, 1, 2, 3, 4, 5, 6}}
	const guidHex = "0102A3B4C5D60708E9FA010203040506"
	type mod struct{ code, debug, bpCode, bpDebug string }
	for _, c := range []struct {
		name     string
		os       minidump.PlatformID
		add      func(b *synth.Builder)
		modules  []mod
		unloaded []string
	}{
		{
			name: "windows", os: minidump.PlatformWin32NT,
			add: func(b *synth.Builder) {
				m := b.AddPDBModule(`C:\app.exe`, 0x400000, 0x2d000, guid, 2, "app.pdb")
				m.TimeDateStamp = 0x45d35f6c
				// Without CodeView record (Wine's DLLs, wow64cpu.dll): the
				// code id still comes from the time stamp and size.
				m = b.AddModule(`C:\windows\system32\kernelbase.dll`, 0x7ff000000000, 0x1a000, nil)
				m.TimeDateStamp = 0x378bc3cd
				m = b.AddModule(`C:\old.dll`, 0x500000, 0x1000, minidump.CodeViewPDB70Record(minidump.GUID{}, 1, "old.pdb"))
				m.TimeDateStamp = 0xabc
				u := b.AddUnloadedModule("shcore.dll", 0x600000, 0x1000)
				u.TimeDateStamp = 0xb1054d2a
				b.AddUnloadedModule("nostamp.dll", 0x700000, 0xea000)
			},
			modules: []mod{
				{"45d35f6c2d000", guidHex + "2", "45D35F6C2d000", guidHex + "2"},
				{"378bc3cd1a000", nilDebugID, "378BC3CD1a000", ""},
				// A nil GUID gives no debug id in rust-minidump.
				{"00000abc1000", nilDebugID, "00000ABC1000", "000000000000000000000000000000001"},
			},
			unloaded: []string{"b1054d2a1000", "00000000ea000"},
		},
		{
			name: "linux", os: minidump.PlatformLinux,
			add: func(b *synth.Builder) {
				// Breakpad's Linux client of old wrote RSDS records: code_id "id"
				// in Breakpad, the time stamp and size in rust-minidump.
				b.AddPDBModule("/usr/bin/app", 0x400000, 0x17000, guid, 0, "app")
				b.AddELFModule("/lib/libc.so.6", 0x7f0000000000, 0x1c0000, []byte{0xec, 0x61, 0xac, 0x93, 0x8e, 0x5a, 0x39, 0xb1, 0x6f, 0x9f, 0xbd, 0x35, 0x0e, 0x31, 0x69, 0xa5, 1, 2, 3, 4})
				b.AddELFModule("/usr/share/fonts/a.ttf", 0x7f1000000000, 0x1000, make([]byte, 20))
				b.AddModule("/SYSV00000000", 0x7f2000000000, 0x1000, nil)
				b.AddUnloadedModule("libgone.so", 0x7f3000000000, 0x3c000)
			},
			modules: []mod{
				{"0000000017000", guidHex + "0", "id", guidHex + "0"},
				{"ec61ac938e5a39b16f9fbd350e3169a501020304", "93AC61EC5A8EB1396F9FBD350E3169A50", "ec61ac938e5a39b16f9fbd350e3169a501020304", "93AC61EC5A8EB1396F9FBD350E3169A50"},
				{"", nilDebugID, "0000000000000000000000000000000000000000", "000000000000000000000000000000000"},
				{"", nilDebugID, "id", ""},
			},
			unloaded: []string{"000000003c000"},
		},
		{
			name: "macos", os: minidump.PlatformMacOSX,
			add: func(b *synth.Builder) {
				b.AddPDBModule("/Applications/A.app/Contents/MacOS/A", 0x100000000, 0x4000, guid, 0, "A")
			},
			modules: []mod{{"0102a3b4c5d60708e9fa010203040506", guidHex + "0", "id", guidHex + "0"}},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := synth.New(arch.AMD64, c.os)
			c.add(b)
			f, err := b.File()
			if err != nil {
				t.Fatal(err)
			}
			st, err := stackwalk.Read(f)
			if err != nil {
				t.Fatal(err)
			}
			doc := build(st)
			if doc.MainModule != 0 {
				t.Errorf("main_module = %d, want 0", doc.MainModule)
			}
			if len(doc.Modules) != len(c.modules) {
				t.Fatalf("%d modules, want %d", len(doc.Modules), len(c.modules))
			}
			for i, w := range c.modules {
				m, sm := doc.Modules[i], st.Modules[i]
				if m.CodeID != w.code || m.DebugID != w.debug {
					t.Errorf("module %d (%s): code_id %q debug_id %q, want %q %q", i, m.Filename, m.CodeID, m.DebugID, w.code, w.debug)
				}
				if sm.CodeID != w.bpCode || sm.DebugID != w.bpDebug {
					t.Errorf("module %d (%s): Breakpad's code id %q debug id %q, want %q %q", i, m.Filename, sm.CodeID, sm.DebugID, w.bpCode, w.bpDebug)
				}
			}
			if len(doc.UnloadedModules) != len(c.unloaded) {
				t.Fatalf("%d unloaded modules, want %d", len(doc.UnloadedModules), len(c.unloaded))
			}
			for i, w := range c.unloaded {
				if got := doc.UnloadedModules[i].CodeID; got != w {
					t.Errorf("unloaded module %d: code_id %q, want %q", i, got, w)
				}
			}
		})
	}
}

// TestMainModuleWithoutModules: rust-minidump writes main_module 0 even
// when the dump has no module list ("the first module is always the main
// one").
func TestMainModuleWithoutModules(t *testing.T) {
	b := synth.New(arch.X86, minidump.PlatformLinux)
	f, err := b.File()
	if err != nil {
		t.Fatal(err)
	}
	st, err := stackwalk.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	if doc := build(st); doc.MainModule != 0 || len(doc.Modules) != 0 {
		t.Errorf("main_module %d with %d modules, want 0 with 0", doc.MainModule, len(doc.Modules))
	}
}

// TestUnloadedSnapshot rebuilds the synthetic dump of rust-minidump's
// test_unloaded (minidump-stackwalk/tests/test-minidump-stackwalk.rs: an
// x86 thread at 0xf00800 with no loaded module and eight unloaded module
// entries, overlapping and repeated) with minidump/synth and compares our
// --json --pretty with its snapshot json-pretty-unloaded byte for byte
// (the unloaded modules' code_id included).
func TestUnloadedSnapshot(t *testing.T) {
	b := synth.New(arch.X86, 0)
	b.SystemInfo.CPUInfo = [24]byte{} // rust-minidump's SystemInfo::new: vendor of zeros, family 6
	b.SystemInfo.ProcessorLevel = 6
	stack := synth.NewStack(0x1000, 4)
	stack.Zeros(0x1000)
	b.AddThread(0x1234, synth.X86(&x86.Context{ContextFlags: 0x1003f, Eip: 0xf00800, Esp: 0x1010}), stack)
	for _, u := range []struct {
		name string
		base uint64
		size uint32
	}{
		{"unused.dll", 0xa003a0, 0x1000}, {"many.dll", 0xf00000, 0x1000}, {"solo.dll", 0xaf00220, 0x2000},
		{"many.dll", 0xf00100, 0x1000}, {"many.dll", 0xf003a0, 0x1000}, {"solo.dll", 0xf00220, 0x2000},
		{"solo.dll", 0xaf00220, 0x2000}, {"many.dll", 0xf00000, 0x1000},
	} {
		m := b.AddUnloadedModule(u.name, u.base, u.size)
		m.TimeDateStamp, m.CheckSum = 0xb1054d2a, 0x34571371
	}
	f, err := b.File()
	if err != nil {
		t.Fatal(err)
	}
	st, err := stackwalk.Process(f, stackwalk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := Write(&got, st, true); err != nil {
		t.Fatal(err)
	}
	want := snapshot(t, "test_minidump_stackwalk__json-pretty-unloaded.snap")
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("--json --pretty differs from rust-minidump's snapshot:\n%s", lineDiff(string(want), got.String()))
	}
}

// lineDiff lists the lines of b that differ from a's at the same place.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			out = append(out, fmt.Sprintf("line %d: want %q, got %q", i+1, x, y))
		}
	}
	return strings.Join(out, "\n")
}
