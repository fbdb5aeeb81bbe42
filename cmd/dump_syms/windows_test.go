package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
)

// TestWindowsX86Walk walks a synthetic x86 Windows dump of symbolic's
// crash.exe (no corpus minidump was made from a corpus PDB) twice: with the
// symbols our dump_syms makes from crash.pdb, and with the reference
// crash.sym Breakpad's dump_syms made. The stack holds return addresses
// into four functions whose STACK WIN programs search for the return
// address (.raSearch); both walks must give the same frames (module,
// offsets, function start, trust), only the function names' style may
// differ (Mozilla's argument lists against DIA's).
func TestWindowsX86Walk(t *testing.T) {
	pdbPath := corpus.File(t, "windows/symbolic/crash.pdb")
	refSym := corpus.File(t, "windows/symbolic/crash.sym")
	dumpSyms := cmdtest.Build(t, ".")
	walker := cmdtest.Build(t, "github.com/gobreakpad/gobreakpad/cmd/minidump_stackwalk")

	const base = 0x400000
	b := synth.New(arch.X86, minidump.PlatformWin32NT)
	g := minidump.GUID{Data1: 0x3249D99D, Data2: 0x0C40, Data3: 0x4931, Data4: [8]byte{0x86, 0x10, 0xF4, 0xE4, 0xFB, 0x0B, 0x69, 0x36}}
	m := b.AddPDBModule(`C:\projects\crash.exe`, base, 0x9000, g, 1, `C:\projects\crash.pdb`)
	m.TimeDateStamp = 0x5AB38077
	st := synth.NewStack(0x80000, 4)
	st.Zeros(16) // the crashing function's locals
	// Return addresses inside RequestDump, ~ExceptionHandler,
	// ExceptionHandlerThreadMain and assign (crash.sym's FUNCs), each
	// behind a little frame of zeros that the search steps over.
	for _, ret := range []uint64{0x10a0, 0x1850, 0x1b00, 0x11c0} {
		st.U32(uint32(base + ret))
		st.Zeros(12)
	}
	ctx := &x86.Context{ContextFlags: x86.ContextFull, Eip: base + 0x1050, Esp: uint32(st.Start()), Ebp: 0}
	b.AddThread(1, synth.X86(ctx), st)
	b.SetException(1, 0xc0000005, 0, synth.X86(ctx))
	dir := t.TempDir()
	dmp := filepath.Join(dir, "crash.dmp")
	if err := b.WriteFile(dmp); err != nil {
		t.Fatal(err)
	}
	ours, ref := filepath.Join(dir, "ours"), filepath.Join(dir, "ref")
	if r := cmdtest.Run(t, dumpSyms, "--store", ours, pdbPath); r.Code != 0 {
		t.Fatalf("dump_syms: %s", r.Stderr)
	}
	refDir := filepath.Join(ref, "crash.pdb", "3249D99D0C4049318610F4E4FB0B69361")
	if err := os.MkdirAll(refDir, 0o755); err != nil {
		t.Fatal(err)
	}
	refData, err := os.ReadFile(refSym)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(refDir, "crash.sym"), refData, 0o644); err != nil {
		t.Fatal(err)
	}
	frames := func(store string) []string {
		r := cmdtest.Run(t, walker, "-m", dmp, store)
		if r.Code != 0 {
			t.Fatalf("minidump_stackwalk %s: %d %s", store, r.Code, r.Stderr)
		}
		var out []string
		for l := range strings.SplitSeq(r.Stdout, "\n") {
			f := strings.Split(l, "|")
			// thread|frame|module|function|file|line|offset
			if len(f) == 7 && f[0] == "0" {
				f[3] = strings.SplitN(f[3], "(", 2)[0] // name style aside
				f[3] = strings.TrimPrefix(strings.TrimPrefix(f[3], "static "), "int ")
				out = append(out, strings.Join(f, "|"))
			}
		}
		return out
	}
	got, want := frames(ours), frames(ref)
	t.Logf("%d frames:\n%s", len(got), strings.Join(got, "\n"))
	if len(want) < 3 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("frames with our symbols:\n%s\nwith Breakpad's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestWindowsFlags: --cfi-style and --pe-only choose whose records come
// out of a PE: Breakpad's PE-only output for a PE alone by default,
// Mozilla's FUNC placeholders with --pe-only mozilla, Breakpad's records
// with our STACK CFI with --cfi-style exact, and an unknown style is a
// usage error.
func TestWindowsFlags(t *testing.T) {
	dll := corpus.File(t, "windows/mozilla/mozwer.dll")
	dumpSyms := cmdtest.Build(t, ".")
	r := cmdtest.Run(t, dumpSyms, dll)
	if r.Code != 0 || strings.Contains(r.Stdout, "FUNC ") || !strings.Contains(r.Stdout, "STACK CFI INIT 1000 94 .cfa: $rsp .ra: .cfa 8 - ^") {
		t.Errorf("default: %d %s, want Breakpad's PE-only records", r.Code, r.Stderr)
	}
	r = cmdtest.Run(t, dumpSyms, "--pe-only", "mozilla", "--cfi-style", "mozilla-pe", dll)
	for _, want := range []string{"FUNC 1000 94 0 OutOfProcessExceptionEventCallback\n", "FUNC 1310 64 0 <unknown in mozwer.dll>\n", "PUBLIC 50d7f 0 <unknown in mozwer.dll>\n", "STACK CFI INIT 1000 94 .cfa: $rsp 8 + .ra: .cfa 8 - ^\n"} {
		if r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Errorf("--pe-only mozilla: %d %s: no %q", r.Code, r.Stderr, want)
		}
	}
	r = cmdtest.Run(t, dumpSyms, "--cfi-style", "exact", dll)
	for _, want := range []string{"STACK CFI INIT 1000 94 .cfa: $rsp 8 + .ra: .cfa 8 - ^\n", "PUBLIC 1000 0 OutOfProcessExceptionEventCallback\n"} {
		if r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Errorf("--cfi-style exact: %d %s: no %q", r.Code, r.Stderr, want)
		}
	}
	if r = cmdtest.Run(t, dumpSyms, "--cfi-style", "gcc", dll); r.Code == 0 {
		t.Errorf("--cfi-style gcc: exit 0, want a usage error")
	}
}

