package dumptext_test

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/arm"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/dumptext"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
)

func writeDump(t *testing.T, b *synth.Builder) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.dmp")
	if err := b.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSyntheticDump(t *testing.T) {
	b := synth.New(arch.AMD64, minidump.PlatformLinux)
	stack := synth.NewStack(0x7fff0000, 8)
	stack.Ptr(0x401234)
	ctx := &amd64.Context{ContextFlags: amd64.ContextFull, Rip: 0x401000, Rsp: 0x7fff0000}
	b.AddThread(7, synth.AMD64(ctx), stack)
	b.AddELFModule("/bin/app", 0x400000, 0x1000, []byte{1, 2, 3, 4})
	b.AddStream(minidump.LinuxCmdLine, []byte("app\x00-v\x00"))
	out, ok := dumpPath(t, writeDump(t, b), false)
	if ok {
		t.Error("dump without misc info and memory info list succeeded; Breakpad exits 1")
	}
	for _, want := range []string{
		"  thread_id                   = 0x7\n",
		"  rip           = 0x401000\n",
		"Stack\n0x3412400000000000\n",
		"  (code_identifier)               = \"01020304\"\n",
		"  (debug_identifier)              = \"040302010000000000000000000000000\"\n",
		"Stream MD_LINUX_CMD_LINE:\napp\\0\n-v\\0\n\n\n",
		"  processor_architecture                     = 0x9 (x86-64)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}

	b.SetMiscInfo(minidump.MiscInfo{SizeOfInfo: minidump.MiscInfoSize, Flags1: minidump.MiscInfoProcessID, ProcessID: 42})
	p := writeDump(t, b)
	out, _ = dumpPath(t, p, true)
	if !strings.Contains(out, "  process_id                   = 42\n  process_create_time          = (invalid)\n") {
		t.Errorf("misc info not printed:\n%s", out)
	}
	// Eight bytes, the gap after them, eight missing bytes, the gap after those.
	if !strings.Contains(out, "00000000  34 12 40 00 00 00 00 00"+strings.Repeat(" ", 27)+"|4.@.....        |\n") {
		t.Errorf("hexdump mode output wrong:\n%s", out)
	}
}

func TestDuplicateThreadIDs(t *testing.T) {
	b := synth.New(arch.AMD64, minidump.PlatformLinux)
	ctx := synth.AMD64(&amd64.Context{ContextFlags: amd64.ContextFull})
	b.AddThread(5, ctx, nil)
	b.AddThread(5, ctx, nil)
	out, ok := dumpPath(t, writeDump(t, b), false)
	if ok || strings.Contains(out, "MinidumpThreadList") {
		t.Errorf("a thread list repeating an id was printed (ok=%v)", ok)
	}
	if !strings.Contains(out, "MinidumpModuleList") {
		t.Error("the other streams were not printed")
	}
}

func TestARMContextFormat(t *testing.T) {
	b := synth.New(arch.ARM, minidump.PlatformLinux)
	c := &arm.Context{ContextFlags: arm.ContextFull, Cpsr: 0x10}
	c.Iregs[arm.RegSP] = 0xbeef0000
	c.Iregs[arm.RegPC] = 0x8000
	c.FloatSave.Regs[31] = 0x1f
	c.FloatSave.Extra[7] = 7
	b.AddThread(1, synth.ARM(c), nil)
	out, _ := dumpPath(t, writeDump(t, b), false)
	for _, want := range []string{
		"\nMDRawContextARM\n  context_flags        = 0x40000006\n  r0                   = 0x0\n",
		"  sp                   = 0xbeef0000\n  lr                   = 0x0\n  pc                   = 0x8000\n  cpsr                 = 0x10\n",
		"  float_save.regs[31]  = 0x1f\n",
		"  float_save.extra[ 7] = 0x7\nNo stack\n", // no blank line after an ARM context, as in Breakpad
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestCrashpadFormat(t *testing.T) {
	w := minidump.NewWriter()
	str := func(s string) uint32 { return w.Data(append(le32(uint32(len(s))), s...)).Rva }
	dict := func(kv ...string) minidump.LocationDescriptor {
		b := le32(uint32(len(kv) / 2))
		for i := 0; i < len(kv); i += 2 {
			b = append(b, le32(str(kv[i]), str(kv[i+1]))...)
		}
		return w.Data(b)
	}
	simple := dict("zeta", "last", "alpha", "first", "alpha", "duplicate")
	val := w.Data(append(le32(3), 1, 2, 0xab)).Rva
	sval := w.Data(append(le32(5), "ab\x00cd"...)).Rva
	objs := w.Data(append(le32(2), append(le32(str("bytes"), 7, val), le32(str("text"), 1, sval)...)...))
	list := w.Data(append(le32(1), le32(str("listed"))...))
	mdict := dict("k", "v")
	info := w.Data(le32(1, list.DataSize, list.Rva, mdict.DataSize, mdict.Rva, objs.DataSize, objs.Rva))
	links := w.Data(le32(1, 3, 28, info.Rva))
	cp := le32(1)
	cp = append(cp, make([]byte, 32)...) // report and client ids
	cp = append(cp, le32(simple.DataSize, simple.Rva, links.DataSize, links.Rva)...)
	w.Stream(minidump.CrashpadInfoStream, cp)
	data, err := w.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "c.dmp")
	os.WriteFile(p, data, 0o644)
	out, _ := dumpPath(t, p, false)
	want := `MDRawCrashpadInfo
  version = 1
  report_id = 00000000-0000-0000-0000-000000000000
  client_id = 00000000-0000-0000-0000-000000000000
  simple_annotations["alpha"] = first
  simple_annotations["zeta"] = last
  module_list[0].minidump_module_list_index = 3
  module_list[0].version = 1
  module_list[0].list_annotations[0] = listed
  module_list[0].simple_annotations["k"] = v
  module_list[0].crashpad_annotations["bytes"] (type = 7) = 0102AB
  module_list[0].crashpad_annotations["text"] (type = 1) = ab
  address_mask = 0

`
	if !strings.Contains(out, want) {
		t.Errorf("crashpad info printed as\n%s\nwant\n%s", out, want)
	}
}

func le32(v ...uint32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	return b
}

func TestProblems(t *testing.T) {
	b := synth.New(arch.AMD64, minidump.PlatformLinux)
	ctx := synth.AMD64(&amd64.Context{ContextFlags: amd64.ContextFull})
	b.AddThread(5, ctx, nil)
	b.AddThread(5, ctx, nil)
	f, err := b.File()
	if err != nil {
		t.Fatal(err)
	}
	err = dumptext.Write(new(strings.Builder), f, dumptext.Options{})
	var problems dumptext.Problems
	if !errors.As(err, &problems) {
		t.Fatalf("Write returned %v, want Problems", err)
	}
	// The repeated thread id, the missing misc info and memory info list.
	if len(problems) != 3 || !strings.Contains(problems[0].Error(), "repeats id 0x5") ||
		!errors.Is(problems[1], minidump.ErrNoStream) || !errors.Is(problems[2], minidump.ErrNoStream) {
		t.Errorf("problems = %q", problems)
	}
}

// failWriter accepts n bytes, then fails.
type failWriter struct{ n int }

var errFull = errors.New("disk full")

func (w *failWriter) Write(b []byte) (int, error) {
	if len(b) > w.n {
		n := w.n
		w.n = 0
		return n, errFull
	}
	w.n -= len(b)
	return len(b), nil
}

func TestWriteError(t *testing.T) {
	f, err := minidump.Open(filepath.Join("..", "..", "testdata", "walk", "crash.dmp"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := &failWriter{n: 100}
	if err := dumptext.Write(w, f, dumptext.Options{}); !errors.Is(err, errFull) {
		t.Errorf("Write = %v, want an error wrapping %v", err, errFull)
	}
}
