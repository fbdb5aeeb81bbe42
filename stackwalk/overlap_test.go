package stackwalk_test

import (
	"bytes"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
	"github.com/gobreakpad/gobreakpad/stackwalk"
)

// overlapDir, when set, receives the synthetic dumps of TestOverlappingModules,
// to run Breakpad's minidump_stackwalk on them.
var overlapDir = flag.String("overlapdir", "", "write the overlapping-module dumps into this folder")

type overlapModule struct {
	name       string
	base, size uint64
}

// overlapDump is an amd64 dump of the platform with the modules, in this
// order (each with a build id of its own unless the name repeats), and one
// thread per pc, each with a pc and an empty stack; the first thread crashed.
func overlapDump(platform minidump.PlatformID, mods []overlapModule, pcs ...uint64) *synth.Builder {
	b := synth.New(arch.AMD64, platform)
	for i, pc := range pcs {
		st := synth.NewStack(0x100000+uint64(i)*0x10000, 8)
		st.Zeros(64)
		ctx := &amd64.Context{ContextFlags: amd64.ContextFull, Rip: pc, Rsp: st.Start()}
		b.AddThread(uint32(i+1), synth.AMD64(ctx), st)
		if i == 0 {
			b.SetException(1, 0xb, pc, synth.AMD64(ctx))
		}
	}
	for _, m := range mods {
		id := make([]byte, 16)
		copy(id, m.name)
		b.AddELFModule(m.name, m.base, uint32(m.size), id)
	}
	return b
}

