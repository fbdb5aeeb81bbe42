package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/symstore"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
)

var update = flag.Bool("update", false, "rewrite testdata/walk (the example dump, its symbols and expected report)")

// The example bundled in testdata/walk: a small Linux x86-64 program whose
// draw_pixel, inlined into render, writes through a null pointer.
const (
	exampleDir  = "../../testdata/walk"
	exampleDump = exampleDir + "/crash.dmp"
	exampleSyms = exampleDir + "/symbols"
	exampleOut  = exampleDir + "/crash.txt"
)

const exampleSymText = `MODULE Linux x86_64 ID demo
INFO CODE_ID 64656d6f2d6275696c642d6964
FILE 0 /src/demo/canvas.h
FILE 1 /src/demo/demo.c
INLINE_ORIGIN 0 draw_pixel
FUNC 1100 40 0 render
1100 8 20 1
1108 18 9 0
1120 20 22 1
INLINE 0 21 1 0 1108 18
FUNC 1140 30 0 main
1140 10 30 1
1150 20 31 1
FUNC 1060 30 0 _start
STACK CFI INIT 1100 40 .cfa: $rsp 8 + .ra: .cfa -8 + ^
STACK CFI 1101 .cfa: $rsp 16 + $rbx: .cfa -16 + ^
STACK CFI INIT 1140 30 .cfa: $rsp 8 + .ra: .cfa -8 + ^
STACK CFI 1141 .cfa: $rsp 16 + $rbp: .cfa -16 + ^
STACK CFI 1144 .cfa: $rbp 16 +
STACK CFI INIT 1060 30 .cfa: $rsp 8 + .ra: .undef
`