// TestWindowsExactStyle: --cfi-style exact writes main's rules of
// testdata/winprogs' x64-O2 prog.exe at each instruction of its prolog
// (push rbp, push rsi, push rdi, sub rsp 32, lea rbp [rsp+32]) and of its
// epilog (add rsp 32, three pops, ret), and the default stays symbolic's
// one record.
func TestWindowsExactStyle(t *testing.T) {
	pdb := filepath.Join("testdata", "winprogs", "x64-O2", "prog.pdb")
	dumpSyms := cmdtest.Build(t, ".")
	r := cmdtest.Run(t, dumpSyms, "--cfi-style", "exact", pdb)
	want := `STACK CFI INIT 1880 f2 .cfa: $rsp 8 + .ra: .cfa 8 - ^
STACK CFI 1881 .cfa: $rsp 16 + $rbp: .cfa 16 - ^
STACK CFI 1882 .cfa: $rsp 24 + $rsi: .cfa 24 - ^
STACK CFI 1883 .cfa: $rsp 32 + $rdi: .cfa 32 - ^
STACK CFI 1887 .cfa: $rsp 64 +
STACK CFI 188c .cfa: $rbp 32 +
STACK CFI 196e .cfa: $rsp 32 +
STACK CFI 196f .cfa: $rsp 24 + $rdi: $rdi
STACK CFI 1970 .cfa: $rsp 16 + $rsi: $rsi
STACK CFI 1971 .cfa: $rsp 8 + $rbp: $rbp
STACK CFI INIT 1980 `
	if r.Code != 0 || !strings.Contains(r.Stdout, want) {
		t.Errorf("--cfi-style exact: %d %s: no\n%s", r.Code, r.Stderr, want)
	}
	r = cmdtest.Run(t, dumpSyms, pdb)
	want = "STACK CFI INIT 1880 f2 .cfa: $rbp 32 + $rbp: .cfa 16 - ^ $rsi: .cfa 24 - ^ $rdi: .cfa 32 - ^ .ra: .cfa 8 - ^\nSTACK CFI INIT 1980 "
	if r.Code != 0 || !strings.Contains(r.Stdout, want) {
		t.Errorf("default: %d %s: no\n%s", r.Code, r.Stderr, want)
	}
}

