//go:build linux

package hostile

import (
	"debug/macho"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// TestGeneratedMachO runs dump_syms on damaged Mach-O inputs (docs/hostile.md,
// "Mach-O"): a universal header claiming 2^32-1 architectures, load
// commands past the file, a truncated header, an __unwind_info whose page
// offsets point past the section or name one page twice, and a dSYM
// bundle of two files: each a clear message, at once.
func TestGeneratedMachO(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fat := make([]byte, 64)
	binary.BigEndian.PutUint32(fat, 0xcafebabe)
	binary.BigEndian.PutUint32(fat[4:], 0xffffffff)
	run{name: "universal header of 2^32-1 architectures", prog: "dump_syms", args: []string{write("fat-4G", fat)}, exit: 1,
		stderr: []string{"universal header lists 4294967295 architectures, over the limit of 64"}}.do(t)

	thin := make([]byte, 64)
	le := binary.LittleEndian
	le.PutUint32(thin, 0xfeedfacf)
	le.PutUint32(thin[4:], 0x01000007)
	le.PutUint32(thin[12:], 2)
	le.PutUint32(thin[16:], 1)
	le.PutUint32(thin[20:], 0x7fffffff)
	run{name: "load commands past the file", prog: "dump_syms", args: []string{write("cmds-past", thin)}, exit: 1,
		stderr: []string{"load commands (2147483647 bytes) run past the end of the 64-byte object"}}.do(t)
	run{name: "truncated Mach-O header", prog: "dump_syms", args: []string{write("short", thin[:12])}, exit: 1,
		stderr: []string{"Mach-O header: file truncated"}}.do(t)

	bundle := filepath.Join(dir, "two.dSYM", "Contents", "Resources", "DWARF")
	if err := os.MkdirAll(bundle, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(bundle, n), thin, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run{name: "dSYM bundle of two files", prog: "dump_syms", args: []string{filepath.Join(dir, "two.dSYM")}, exit: 1,
		stderr: []string{"dSYM bundle with 2 files in Contents/Resources/DWARF (a, b)"}}.do(t)

	hello, err := os.ReadFile(filepath.Join(corpus.Path(), "macos", "built", "hello-x86_64"))
	if err != nil {
		t.Logf("corpus hello-x86_64: %v: the __unwind_info cases skipped", err)
		return
	}
	f, err := macho.Open(filepath.Join(corpus.Path(), "macos", "built", "hello-x86_64"))
	if err != nil {
		t.Fatal(err)
	}
	ui := f.Section("__unwind_info")
	f.Close()
	index := ui.Offset + le.Uint32(hello[ui.Offset+20:])
	past := append([]byte(nil), hello...)
	le.PutUint32(past[index+4:], 0xffff0000)
	run{name: "__unwind_info page past the section", prog: "dump_syms", args: []string{"-v", write("unwind-past", past)},
		stderr: []string{"__unwind_info: index entry 0: second-level page at 0xffff0000 past the"},
		stdout: []string{"MODULE mac x86_64", "STACK CFI INIT 4d0"}}.do(t)
	// Two index entries naming the first's page (a loop through the
	// pages): the second is refused. The new index of three entries goes
	// to the section's last 36 bytes.
	loop := append([]byte(nil), hello...)
	at := uint32(ui.Size) - 36
	le.PutUint32(loop[ui.Offset+20:], at)
	le.PutUint32(loop[ui.Offset+24:], 3)
	n := ui.Offset + at
	copy(loop[n:n+12], hello[index:index+12])
	copy(loop[n+12:n+24], hello[index:index+12])
	le.PutUint32(loop[n+12:], le.Uint32(hello[index:])+1)
	copy(loop[n+24:n+36], hello[index+12:index+24])
	run{name: "__unwind_info page listed twice", prog: "dump_syms", args: []string{"-v", write("unwind-loop", loop)},
		stderr: []string{"already listed"}, stdout: []string{"MODULE mac x86_64"}}.do(t)
}
