package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
)

// TestMachOFolder walks a synthetic macOS dump whose module is a corpus
// dylib, with its symbols made on the fly from the folder of Mach-O files
// and dSYMs given as the symbol path (symbols/machosyms): the crash is in
// many_regs, frameless (compact unwind STACK_IMMD: six pushes and push
// rax), called from big_frame (STACK_IND: sub rsp, 0xbc8); both frames
// leave by the compact unwind's rules, not by frame pointers or scanning.
func TestMachOFolder(t *testing.T) {
	dir := corpus.File(t, "macos/built")
	const base = 0x10a000000
	b := synth.New(arch.AMD64, minidump.PlatformMacOSX)
	st := synth.NewStack(0x7ff7b0000000, 8)
	st.U64(0x99)           // many_regs: push rax
	st.U64(0x11)           // rbx
	st.U64(0x12)           // r12
	st.U64(0x13)           // r13
	st.U64(0x14)           // r14
	st.U64(0x15)           // r15
	st.U64(0x16)           // rbp
	st.Ptr(base + 0x530)   // return into big_frame
	st.Zeros(3016 - 0x100) // big_frame's locals
	st.Zeros(0x100)
	st.Ptr(0) // big_frame's return: the end
	ctx := &amd64.Context{ContextFlags: amd64.ContextFull, Rip: base + 0x610, Rsp: 0x7ff7b0000000, Rbp: 0xdead}
	b.AddThread(1, synth.AMD64(ctx), st)
	guid := minidump.GUID{Data1: 0x4C4C4484, Data2: 0x5555, Data3: 0x3144, Data4: [8]byte{0xA1, 0x5B, 0x30, 0x91, 0xC3, 0xE1, 0xF4, 0xF4}}
	b.AddPDBModule("/usr/local/lib/libframeless-x86_64.dylib", base, 0x5000, guid, 0, "libframeless-x86_64.dylib")
	b.SetExceptionRecord(1, minidump.ExceptionRecord{ExceptionCode: 1, ExceptionFlags: 0}, synth.AMD64(ctx))
	dump := filepath.Join(t.TempDir(), "mac.dmp")
	if err := b.WriteFile(dump); err != nil {
		t.Fatal(err)
	}
	out := runCmd(t, "--symbols-cache", t.TempDir(), dump, dir)
	for _, s := range []string{
		" 0  libframeless-x86_64.dylib!many_regs [frameless.c : ",
		" 1  libframeless-x86_64.dylib!big_frame [frameless.c : ",
		"rbx = 0x0000000000000011",
		"rbp = 0x0000000000000016",
		"Found by: call frame info",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("no %q in the report:\n%s", s, out)
		}
	}
	if strings.Contains(out, "Found by: stack scanning") || strings.Contains(out, " 2  ") {
		t.Errorf("frames past big_frame:\n%s", out)
	}
}

// TestMachOSystemFrame walks from a system library without symbols
// (libsystem_kernel.dylib, a frame-pointer frame, as Apple builds it) into
// the corpus' hello-x86_64: the system frame is left by its frame pointer,
// middle by the compact unwind's rules (RBP frame, rbx saved), never by
// scanning.
func TestMachOSystemFrame(t *testing.T) {
	dir := corpus.File(t, "macos/built")
	const base, sys, sp = 0x100000000, 0x7ff80a000000, 0x7ff7b0000000
	b := synth.New(arch.AMD64, minidump.PlatformMacOSX)
	st := synth.NewStack(sp, 8)
	st.Zeros(16)         // __pthread_kill's locals
	st.U64(sp + 64)      // its frame record: middle's rbp
	st.Ptr(base + 0x478) // return into middle
	st.U64(0x99)         // middle: push rax
	st.U64(0x11)         // rbx
	st.U64(0x14)         // r14
	st.U64(0x15)         // r15
	st.U64(sp + 96)      // middle's frame record (sp+64): crash's rbp
	st.Ptr(base + 0x4b3) // return into crash
	st.U64(0x98)         // crash: push rax
	st.U64(0x21)         // rbx
	st.U64(0)            // crash's frame record (sp+96)
	st.Ptr(0)            // the end
	ctx := &amd64.Context{ContextFlags: amd64.ContextFull, Rip: sys + 0x100, Rsp: sp, Rbp: sp + 16}
	b.AddThread(1, synth.AMD64(ctx), st)
	b.AddPDBModule("/usr/lib/system/libsystem_kernel.dylib", sys, 0x8000,
		minidump.GUID{Data1: 0x11223344, Data2: 0x5566, Data3: 0x7788, Data4: [8]byte{9, 10, 11, 12, 13, 14, 15, 16}}, 0, "libsystem_kernel.dylib")
	b.AddPDBModule("/Applications/Hello.app/Contents/MacOS/hello-x86_64", base, 0x4000,
		minidump.GUID{Data1: 0x4C4C44A5, Data2: 0x5555, Data3: 0x3144, Data4: [8]byte{0xA1, 0xE6, 0xAD, 0x14, 0x02, 0xE0, 0xF3, 0xC7}}, 0, "hello-x86_64")
	b.SetExceptionRecord(1, minidump.ExceptionRecord{ExceptionCode: 1}, synth.AMD64(ctx))
	dump := filepath.Join(t.TempDir(), "mac.dmp")
	if err := b.WriteFile(dump); err != nil {
		t.Fatal(err)
	}
	out := runCmd(t, "--symbols-cache", t.TempDir(), dump, dir)
	i1 := strings.Index(out, " 1  hello-x86_64!middle [hello.c : ")
	i2 := strings.Index(out, " 2  hello-x86_64!crash [hello.c : ")
	if !strings.Contains(out, " 0  libsystem_kernel.dylib + 0x100") || i1 < 0 || i2 < i1 ||
		!strings.Contains(out[i1:i2], "Found by: previous frame's frame pointer") || !strings.Contains(out[i2:], "Found by: call frame info") ||
		!strings.Contains(out[i2:], "rbx = 0x0000000000000011") || strings.Contains(out, "stack scanning") || strings.Contains(out, " 3  ") {
		t.Errorf("report:\n%s", out)
	}
}

