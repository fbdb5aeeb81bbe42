package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/arm"
	"github.com/gobreakpad/gobreakpad/internal/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
)

// dumpPath runs the printer on a file and returns its output and status.
func dumpPath(t *testing.T, path string, hexdump bool) (string, bool) {
	t.Helper()
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	ok := dumpFile(w, devnull, path, hexdump)
	w.Flush()
	return out.String(), ok
}

// The generated cases' dump.txt were made before the paths inside the dumps
// were rewritten from /tmp/oracle-work to /srv/crash-tests (same length);
// the rewrite reached the text of dump.txt but not its hex dumps of memory.
// Undo it in our hex output so the rest is compared byte for byte.
var (
	rewrittenHex = hex.EncodeToString([]byte("/srv/crash-tests"))
	originalHex  = hex.EncodeToString([]byte("/tmp/oracle-work"))
)

func TestCorpusMatchesBreakpad(t *testing.T) {
	root := corpus.Dir(t)
	type tc struct{ name, dump, want string }
	var cases []tc
	tsv, err := os.ReadFile(filepath.Join(root, "cases.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(tsv)), "\n") {
		f := strings.Split(line, "\t")
		want := filepath.Join(root, "breakpad", "expected", f[0]+".dump.txt")
		if _, err := os.Stat(want); err == nil {
			cases = append(cases, tc{f[0], filepath.Join(root, f[1]), want})
		}
	}
	gen, _ := filepath.Glob(filepath.Join(root, "generated", "*", "dump.txt"))
	for _, want := range gen {
		dir := filepath.Dir(want)
		cases = append(cases, tc{"generated/" + filepath.Base(dir), filepath.Join(dir, "crash.dmp"), want})
	}
	if len(cases) == 0 {
		t.Skip("no expected minidump_dump outputs in the corpus")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, err := os.ReadFile(c.want)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := dumpPath(t, c.dump, false)
			if wantOK := breakpadStatus(string(want)); ok != wantOK {
				t.Errorf("success = %v, Breakpad's = %v", ok, wantOK)
			}
			if log, err := os.ReadFile(filepath.Join(filepath.Dir(c.want), "dump.log")); err == nil {
				// Breakpad logs an ERROR from minidump_dump.cc exactly when it counts a failure.
				if logOK := !strings.Contains(string(log), "minidump_dump.cc") || !strings.Contains(string(log), ": ERROR: "); ok != logOK {
					t.Errorf("success = %v, Breakpad's log says %v", ok, logOK)
				}
			}
			if strings.HasPrefix(c.name, "generated/") {
				got = strings.ReplaceAll(got, rewrittenHex, originalHex)
			}
			if got == string(want) {
				return
			}
			gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
			for i := 0; i < len(gl) || i < len(wl); i++ {
				var g, w string
				if i < len(gl) {
					g = gl[i]
				}
				if i < len(wl) {
					w = wl[i]
				}
				if g != w {
					t.Fatalf("line %d differs (%d vs %d lines)\n got: %.200s\nwant: %.200s", i+1, len(gl), len(wl), g, w)
				}
			}
		})
	}
}

// breakpadStatus infers Breakpad's exit status from its output: it fails
// exactly when the dump cannot be read (no output) or one of the streams it
// requires is not printed. (A raw Linux stream that cannot be read also
// fails; no reference dump has one.)
func breakpadStatus(out string) bool {
	for _, h := range []string{"MDRawHeader\n", "\nMinidumpThreadList\n", "\nMinidumpModuleList\n",
		"\nMinidumpMemoryList\n", "\nMDRawSystemInfo\n", "\nMDRawMiscInfo\n", "\nMinidumpMemoryInfoList\n"} {
		if !strings.Contains(out, h) {
			return false
		}
	}
	return true
}

func writeDump(t *testing.T, b *synth.Builder) string {
	t.Helper()
	data, err := b.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "x.dmp")
	if err := os.WriteFile(p, data, 0o644); err != nil {
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

func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"empty":     nil,
		"not-mdmp":  []byte("ELF\x7fxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
		"truncated": []byte("MDMP\x93\xa7\x00\x00\x05\x00\x00\x00\x20\x00\x00\x00"),
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, data, 0o644)
		out, ok := dumpPath(t, p, false)
		if ok || out != "" {
			t.Errorf("%s: ok=%v output %q; want failure and no output", name, ok, out)
		}
	}
	if _, ok := dumpPath(t, filepath.Join(dir, "missing"), false); ok {
		t.Error("missing file succeeded")
	}
}

func TestRunUsage(t *testing.T) {
	if got := run([]string{"minidump_dump"}); got != 1 {
		t.Errorf("no arguments: status %d, want 1", got)
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
