package microdump

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// x86Context returns the hex of an x86 context with eip and esp set.
func x86Context(eip, esp uint32) string {
	c := &x86.Context{ContextFlags: x86.ContextFull, Eip: eip, Esp: esp}
	return strings.ToUpper(hexOf(c.Encode()))
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

func sample(prefix string) string {
	lines := []string{
		Begin,
		"V Product:1.2.3",
		"O L x86 0A i686 Linux 6.1 #1 SMP",
		"P browser",
		"R 0000000B SIGSEGV 00000010",
		"G UNKNOWN",
		"S 0 FFD00010 FFD00000 00000010",
		"S FFD00000 00112233445566778899",
		"S FFD0000A AABBCCDDEEFF",
		"C " + x86Context(0x08048010, 0xffd00004),
		"M 08048000 00000000 00001000 0123456789ABCDEF0123456789ABCDEF0 prog",
		End,
	}
	var b strings.Builder
	b.WriteString("unrelated line\n")
	for _, l := range lines {
		b.WriteString(prefix + l + "\r\n")
	}
	return b.String()
}

func TestParse(t *testing.T) {
	for _, prefix := range []string{"", "W/google-breakpad( 3745): ", "02-23 15:49:14.700  1740  1739 F google-breakpad: "} {
		md, err := Parse([]byte(sample(prefix)))
		if err != nil {
			t.Fatalf("%q: %v", prefix, err)
		}
		if len(md.Warnings) != 0 || !md.Complete {
			t.Errorf("%q: warnings %q, complete %v", prefix, md.Warnings, md.Complete)
		}
		if md.OS != (OS{ID: "L", Arch: "x86", CPUCount: 10, HWArch: "i686", Version: "Linux 6.1 #1 SMP"}) || md.OS.Name() != "Linux" {
			t.Errorf("%q: OS %+v", prefix, md.OS)
		}
		if md.Product != "Product:1.2.3" || md.ProcessType != "browser" {
			t.Errorf("product %q process %q", md.Product, md.ProcessType)
		}
		if md.Crash == nil || *md.Crash != (Crash{Signal: 11, Reason: "SIGSEGV", Address: 0x10}) {
			t.Errorf("crash %+v", md.Crash)
		}
		if md.GPU != (GPU{}) {
			t.Errorf("GPU %+v", md.GPU)
		}
		if md.Stack.Base != 0xffd00000 || len(md.Stack.Data) != 16 || md.Stack.SP != 0xffd00010 {
			t.Errorf("stack %#x+%d sp %#x", md.Stack.Base, len(md.Stack.Data), md.Stack.SP)
		}
		if b, err := md.Stack.ReadMemory(0xffd0000a, 2); err != nil || b[0] != 0xaa || b[1] != 0xbb {
			t.Errorf("ReadMemory: %x %v", b, err)
		}
		if _, err := md.Stack.ReadMemory(0xffd0000f, 2); err == nil {
			t.Error("ReadMemory past the end succeeded")
		}
		if md.Context == nil || md.Context.X86 == nil || md.Context.X86.Eip != 0x08048010 {
			t.Fatalf("context %+v", md.Context)
		}
		if len(md.Modules) != 1 || md.Modules[0].Name != "prog" || md.Modules[0].Size != 0x1000 {
			t.Errorf("modules %+v", md.Modules)
		}
	}
}

func TestParseProblems(t *testing.T) {
	if _, err := Parse([]byte("nothing here\n")); !errors.Is(err, ErrNotFound) {
		t.Errorf("no microdump: %v", err)
	}
	// Tagged microdumps ignore other programs' untagged lines.
	text := "I/google-breakpad(1): " + Begin + "\nO L arm 01 armv7l x\nI/google-breakpad(1): O A arm 02 armv7l y\n"
	md, err := Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if md.OS.ID != "A" || md.Complete || len(md.Warnings) != 1 {
		t.Errorf("OS %+v complete %v warnings %q", md.OS, md.Complete, md.Warnings)
	}
	for _, tc := range []struct{ rec, warn string }{
		{"C 0011", "malformed x86 context: 2 bytes instead of 716"},
		{"C 00ZZ", "bad hex digits"},
		{"S FFD00000 0011\nS FFD00010 2233", "not contiguous"},
		{"M 1000 0 zz ID name", "M record name"},
	} {
		md, err := Parse([]byte(Begin + "\nO L x86 01 i686 v\n" + tc.rec + "\n" + End + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		if len(md.Warnings) != 1 || !strings.Contains(md.Warnings[0], tc.warn) {
			t.Errorf("%q: warnings %q, want %q", tc.rec, md.Warnings, tc.warn)
		}
	}
}

// TestCorpusMicrodumps parses every microdump of the shared corpus: each has
// a context of its CPU, a stack and modules, and nothing is skipped.
func TestCorpusMicrodumps(t *testing.T) {
	dir := corpus.Dir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "breakpad/processor/microdump-*.dmp"))
	more, _ := filepath.Glob(filepath.Join(dir, "generated/*-microdump/crash.microdump"))
	files = append(files, more...)
	if len(files) == 0 {
		t.Skip("no microdumps in the corpus")
	}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		md, err := Parse(text)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if md.Context == nil || len(md.Stack.Data) == 0 || len(md.Modules) == 0 || len(md.Warnings) != 0 || !md.Complete {
			t.Errorf("%s: context %v, %d stack bytes, %d modules, warnings %q, complete %v",
				f, md.Context != nil, len(md.Stack.Data), len(md.Modules), md.Warnings, md.Complete)
		}
		if md.Context != nil && md.Context.Arch != md.OS.Arch {
			t.Errorf("%s: context for %s, OS record says %s", f, md.Context.Arch, md.OS.Arch)
		}
	}
}

// FuzzParse parses arbitrary text as a microdump: it must not panic, and
// what it returns must be consistent.
func FuzzParse(f *testing.F) {
	f.Add([]byte(sample("")))
	f.Add([]byte(sample("W/google-breakpad( 3745): ")))
	f.Add([]byte(Begin + "\nO A x86_64 01 x86_64 v\nC " + strings.Repeat("00", 300) + "\n" + End))
	f.Add([]byte(Begin + "\nO A mips 01 mips v\nC " + strings.Repeat("00", MIPSContextSize) + "\n" + End))
	f.Fuzz(func(t *testing.T, data []byte) {
		md, err := Parse(data)
		if err != nil {
			return
		}
		if len(md.Stack.Data) > len(data) {
			t.Fatalf("%d stack bytes from %d bytes of text", len(md.Stack.Data), len(data))
		}
		if md.Context != nil && md.Context.Arch != md.OS.Arch {
			t.Fatalf("context for %s, OS %s", md.Context.Arch, md.OS.Arch)
		}
		_, _ = md.Stack.ReadMemory(md.Stack.Base, 8)
	})
}
