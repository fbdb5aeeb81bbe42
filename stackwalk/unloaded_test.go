package stackwalk_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
	"github.com/gobreakpad/gobreakpad/stackwalk"
)

const unloadedSyms = `MODULE windows x86_64 ID app.pdb
FILE 0 c:\src\app.c
FUNC 1000 100 0 main
1000 100 12 0
`

// expectFirst checks that the frames start with the given prefixes, whatever
// the unwinder's rules find after them (the caller of a pc outside all loaded
// modules is for the unwinders to choose).
func expectFirst(t *testing.T, got []string, want ...string) {
	t.Helper()
	if len(got) < len(want) {
		t.Fatalf("frames:\n%s\nwant at least:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("frame %d = %q, want %q...", i, got[i], w)
		}
	}
}

// unloadedDump is a Windows amd64 crash in a DLL the process had unloaded:
// the pc is in old.dll's former range; the stack holds an address into
// old.dll, which is no return address for Breakpad's scan (it takes only
// addresses in loaded modules), then a return into app.exe's main. A second
// thread's pc is in later.dll, whose range overlaps the top of old.dll's:
// Breakpad's range map of unloaded modules (kTruncateLower) ends old.dll
// below later.dll's base and keeps later.dll whole.
func unloadedDump() *synth.Builder {
	b := synth.New(arch.AMD64, minidump.PlatformWin32NT)
	st := synth.NewStack(0x120000, 8)
	st.Ptr(0x7ff000005678) // into old.dll: not a return address for a scan
	st.Ptr(0x401050)       // return into main
	st.Zeros(32)
	ctx := &amd64.Context{ContextFlags: amd64.ContextFull, Rip: 0x7ff000001234, Rsp: 0x120000}
	b.AddThread(1, synth.AMD64(ctx), st)
	st2 := synth.NewStack(0x130000, 8)
	st2.Zeros(32)
	b.AddThread(2, synth.AMD64(&amd64.Context{ContextFlags: amd64.ContextFull, Rip: 0x7ff000012345, Rsp: 0x130000}), st2)
	b.AddPDBModule(`c:\app\app.exe`, 0x400000, 0x10000, minidump.GUID{Data1: 1}, 2, `c:\app\app.pdb`)
	b.AddModule(`c:\app\nocv.dll`, 0x500000, 0x1000, nil) // no debug file or identifier, as unloaded modules
	b.AddUnloadedModule(`C:\Windows\System32\old.dll`, 0x7ff000000000, 0x10000)
	b.AddUnloadedModule(`C:\Windows\System32\later.dll`, 0x7ff000008000, 0x10000)
	b.SetExceptionRecord(1, minidump.ExceptionRecord{ExceptionCode: 0xc0000005, NumberParameters: 2,
		ExceptionInformation: [15]uint64{0, 0x10}}, synth.AMD64(ctx))
	return b
}

// TestUnloadedModuleFrames checks that frames in unloaded modules are
// named after them in the human and -m outputs, as Breakpad's
// StackFrameSymbolizer does (it falls back to the unloaded module list),
// that of overlapping unloaded modules the lower one is cut short, and that the
// module list flags modules without debug identifiers as Breakpad's does
// once a frame fell in an unloaded module.
func TestUnloadedModuleFrames(t *testing.T) {
	if *overlapDir != "" {
		if err := unloadedDump().WriteFile(filepath.Join(*overlapDir, "unloaded.dmp")); err != nil {
			t.Fatal(err)
		}
	}
	p := walkSynth(t, unloadedDump(), unloadedSyms)
	expectFirst(t, frames(t, p),
		"0|0|old.dll||||0x1234 given as instruction pointer in context",
		"0|1|app.exe|main|c:\\src\\app.c|12|0x50 ")
	fr := p.Threads[0].Frames
	if fr[0].Module != nil || fr[0].UnloadedModule == nil || fr[0].UnloadedModule.CodeFile != `C:\Windows\System32\old.dll` {
		t.Errorf("frame 0: module %v, unloaded module %v", fr[0].Module, fr[0].UnloadedModule)
	}
	if f := p.Threads[1].Frames[0]; f.Module != nil || f.UnloadedModule == nil || f.UnloadedModule.CodeFile != `C:\Windows\System32\later.dll` {
		t.Errorf("thread 1 frame 0: module %v, unloaded module %v; want later.dll", f.Module, f.UnloadedModule)
	}
	var m bytes.Buffer
	if err := stackwalk.PrintMachineReadable(&m, p); err != nil || !strings.Contains(m.String(), "\n1|0|later.dll||||0xa345\n") {
		t.Errorf("-m output %v:\n%s", err, m.String())
	}
	var human bytes.Buffer
	if err := stackwalk.Print(&human, p, stackwalk.PrintOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\n 0  old.dll + 0x1234\n",
		"\n 1  app.exe!main [app.c : 12 + 0x50]\n",
		"\nThread 1\n 0  later.dll + 0xa345\n",
		"  nocv.dll  ???  (WARNING: No symbols, , )\n",
	} {
		if !strings.Contains(human.String(), want) {
			t.Errorf("human output lacks %q:\n%s", want, human.String())
		}
	}
	if strings.Contains(human.String(), "old.dll  ???") {
		t.Errorf("unloaded module among the loaded ones:\n%s", human.String())
	}
	var brief bytes.Buffer
	if err := stackwalk.PrintBrief(&brief, p); err != nil || !strings.Contains(brief.String(), " 0  old.dll + 0x1234\n") {
		t.Errorf("brief output %q, %v", brief.String(), err)
	}
}

// TestUnloadedModuleFramesNoSymbols walks the same dump without symbols:
// the frames are named the same, and no module is flagged (Breakpad looks
// for no symbols at all then).
func TestUnloadedModuleFramesNoSymbols(t *testing.T) {
	f, err := unloadedDump().File()
	if err != nil {
		t.Fatal(err)
	}
	p, err := stackwalk.Process(f, stackwalk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	expectFirst(t, frames(t, p),
		"0|0|old.dll||||0x1234 given as instruction pointer in context",
		"0|1|app.exe||||0x1050 ")
	var human bytes.Buffer
	if err := stackwalk.Print(&human, p, stackwalk.PrintOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(human.String(), "WARNING") {
		t.Errorf("modules flagged without symbols:\n%s", human.String())
	}
}
