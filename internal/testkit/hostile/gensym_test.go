//go:build linux

package hostile

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
)

// symDump writes a dump of one thread in module "app" (base 0x400000): an
// amd64 Linux dump (ELF module) or an x86 Windows one (PDB module, for
// STACK WIN). Its instruction pointer is at 0x1020 in the module and its
// stack holds 64 return addresses into it, so that a scan walks through
// the module's symbols. It returns the dump's path and the module's
// symbol-store directory name (its debug file and identifier).
func symDump(t *testing.T, windows bool) (path, debugFile, debugID string) {
	t.Helper()
	var b *synth.Builder
	if windows {
		b = synth.New(arch.X86, minidump.PlatformWin32NT)
		st := synth.NewStack(0x120000, 4)
		for range 64 {
			st.Ptr(0x401030)
		}
		ctx := &x86.Context{ContextFlags: x86.ContextFull, Eip: 0x401020, Esp: 0x120000, Ebp: 0x120100}
		b.AddThread(1, synth.X86(ctx), st)
		b.AddPDBModule(`c:\app.exe`, 0x400000, 0x10000, minidump.GUID{Data1: 1}, 1, "app.pdb")
		b.SetException(1, 0xc0000005, 0, synth.X86(ctx))
		debugFile, debugID = "app.pdb", "000000010000000000000000000000001"
	} else {
		b = synth.New(arch.AMD64, minidump.PlatformLinux)
		st := synth.NewStack(0x7fff0000, 8)
		for range 64 {
			st.Ptr(0x401030)
		}
		ctx := &amd64.Context{ContextFlags: amd64.ContextFull, Rip: 0x401020, Rsp: 0x7fff0000, Rbp: 0x7fff0100}
		b.AddThread(1, synth.AMD64(ctx), st)
		b.AddELFModule("/bin/app", 0x400000, 0x10000, []byte("0123456789abcdef"))
		b.SetException(1, 11, 0, synth.AMD64(ctx))
		debugFile, debugID = "app", "33323130353437363839616263646566"+"0"
	}
	path = filepath.Join(t.TempDir(), "app.dmp")
	if err := b.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path, debugFile, debugID
}

// symStore writes the symbol store of symDump's module: the MODULE line,
// then body's records. It returns the store's root.
func symStore(t *testing.T, windows bool, debugFile, debugID string, body func(w *bufio.Writer)) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, debugFile, debugID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, strings.TrimSuffix(debugFile, ".pdb")+".sym"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	if windows {
		fmt.Fprintf(w, "MODULE windows x86 %s %s\n", debugID, debugFile)
	} else {
		fmt.Fprintf(w, "MODULE Linux x86_64 %s %s\n", debugID, debugFile)
	}
	body(w)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return root
}

// long is n bytes of c.
func long(w *bufio.Writer, c byte, n int) {
	b := []byte(strings.Repeat(string(c), 1<<16))
	for ; n >= len(b); n -= len(b) {
		w.Write(b)
	}
	w.Write(b[:n])
}