// TestWindowsX64Walk walks a real Windows x64 crash end to end: crash.exe
// (testdata/wincrash/crash.c, built with clang-22 and lld-22 for mingw-w64
// with CodeView debug information) crashed under wine64, whose
// unhandled-exception filter wrote the minidump with MiniDumpWriteDump.
// Wine leaves the modules' CodeView records empty: mkcrash.sh's fixture
// step (fixdump) filled crash.exe's from the PE and kept only the threads'
// stacks of Wine's 7000-odd memory regions. Our dump_syms on crash.pdb
// (crash.exe beside it: STACK CFI from its .pdata) and minidump_stackwalk
// must give the true chain crash ← helper (inlined) ← middle ← outer ←
// main, as llvm-symbolizer-22 gives it from the PE and PDB (truth.txt),
// outer and main found by call frame info. Neither clang nor wine is needed.
func TestWindowsX64Walk(t *testing.T) {
	dir := filepath.Join("testdata", "wincrash")
	dumpSyms := cmdtest.Build(t, ".")
	walker := cmdtest.Build(t, "github.com/gobreakpad/gobreakpad/cmd/minidump_stackwalk")
	store := t.TempDir()
	if r := cmdtest.Run(t, dumpSyms, "-d", "--store", store, filepath.Join(dir, "crash.pdb")); r.Code != 0 {
		t.Fatalf("dump_syms: %s", r.Stderr)
	}
	// The truth: llvm-symbolizer's function and file:line for each frame,
	// inline frames first, in walk order.
	truth, err := os.ReadFile(filepath.Join(dir, "truth.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	lines := strings.Split(strings.TrimSpace(string(truth)), "\n")
	for i := 0; i+1 < len(lines); i++ {
		if strings.HasPrefix(lines[i], "address ") || lines[i] == "??:0:0" {
			continue
		}
		fileLine := strings.TrimSuffix(lines[i+1], ":0")
		want = append(want, lines[i]+" "+fileLine)
		i++
	}
	if len(want) != 5 {
		t.Fatalf("truth.txt: %d frames, want 5: %q", len(want), want)
	}
	r := cmdtest.Run(t, walker, "-m", filepath.Join(dir, "crash.dmp"), store)
	if r.Code != 0 {
		t.Fatalf("minidump_stackwalk: %d %s", r.Code, r.Stderr)
	}
	var got []string
	for l := range strings.SplitSeq(r.Stdout, "\n") {
		f := strings.Split(l, "|")
		// thread|frame|module|function|file|line|offset
		if len(f) == 7 && f[0] == "0" && len(got) < len(want) {
			got = append(got, strings.SplitN(f[3], "(", 2)[0]+" "+filepath.Base(f[4])+":"+f[5])
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("crashing thread:\n%s\nwant (llvm-symbolizer):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The frames above the leaf come from the PE's unwind information.
	r = cmdtest.Run(t, walker, filepath.Join(dir, "crash.dmp"), store)
	for _, fn := range []string{"outer(int)", "main(int, char**)"} {
		i := strings.Index(r.Stdout, "crash.exe!"+fn)
		if i < 0 || !strings.Contains(strings.SplitN(r.Stdout[i:], "Found by:", 2)[1][:20], "call frame info") {
			t.Errorf("%s: not found by call frame info", fn)
		}
	}
}
