package stackwalk_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symstore"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/arch/mips"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// walkSynth encodes b, stores symText (with "ID" replaced by the first
// module's debug identifier) where breakpad.Dirs finds it, and walks the dump.
func walkSynth(t *testing.T, b *synth.Builder, symText string) *stackwalk.ProcessState {
	t.Helper()
	f, err := b.File()
	if err != nil {
		t.Fatal(err)
	}
	mods, err := f.ModuleList()
	if err != nil || len(mods) == 0 {
		t.Fatalf("module list: %v", err)
	}
	m := &mods[0]
	root := t.TempDir()
	storeSymText(t, root, m, strings.ReplaceAll(symText, "ID", m.DebugIdentifier()))
	dirs := symbreakpad.NewDirs(root)
	t.Cleanup(func() { dirs.Close() })
	return processFile(t, f, stackwalk.Options{Symbols: dirs})
}

// storeSymText writes text as m's symbol file in the Breakpad store at root.
func storeSymText(t *testing.T, root string, m *minidump.Module, text string) {
	t.Helper()
	path, err := symstore.BreakpadFile(root, m.DebugFile(), m.DebugIdentifier(), ".sym")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// processFile walks f with opt, failing the test on an error.
func processFile(t *testing.T, f *minidump.File, opt stackwalk.Options) *stackwalk.ProcessState {
	t.Helper()
	p, err := stackwalk.Process(f, opt)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// processBuilt encodes b and walks it with opt, failing the test on an
// error.
func processBuilt(t *testing.T, b *synth.Builder, opt stackwalk.Options) *stackwalk.ProcessState {
	t.Helper()
	f, err := b.File()
	if err != nil {
		t.Fatal(err)
	}
	return processFile(t, f, opt)
}

// frames renders the crashing thread's frames as "-m" lines plus trust.
func frames(t *testing.T, p *stackwalk.ProcessState) []string {
	t.Helper()
	var buf bytes.Buffer
	if err := stackwalk.PrintMachineReadable(&buf, p); err != nil {
		t.Fatal(err)
	}
	var out []string
	i := 0
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.HasPrefix(l, fmt.Sprintf("%d|", p.RequestingThread)) {
			out = append(out, l+" "+p.Threads[p.RequestingThread].Frames[i].Trust.String())
			i++
		}
	}
	return out
}

func expectFrames(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("frames:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

const amd64Syms = `MODULE Linux x86_64 ID app
FILE 0 /src/app.c
INLINE_ORIGIN 0 inner
FUNC 1000 100 0 main
1000 20 30 0
1020 10 31 0
1030 d0 32 0
FUNC 2000 80 0 helper
2000 10 19 0
2010 20 7 0
2030 50 21 0
INLINE 0 20 0 0 2010 20
FUNC 3000 40 0 _start
3000 40 50 0
STACK CFI INIT 2000 80 .cfa: $rsp 8 + .ra: .cfa -8 + ^
`

// TestSynthAMD64 walks an inlined call (INLINE record), a CFI frame, a
// frame-pointer frame, and stops at _start rather than scanning on.
func TestSynthAMD64(t *testing.T) {
	b := synth.New(arch.AMD64, minidump.PlatformLinux)
	st := synth.NewStack(0x7fff0000, 8)
	st.Ptr(0x401025)   // return into main
	st.U64(0)          //
	st.U64(0x7fff0030) // main's frame record: caller rbp
	st.Ptr(0x403010)   // and return into _start
	st.Zeros(16)
	st.U64(0) // _start's frame record: end of the chain
	st.U64(0)
	st.Ptr(0x401025) // a stale return address a scan would find
	ctx := &amd64.Context{ContextFlags: amd64.ContextFull, Rip: 0x402014, Rsp: 0x7fff0000, Rbp: 0x7fff0010, Rbx: 7}
	b.AddThread(1, synth.AMD64(ctx), st)
	b.AddELFModule("/bin/app", 0x400000, 0x10000, []byte("0123456789abcdef"))
	b.SetException(1, 11, 0, synth.AMD64(ctx))
	p := walkSynth(t, b, amd64Syms)
	expectFrames(t, frames(t, p),
		"0|0|app|inner|/src/app.c|7|0x4 inline record",
		"0|1|app|helper|/src/app.c|20|0x4 given as instruction pointer in context",
		"0|2|app|main|/src/app.c|31|0x5 call frame info",
		"0|3|app|_start|/src/app.c|50|0x10 previous frame's frame pointer")
	c := p.Threads[0].Frames[2].Context()
	if v := c.Regs[amd64.RBX]; !c.Has(amd64.RBX) || v != 7 {
		t.Errorf("main's rbx = %#x (valid %v): callee-saved registers pass through CFI", v, c.Has(amd64.RBX))
	}
	if p.CrashReason != "SIGSEGV /0x00000000" || p.Modules[0].MissingSymbols {
		t.Errorf("crash reason %q, missing symbols %v", p.CrashReason, p.Modules[0].MissingSymbols)
	}
}

const x86Syms = `MODULE windows x86 ID app.pdb
FILE 0 c:\src\app.c
FUNC 1000 100 8 main
1000 100 12 0
FUNC 2000 80 4 leaf
2000 80 40 0
STACK WIN 4 2000 80 0 0 4 0 8 0 1 $T0 $esp 8 + = $eip $T0 ^ = $esp $T0 4 + =
`

// TestSynthX86Windows walks a STACK WIN frame-data program string, then the
// ebp chain.
func TestSynthX86Windows(t *testing.T) {
	b := synth.New(arch.X86, minidump.PlatformWin32NT)
	st := synth.NewStack(0x120000, 4)
	st.U32(1)
	st.U32(2)        // locals
	st.Ptr(0x401050) // return into main, at esp+8
	st.U32(0x120020) // an argument
	st.Zeros(16)
	st.U32(0)        // main's frame record at 0x120020: caller ebp
	st.Ptr(0x00000f) // return address below 4096 ends the walk
	ctx := &x86.Context{ContextFlags: x86.ContextFull, Eip: 0x402010, Esp: 0x120000, Ebp: 0x120020}
	b.AddThread(1, synth.X86(ctx), st)
	b.AddPDBModule(`c:\app\app.exe`, 0x400000, 0x10000, minidump.GUID{Data1: 1}, 2, `c:\app\app.pdb`)
	b.SetExceptionRecord(1, minidump.ExceptionRecord{ExceptionCode: 0xc0000005, NumberParameters: 2,
		ExceptionInformation: [15]uint64{1, 0x45}}, synth.X86(ctx))
	p := walkSynth(t, b, x86Syms)
	expectFrames(t, frames(t, p),
		`0|0|app.exe|leaf|c:\src\app.c|40|0x10 given as instruction pointer in context`,
		`0|1|app.exe|main|c:\src\app.c|12|0x50 call frame info`)
	f := p.Threads[0].Frames[1]
	if f.Context().Regs[x86.ESP] != 0x12000c || f.Context().Regs[x86.EBP] != 0x120020 {
		t.Errorf("main: esp %#x ebp %#x", f.Context().Regs[x86.ESP], f.Context().Regs[x86.EBP])
	}
	if p.CrashReason != "EXCEPTION_ACCESS_VIOLATION_WRITE" || p.CrashAddress != 0x45 {
		t.Errorf("crash %q at %#x", p.CrashReason, p.CrashAddress)
	}
}

const arm64Syms = `MODULE Linux arm64 ID app
FILE 0 /src/app.c
FUNC 1000 100 0 main
1000 20 30 0
1020 10 31 0
FUNC 2000 80 0 leaf
2000 80 5 0
FUNC 3000 40 0 _start
3000 40 50 0
`

// TestSynthARM64 walks a leaf function whose return address is still in lr
// (signed with a pointer-authentication code), then the frame-pointer chain.
func TestSynthARM64(t *testing.T) {
	const pac = 0x0035000000000000
	b := synth.New(arch.ARM64, minidump.PlatformLinux)
	st := synth.NewStack(0x7fff0000, 8)
	st.Zeros(16)
	st.U64(0x7fff0020)     // main's frame record: caller fp
	st.U64(0x403010 | pac) // signed return into _start
	st.U64(0)
	st.U64(0) // _start's frame record: end
	ctx := &arm64.Context{ContextFlags: arm64.ContextFull}
	ctx.Iregs[arm64.RegPC] = 0x402010
	ctx.Iregs[arm64.RegSP] = 0x7fff0000
	ctx.Iregs[arm64.RegFP] = 0x7fff0010
	ctx.Iregs[arm64.RegLR] = 0x401024 | pac
	b.AddThread(1, synth.ARM64(ctx), st)
	b.AddELFModule("/bin/app", 0x400000, 0x10000, []byte("0123456789abcdef"))
	b.SetException(1, 11, 0, synth.ARM64(ctx))
	p := walkSynth(t, b, arm64Syms)
	expectFrames(t, frames(t, p),
		"0|0|app|leaf|/src/app.c|5|0x10 given as instruction pointer in context",
		"0|1|app|main|/src/app.c|31|0x0 previous frame's frame pointer",
		"0|2|app|_start|/src/app.c|50|0xc previous frame's frame pointer")
	if lr := p.Threads[0].Frames[0].Context().Regs[arm64.RegLR]; lr != 0x401024 {
		t.Errorf("context lr %#x: the pointer-authentication code must be stripped", lr)
	}
	for _, f := range p.Threads[0].Frames {
		if f.Trust == unwind.TrustScan {
			t.Errorf("unexpected scanned frame at %#x", f.Instruction)
		}
	}
}

const mipsSyms = `MODULE Linux mips ID app
FILE 0 /src/app.c
FUNC 1000 100 0 main
1000 100 30 0
FUNC 2000 80 0 leaf
2000 80 5 0
STACK CFI INIT 2000 80 .cfa: $sp 0 + .ra: $ra
STACK CFI 2008 .cfa: $sp 16 + .ra: .cfa -4 + ^ $fp: .cfa -8 + ^
`

// TestSynthMIPS walks a mips minidump: CFI (the caller's pc two
// instructions before its return address), then a scan past the caller's
// argument words; registers print 64 bits wide.
func TestSynthMIPS(t *testing.T) {
	b := synth.New(arch.MIPS, minidump.PlatformLinux)
	st := synth.NewStack(0x7fff0000, 4)
	st.U32(0)
	st.U32(0)
	st.U32(0x7fff0100) // leaf's saved fp
	st.U32(0x401020)   // leaf's saved ra
	st.Zeros(16)       // main's argument words
	st.U32(0x7fff0100)
	st.U32(0x401090) // a return address found by scanning
	ctx := &mips.Context{ContextFlags: mips.ContextMIPS | mips.ContextFull, EPC: 0x402010}
	ctx.Iregs[mips.IregSP] = 0x7fff0000
	b.AddThread(1, synth.MIPS(ctx), st)
	b.AddELFModule("/bin/app", 0x400000, 0x10000, []byte("0123456789abcdef"))
	b.SetException(1, 11, 0, synth.MIPS(ctx))
	p := walkSynth(t, b, mipsSyms)
	expectFrames(t, frames(t, p),
		"0|0|app|leaf|/src/app.c|5|0x10 given as instruction pointer in context",
		"0|1|app|main|/src/app.c|30|0x18 call frame info",
		"0|2|app|main|/src/app.c|30|0x88 stack scanning")
	var buf bytes.Buffer
	if err := stackwalk.Print(&buf, p, stackwalk.PrintOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := "     sp = 0x000000007fff0010    fp = 0x000000007fff0100\n"; !strings.Contains(buf.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, buf.String())
	}
}

// TestNoThreads: a dump with only system info still reports what it has.
func TestNoThreads(t *testing.T) {
	p := processBuilt(t, synth.New(arch.AMD64, minidump.PlatformLinux), stackwalk.Options{})
	var buf bytes.Buffer
	if err := stackwalk.Print(&buf, p, stackwalk.PrintOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "Operating system: Linux\n") || !strings.Contains(buf.String(), "No crash\n") {
		t.Errorf("report:\n%s", buf.String())
	}
}