// TestMachOFolder32 walks a synthetic x86 macOS dump whose module is the
// i386 executable of dumpsyms/macho's tests (testdata/mach32/link-i386,
// with its dSYM), its symbols made from that folder: the crash at bump's
// first instruction (an __eh_frame FDE, Darwin's i386 register numbers),
// called from big_frame (compact unwind, frameless indirect: sub esp,
// 0xbc0 and three pushes), called from main (frameless immediate: 48
// bytes); every frame by call frame info, the saved registers recovered.
func TestMachOFolder32(t *testing.T) {
	dir := filepath.Join("..", "..", "dumpsyms", "macho", "testdata", "mach32")
	const base, sp = 0xa00000, 0xbff00000
	// Module offsets (__TEXT at 0x1000 in the file): bump 0x1070, the
	// returns after big_frame's call of bump and main's of big_frame.
	b := synth.New(arch.X86, minidump.PlatformMacOSX)
	st := synth.NewStack(sp, 4)
	st.U32(base + 0x111d) // bump's return into big_frame
	st.Zeros(3008)        // big_frame's locals
	st.U32(0x13)          // esi
	st.U32(0x12)          // edi
	st.U32(0x11)          // ebx
	st.U32(base + 0x1175) // return into main
	st.Zeros(28)          // main's locals
	st.U32(0x23)          // esi
	st.U32(0x22)          // edi
	st.U32(0x21)          // ebx
	st.U32(0x20)          // ebp
	st.U32(0)             // main's return: the end
	ctx := &x86.Context{ContextFlags: x86.ContextFull, Eip: base + 0x1070, Esp: sp, Ebp: 0xdead, Ebx: 0xb0, Esi: 0xb1, Edi: 0xb2}
	b.AddThread(1, synth.X86(ctx), st)
	// LC_UUID 990968A8-BD44-0B2B-F745-8A69AFFB772C
	guid := minidump.GUID{Data1: 0x990968A8, Data2: 0xBD44, Data3: 0x0B2B, Data4: [8]byte{0xF7, 0x45, 0x8A, 0x69, 0xAF, 0xFB, 0x77, 0x2C}}
	b.AddPDBModule("/Applications/Link.app/Contents/MacOS/link-i386", base, 0x3000, guid, 0, "link-i386")
	b.SetExceptionRecord(1, minidump.ExceptionRecord{ExceptionCode: 1}, synth.X86(ctx))
	dump := filepath.Join(t.TempDir(), "mac32.dmp")
	if err := b.WriteFile(dump); err != nil {
		t.Fatal(err)
	}
	out := runCmd(t, "--symbols-cache", t.TempDir(), dump, dir)
	i1 := strings.Index(out, " 1  link-i386!big_frame [link.c : ")
	i2 := strings.Index(out, " 2  link-i386!main [link.c : ")
	if !strings.Contains(out, " 0  link-i386!bump [link.c : ") || i1 < 0 || i2 < i1 ||
		strings.Count(out, "Found by: call frame info") != 2 || strings.Contains(out, "stack scanning") || strings.Contains(out, " 3  ") ||
		!strings.Contains(out[i2:], "ebx = 0x00000011") || !strings.Contains(out[i2:], "esi = 0x00000013") ||
		!strings.Contains(out[i2:], "ebp = 0x0000dead") || !strings.Contains(out[i2:], "esp = 0xbff00bd4") {
		t.Errorf("report:\n%s", out)
	}
}