// writeExample builds the example dump and its symbol store.
func writeExample(t *testing.T) {
	const base = 0x555555554000
	b := synth.New(arch.AMD64, minidump.PlatformLinux)
	b.SystemInfo.MajorVersion, b.SystemInfo.MinorVersion, b.SystemInfo.BuildNumber = 6, 1, 0
	b.SystemInfo.ProcessorLevel, b.SystemInfo.ProcessorRevision = 6, 0x5504 // family 6 model 85 stepping 4
	b.SystemInfo.NumberOfProcessors = 4
	b.TimeDateStamp = 1700000000
	b.SetMiscInfo(minidump.MiscInfo{SizeOfInfo: minidump.MiscInfoSize, Flags1: minidump.MiscInfoProcessTimes,
		ProcessCreateTime: 1700000000 - 3})
	st := synth.NewStack(0x7ffc0000, 8)
	st.U64(42)            // render: saved rbx
	st.Ptr(base + 0x115a) // return into main, after the call to render
	st.U64(0)             // main's frame record (rbp points here): _start's rbp
	st.Ptr(base + 0x1089) // return into _start
	st.Zeros(0x20)
	ctx := &amd64.Context{ContextFlags: amd64.ContextFull,
		Rip: base + 0x1110, Rsp: 0x7ffc0000, Rbp: 0x7ffc0010, Rax: 0, Rbx: 7, Rdi: 3, Rsi: 4}
	b.AddThread(1234, synth.AMD64(ctx), st)
	b.AddELFModule("/usr/local/bin/demo", base, 0x3000, []byte("demo-build-id"))
	// SIGSEGV, SEGV_MAPERR at address 0.
	b.SetExceptionRecord(1234, minidump.ExceptionRecord{ExceptionCode: 11, ExceptionFlags: 1}, synth.AMD64(ctx))
	data, err := b.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	f, err := minidump.NewFileBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	mods, err := f.ModuleList()
	if err != nil {
		t.Fatal(err)
	}
	id := mods[0].DebugIdentifier()
	sym, err := symstore.BreakpadFile(exampleSyms, mods[0].DebugFile(), id, ".sym")
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(exampleSyms)
	if err := os.MkdirAll(filepath.Dir(sym), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sym, []byte(strings.ReplaceAll(exampleSymText, " ID ", " "+id+" ")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exampleDump, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func runCmd(t *testing.T, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	if err := newCommand(&out, io.Discard).Run(context.Background(), append([]string{"minidump_stackwalk"}, args...)); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return out.String()
}

// TestExample walks the bundled synthetic example (docs/stackwalk.md) and
// compares the report with testdata/walk/crash.txt.
func TestExample(t *testing.T) {
	if *update {
		writeExample(t)
		got := runCmd(t, exampleDump, exampleSyms)
		if err := os.WriteFile(exampleOut, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(exampleOut)
	if err != nil {
		t.Fatal(err)
	}
	if got := runCmd(t, exampleDump, exampleSyms); got != string(want) {
		t.Errorf("report differs from %s:\n%s", exampleOut, got)
	}
	for _, s := range []string{
		"demo!draw_pixel [canvas.h : 9 + 0x8]",
		"demo!render [demo.c : 21 + 0x8]",
		"demo!main [demo.c : 31 + 0xa]",
		"demo!_start + 0x29",
		"Crash reason:  SIGSEGV /SEGV_MAPERR",
		"Process uptime: 3 seconds",
	} {
		if !strings.Contains(string(want), s) {
			t.Errorf("the example report lacks %q", s)
		}
	}
}

// TestArgumentForms checks Breakpad's argument forms and flags after the
// positional arguments.
func TestArgumentForms(t *testing.T) {
	m := runCmd(t, "-m", exampleDump, exampleSyms)
	if !strings.HasPrefix(m, "OS|Linux|6.1.0") || !strings.Contains(m, "\n0|0|demo|draw_pixel|/src/demo/canvas.h|9|0x8\n") {
		t.Errorf("-m report:\n%s", m)
	}
	if got := runCmd(t, exampleDump, exampleSyms, "-m"); got != m {
		t.Errorf("flag after the arguments gives a different report")
	}
	if got := runCmd(t, "-c", exampleDump, exampleSyms); !strings.Contains(got, "Thread 0 (crashed)") {
		t.Errorf("-c report:\n%s", got)
	}
	b := runCmd(t, "-b", exampleDump, exampleSyms)
	if !strings.HasPrefix(b, "Thread 0 (crashed)\n 0  demo!draw_pixel") {
		t.Errorf("-b report:\n%s", b)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(runCmd(t, "--json", exampleDump, exampleSyms)), &doc); err != nil {
		t.Errorf("--json: %v", err)
	}
	if _, ok := doc["crashing_thread"]; !ok {
		t.Errorf("--json report lacks crashing_thread")
	}
	if got := runCmd(t, "-s", exampleDump, exampleSyms); !strings.Contains(got, "Stack contents:") {
		t.Errorf("-s report lacks stack contents")
	}
}

func TestMissingDump(t *testing.T) {
	var out bytes.Buffer
	err := newCommand(&out, io.Discard).Run(context.Background(), []string{"minidump_stackwalk", filepath.Join(t.TempDir(), "none.dmp")})
	if err == nil {
		t.Fatal("no error for a missing dump")
	}
}

// TestSignature: --signature prints one line; with --json it is a key of
// the report; --signature-lists adds lists (here: draw_pixel irrelevant).
func TestSignature(t *testing.T) {
	if got := runCmd(t, "--signature", exampleDump, exampleSyms); got != "draw_pixel\n" {
		t.Errorf("--signature: %q", got)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(runCmd(t, "--json", "--signature", exampleDump, exampleSyms)), &doc); err != nil {
		t.Fatalf("--json --signature: %v", err)
	}
	if doc["signature"] != "draw_pixel" {
		t.Errorf("--json --signature: signature key %v", doc["signature"])
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "irrelevant_signature_re.txt"), []byte("draw_pixel\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := runCmd(t, "--signature-lists", dir, exampleDump, exampleSyms); got != "render\n" {
		t.Errorf("--signature-lists: %q", got)
	}
}