// TestGeneratedSymbolFiles walks a generated dump with generated symbol
// files holding huge numbers in every record kind (FILE numbers,
// INLINE_ORIGIN ids, INLINE depths, line numbers and sizes, STACK WIN
// fields), many records of each kind, and long names and rules: each walk
// ends at once, in bounded memory and output, symbolizing what it can
// (records with numbers beyond Breakpad's types are dropped, as Breakpad's
// parser drops them).
func TestGeneratedSymbolFiles(t *testing.T) {
	const many = 200000
	for _, c := range []struct {
		name    string
		windows bool
		body    func(w *bufio.Writer)
		want    []string // in the -m output
		maxOut  int64
	}{
		{name: "file-numbers", body: func(w *bufio.Writer) {
			w.WriteString("FILE 4294967295 a.c\nFILE 18446744073709551615 b.c\nFILE 4000000000 c.c\nFUNC 1000 100 0 f\n1020 10 7 4000000000\n1030 10 8 18446744073709551615\n")
		}, want: []string{"0|0|app|f|"}},
		{name: "file-records", body: func(w *bufio.Writer) {
			for i := range many {
				fmt.Fprintf(w, "FILE %d f%d.c\n", uint64(i)*(1<<44), i)
			}
			w.WriteString("FUNC 1000 100 0 f\n1020 10 7 17592186044416\n")
		}, want: []string{"0|0|app|f|"}},
		{name: "inline-origin-ids", body: func(w *bufio.Writer) {
			w.WriteString("FILE 0 a.c\nINLINE_ORIGIN 4294967295 g\nINLINE_ORIGIN 18446744073709551615 h\nFUNC 1000 100 0 f\nINLINE 0 5 0 4294967295 1020 10\nINLINE 1 6 0 18446744073709551615 1020 10\n1020 10 7 0\n")
		}, want: []string{"0|0|app|f|a.c|7|0x0"}},
		{name: "inline-origin-records", body: func(w *bufio.Writer) {
			w.WriteString("FILE 0 a.c\n")
			for i := range many {
				fmt.Fprintf(w, "INLINE_ORIGIN %d g%d\n", uint64(i)<<40, i)
			}
			w.WriteString("FUNC 1000 100 0 f\nINLINE 0 5 0 1099511627776 1020 10\n1020 10 7 0\n")
		}, want: []string{"0|0|app|f|a.c|7|0x0"}},
		{name: "inline-depth", body: func(w *bufio.Writer) {
			w.WriteString("FILE 0 a.c\nINLINE_ORIGIN 0 g\nFUNC 1000 100 0 f\nINLINE 4294967295 5 0 0 1020 10\nINLINE 18446744073709551615 5 0 0 1020 10\n1020 10 7 0\n")
		}},
		{name: "inline-records-nested", body: func(w *bufio.Writer) {
			w.WriteString("FILE 0 a.c\nINLINE_ORIGIN 0 g\nFUNC 1000 100 0 f\n")
			for i := range many {
				fmt.Fprintf(w, "INLINE %d 5 0 0 1020 10\n", i)
			}
			w.WriteString("1020 10 7 0\n")
		}, maxOut: 64 << 20},
		{name: "line-records", body: func(w *bufio.Writer) {
			w.WriteString("FILE 0 a.c\nFUNC 1000 100 0 f\n")
			for range many {
				w.WriteString("1020 10 4294967295 0\n")
			}
			w.WriteString("1030 ffffffffffffffff 18446744073709551615 0\n")
		}, want: []string{"0|0|app|f|"}},
		{name: "func-records", body: func(w *bufio.Writer) {
			for i := range many {
				fmt.Fprintf(w, "FUNC %x 1 0 f%d\n", 0x1000+i, i)
			}
			w.WriteString("FUNC ffffffffffffffff ffffffffffffffff ffffffff huge\nPUBLIC ffffffffffffffff ffffffff p\n")
		}, want: []string{"app|f32|"}},
		{name: "public-records", body: func(w *bufio.Writer) {
			for i := range many {
				fmt.Fprintf(w, "PUBLIC %x 0 p%d\n", 0x1000+i, i)
			}
			w.WriteString("PUBLIC ffffffffffffffff ffffffff huge\n")
		}, want: []string{"0|0|app|p32|"}},
		{name: "cfi-records", body: func(w *bufio.Writer) {
			w.WriteString("FUNC 1000 100 0 f\nSTACK CFI INIT 1000 ffffffffffffffff .cfa: $rsp 8 + .ra: .cfa -8 + ^\n")
			for i := range many {
				fmt.Fprintf(w, "STACK CFI %x $rbx: $rsp %d +\n", 0x1000+i, i)
			}
			w.WriteString("STACK CFI INIT ffffffffffffffff ffffffffffffffff .cfa: $rsp 8 +\n")
		}, want: []string{"0|0|app|f|"}},
		{name: "stack-win-fields", windows: true, body: func(w *bufio.Writer) {
			w.WriteString("FUNC 1000 100 0 f\n")
			w.WriteString("STACK WIN 4 1000 100 ffffffff ffffffff ffffffff ffffffff ffffffff 1 $T0 $ebp = $eip $T0 4 + ^ = $ebp $T0 ^ = $esp $T0 8 + =\n")
			w.WriteString("STACK WIN 0 1000 ffffffffffffffff 0 0 ffffffffffffffff 0 0 0 0\n")
		}, want: []string{"app.exe|f|"}},
		{name: "stack-win-records", windows: true, body: func(w *bufio.Writer) {
			w.WriteString("FUNC 1000 100 0 f\n")
			for i := range many {
				fmt.Fprintf(w, "STACK WIN 4 %x 1 0 0 4 0 0 1 $eip $esp ^ = $esp $esp 4 + =\n", 0x1000+i)
			}
		}, want: []string{"app.exe|f|"}},
		{name: "long-names", body: func(w *bufio.Writer) {
			w.WriteString("FILE 0 ")
			long(w, 'b', 8<<20)
			w.WriteString("\nINLINE_ORIGIN 0 ")
			long(w, 'c', 8<<20)
			w.WriteString("\nFUNC 1000 100 0 ")
			long(w, 'a', 8<<20)
			w.WriteString("\nINLINE 0 5 0 0 1020 10\n1020 10 7 0\nPUBLIC 2000 0 ")
			long(w, 'p', 8<<20)
			w.WriteString("\n")
		}, maxOut: 64 << 20, want: []string{"app|cccc", "...[8323072 more bytes]|bbbb", "...[8323072 more bytes]|7|"}},
		{name: "long-cfi-rules", body: func(w *bufio.Writer) {
			w.WriteString("FUNC 1000 100 0 f\nSTACK CFI INIT 1000 100 .cfa: $rsp 8 + .ra: .cfa -8 + ^ $rbx: ")
			for range 1 << 20 {
				w.WriteString("$rsp ")
			}
			w.WriteString("\nSTACK CFI 1010 .cfa: ")
			long(w, '1', 4<<20)
			w.WriteString("\n")
		}, want: []string{"app|f|"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // as TestCorpus's
			dmp, file, id := symDump(t, c.windows)
			store := symStore(t, c.windows, file, id, c.body)
			run{name: "minidump_stackwalk -m " + c.name, prog: "minidump_stackwalk", args: []string{"-m", dmp, store},
				stdout: c.want, maxOut: c.maxOut, check: symbolized}.do(t)
			run{name: "minidump_stackwalk " + c.name, prog: "minidump_stackwalk", args: []string{dmp, store}, maxOut: c.maxOut}.do(t)
			run{name: "minidump_stackwalk --json " + c.name, prog: "minidump_stackwalk", args: []string{"--json", dmp, store}, maxOut: c.maxOut}.do(t)
		})
	}
}

var corruptSymbols = regexp.MustCompile(`(?m)^Module\|[^|]*\|[^|]*\|[^|]*\|[^|]*\|[^|]*\|[^|]*\|[^|]*\|1$`)

// symbolized checks that the -m output does not call the symbols corrupt.
func symbolized(t *testing.T, out string) {
	if m := corruptSymbols.FindString(out); m != "" {
		t.Logf("module marked corrupt: %s", m)
	}
}