// TestOverlappingModules checks which modules Breakpad lists and which module
// each pc falls in, for modules that overlap, repeat, are empty or wrap, on
// Linux, Android and Windows. The expected lines are those of Breakpad's
// minidump_stackwalk -m (built from its repository, commit 418aacd6) on
// these very dumps (written by -args -overlapdir DIR), debug identifiers
// left out.
func TestOverlappingModules(t *testing.T) {
	const (
		a = 0x7f0000000000
		e = 0x7effffff0000
	)
	linux := []overlapModule{
		{"/bin/app", 0x400000, 0x10000},
		{"/lib/libA.so", a, 0x30000},           // libB and libC are mapped into its holes
		{"/lib/libB.so", a + 0x10000, 0x10000}, // inside libA: libA ends below it
		{"/lib/libC.so", a + 0x28000, 0x10000}, // past libA's new end: whole
		{"/lib/libE.so", e, 0x20000},           // later and lower: ends below libA
		{"/lib/libB.so", a + 0x10000, 0x10000}, // a repeat of libB: skipped
	}
	linuxPCs := []uint64{a + 0x5000, a + 0x15000, a + 0x21000, a + 0x30000, e + 0x8000, a + 0x1000}
	for _, tc := range []struct {
		name     string
		platform minidump.PlatformID
		mods     []overlapModule
		pcs      []uint64
		want     string // the Module lines, then each thread's frame 0
	}{
		{"linux", minidump.PlatformLinux, linux, linuxPCs, `
Module|app||app||0x00400000|0x0040ffff|1
Module|libE.so||libE.so||0x7effffff0000|0x7f000000ffff|0
Module|libA.so||libA.so||0x7f0000000000|0x7f000002ffff|0
Module|libB.so||libB.so||0x7f0000010000|0x7f000001ffff|0
Module|libC.so||libC.so||0x7f0000028000|0x7f0000037fff|0
0|0|libA.so||||0x5000
1|0|libB.so||||0x5000
2|0|||||0x7f0000021000
3|0|libC.so||||0x8000
4|0|libE.so||||0x8000
5|0|libA.so||||0x1000
`},
		// Two different modules at one base: Breakpad refuses the whole
		// list, so no module is listed and no address is in any.
		{"linux-same-base", minidump.PlatformLinux, []overlapModule{
			{"/bin/app", 0x400000, 0x10000}, {"/lib/libA.so", a, 0x20000}, {"/lib/libX.so", a, 0x10000},
		}, []uint64{a + 0x5000, 0x401000}, `
0|0|||||0x7f0000005000
1|0|||||0x401000
`},
		// Android: a module at a stored one's base and below the previous
		// module's end is moved up to that end (packed relocations), and a
		// /dev/ashmem/ one that cannot be stored is skipped, so the list
		// stands; but the processor's copy stores each module's own range,
		// where both are refused: neither is listed nor found.
		{"android", minidump.PlatformAndroid, []overlapModule{
			{"/system/bin/app_process64", 0x400000, 0x10000}, {"/lib/libA.so", a, 0x20000},
			{"/lib/libR.so", a, 0x30000}, {"/dev/ashmem/dalvik-jit-code-cache", a, 0x1000},
		}, []uint64{a + 0x5000, a + 0x25000, a + 0x500}, `
Module|app_process64||app_process64||0x00400000|0x0040ffff|1
Module|libA.so||libA.so||0x7f0000000000|0x7f000001ffff|0
0|0|libA.so||||0x5000
1|0|||||0x7f0000025000
2|0|libA.so||||0x500
`},
		{"android-overlap", minidump.PlatformAndroid, linux, linuxPCs, `
Module|app||app||0x00400000|0x0040ffff|1
Module|libE.so||libE.so||0x7effffff0000|0x7f000000ffff|0
Module|libA.so||libA.so||0x7f0000000000|0x7f000002ffff|0
Module|libB.so||libB.so||0x7f0000010000|0x7f000001ffff|0
Module|libC.so||libC.so||0x7f0000028000|0x7f0000037fff|0
0|0|libA.so||||0x5000
1|0|libB.so||||0x5000
2|0|||||0x7f0000021000
3|0|libC.so||||0x8000
4|0|libE.so||||0x8000
5|0|libA.so||||0x1000
`},
		// Other platforms: any overlap refuses the whole list...
		{"windows-overlap", minidump.PlatformWin32NT, linux[:3], linuxPCs[:2], `
0|0|||||0x7f0000005000
1|0|||||0x7f0000015000
`},
		// ... but an exact repeat is skipped.
		{"windows-repeat", minidump.PlatformWin32NT, []overlapModule{
			{"app.exe", 0x400000, 0x10000}, {"a.dll", a, 0x20000}, {"a.dll", a, 0x20000},
		}, []uint64{a + 0x5000}, `
Module|app.exe||app.exe||0x00400000|0x0040ffff|1
Module|a.dll||a.dll||0x7f0000000000|0x7f000001ffff|0
0|0|a.dll||||0x5000
`},
		// An empty module, or one whose end (base + size) does not fit in
		// 64 bits, refuses the list (MinidumpModule::Read), even one
		// ending at the very top of the address space.
		{"linux-zero-size", minidump.PlatformLinux, []overlapModule{
			{"/bin/app", 0x400000, 0x10000}, {"/lib/libZ.so", a, 0},
		}, []uint64{0x401000}, `
0|0|||||0x401000
`},
		{"linux-wrap", minidump.PlatformLinux, []overlapModule{
			{"/bin/app", 0x400000, 0x10000}, {"/lib/libW.so", 0xffffffffffff0000, 0x20000},
		}, []uint64{0x401000}, `
0|0|||||0x401000
`},
		{"linux-top", minidump.PlatformLinux, []overlapModule{
			{"/bin/app", 0x400000, 0x10000}, {"/lib/libT.so", 0xffffffffffff0000, 0x10000},
		}, []uint64{0x401000, 0xfffffffffffffff0}, `
0|0|||||0x401000
1|0|||||0xfffffffffffffff0
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := overlapDump(tc.platform, tc.mods, tc.pcs...)
			if *overlapDir != "" {
				if err := b.WriteFile(filepath.Join(*overlapDir, tc.name+".dmp")); err != nil {
					t.Fatal(err)
				}
			}
			p := processBuilt(t, b, stackwalk.Options{})
			// Modules keeps every module with a sound range, for --json
			// (rust-minidump leaves out only the others).
			sound := 0
			for _, m := range tc.mods {
				if m.size != 0 && m.size <= ^uint64(0)-m.base {
					sound++
				}
			}
			if len(p.Modules) != sound {
				t.Errorf("%d modules kept, want %d", len(p.Modules), sound)
			}
			var buf bytes.Buffer
			if err := stackwalk.PrintMachineReadable(&buf, p); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range strings.Split(buf.String(), "\n") {
				if strings.HasPrefix(l, "Module|") {
					f := strings.Split(l, "|")
					f[4] = "" // the debug identifier
					got = append(got, strings.Join(f, "|"))
				} else if strings.Contains(l, "|0|") && !strings.HasPrefix(l, "Crash|") {
					got = append(got, l)
				}
			}
			if g, w := strings.Join(got, "\n"), strings.TrimSpace(tc.want); g != w {
				t.Errorf("-m:\n%s\nwant:\n%s", g, w)
			}
			// The human report has a module list exactly when Breakpad's
			// processor has one.
			var human bytes.Buffer
			if err := stackwalk.Print(&human, p, stackwalk.PrintOptions{}); err != nil {
				t.Fatal(err)
			}
			if listed := strings.Contains(human.String(), "\nLoaded modules:\n"); listed != strings.Contains(tc.want, "Module|") {
				t.Errorf("human report lists modules: %v, want %v:\n%s", listed, !listed, human.String())
			}
		})
	}
}
