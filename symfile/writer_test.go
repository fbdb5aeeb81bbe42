package symfile

import (
	"bytes"
	"errors"
	"testing"
)

func TestWriterRecords(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	w.WriteModule(Module{OS: "windows", Arch: "x86", ID: "5A9832E5287241C1838ED98914E9B7FF1", Name: "test app.pdb"})
	w.WriteCodeID(CodeID{ID: "5B3C7A2E1000", File: "test_app.exe"})
	w.WriteCodeID(CodeID{ID: "e5b6ea8d"})
	w.WriteInfo(Info{Key: "GENERATOR", Value: "mozilla/dump_syms 2.3.4"})
	w.WriteFile(File{Number: 0, Name: `c:\src\file with space.cc`})
	w.WriteInlineOrigin(InlineOrigin{ID: 7, Name: "inner(int)"})
	w.WriteInlineOrigin(InlineOrigin{ID: 8, HasFile: true, File: -1, Name: "artificial"})
	w.WriteFunc(Func{Address: 0x1A2B, Size: 0x30, ParamSize: 8, Name: "main"})
	w.WriteFunc(Func{Multiple: true, Address: 0x10, Size: 0x1, Name: "folded"})
	w.WriteInline(Inline{Depth: 0, CallLine: 12, CallFile: 3, HasCallFile: true, Origin: 7, Ranges: []Range{{0x1A30, 0x4}, {0x1A40, 0x8}}})
	w.WriteInline(Inline{Depth: 1, CallLine: 5, Origin: 2, Ranges: []Range{{0x1A30, 0x2}}})
	w.WriteInline(Inline{Depth: 1, CallLine: 6, CallFile: -1, HasCallFile: true, Origin: 8, Ranges: []Range{{0x1A34, 0x2}}})
	w.WriteLine(Line{Address: 0x1A2B, Size: 0x5, Line: 42, File: 0})
	w.WriteLine(Line{Address: 0x1A30, Size: 0x10, Line: 0, File: 11})
	w.WritePublic(Public{Address: 0x2000, ParamSize: 0xc, Name: "_start"})
	w.WritePublic(Public{Multiple: true, Address: 0x2010, Name: "alias"})
	w.WriteCFIInit(CFIInit{Address: 0x1A2B, Size: 0x30, Rules: ".cfa: $rsp 8 + .ra: .cfa -8 + ^"})
	w.WriteCFI(CFI{Address: 0x1A2C, Rules: ".cfa: $rsp 16 + $rbp: .cfa -16 + ^"})
	w.WriteStackWin(StackWin{Type: WinFrameData, RVA: 0x1000, CodeSize: 0x4e, PrologSize: 6, EpilogSize: 1, ParamSize: 8, SavedRegisterSize: 4, LocalSize: 0x10, MaxStackSize: 0, HasProgramString: true, ProgramString: "$T0 $ebp = $eip $T0 4 + ^ = $ebp $T0 ^ = $esp $T0 8 + ="})
	w.WriteStackWin(StackWin{Type: WinFPO, RVA: 0x2000, CodeSize: 0x10, AllocatesBasePointer: true})
	w.WriteStackWin(StackWin{Type: WinFPO, RVA: 0x2010, CodeSize: 0x10})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := `MODULE windows x86 5A9832E5287241C1838ED98914E9B7FF1 test app.pdb
INFO CODE_ID 5B3C7A2E1000 test_app.exe
INFO CODE_ID e5b6ea8d
INFO GENERATOR mozilla/dump_syms 2.3.4
FILE 0 c:\src\file with space.cc
INLINE_ORIGIN 7 inner(int)
INLINE_ORIGIN 8 -1 artificial
FUNC 1a2b 30 8 main
FUNC m 10 1 0 folded
INLINE 0 12 3 7 1a30 4 1a40 8
INLINE 1 5 2 1a30 2
INLINE 1 6 -1 8 1a34 2
1a2b 5 42 0
1a30 10 0 11
PUBLIC 2000 c _start
PUBLIC m 2010 0 alias
STACK CFI INIT 1a2b 30 .cfa: $rsp 8 + .ra: .cfa -8 + ^
STACK CFI 1a2c .cfa: $rsp 16 + $rbp: .cfa -16 + ^
STACK WIN 4 1000 4e 6 1 8 4 10 0 1 $T0 $ebp = $eip $T0 4 + ^ = $ebp $T0 ^ = $esp $T0 8 + =
STACK WIN 0 2000 10 0 0 0 0 0 0 0 1
STACK WIN 0 2010 10 0 0 0 0 0 0 0 0
`
	if got := out.String(); got != want {
		t.Errorf("writer output:\n%s\nwant:\n%s", got, want)
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	f.n++
	return 0, errors.New("disk full")
}

func TestWriterStickyError(t *testing.T) {
	fw := &failWriter{}
	w := NewWriter(fw)
	// Enough output to overflow the buffer and reach the failing writer.
	var err error
	for i := 0; i < 10000 && err == nil; i++ {
		err = w.WriteFunc(Func{Address: uint64(i), Size: 1, Name: "a_fairly_long_function_name_to_fill_the_buffer"})
	}
	if err == nil {
		t.Fatal("no error from a failing writer")
	}
	if err := w.WriteModule(Module{}); err == nil {
		t.Error("error was not sticky")
	}
	if err := w.Flush(); err == nil {
		t.Error("Flush lost the error")
	}
	if fw.n != 1 {
		t.Errorf("underlying writer called %d times after failing, want 1", fw.n)
	}
}
