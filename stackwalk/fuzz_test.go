package stackwalk_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/stackwalk/jsonout"
)

// FuzzProcess walks arbitrary bytes as a minidump and prints every report
// (human, with stack contents and with stack pointers, -m, -b, and the JSON
// of stackwalk/jsonout, which must be valid JSON): it must not panic, hang
// or allocate without bound.
func FuzzProcess(f *testing.F) {
	for _, b := range seedDumps(f) {
		f.Add(b)
	}
	// One small real dump when the shared corpus is present. (Larger seeds
	// make the engine spend its time minimizing rather than fuzzing.)
	if b, err := os.ReadFile(filepath.Join(corpus.Path(), "breakpad/processor/minidump2.dmp")); err == nil {
		f.Add(b)
	}
	// Signal frames found from the stack alone (i386 and arm64): the
	// trampolines' code is not in these dumps.
	for _, c := range []string{"x86-native-segv-nocode", "arm64-segv-nocode"} {
		b, err := os.ReadFile(filepath.Join("../testdata/signal", c, "crash.dmp"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// A Windows x64 exception raised in software, its record's copy on the
	// stack: the scan reads it (unwind/amd64's raisedByCall, winScan).
	b, err := os.ReadFile("../testdata/truth/wincxx/throw-x64-O0/crash.dmp")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := minidump.NewFileBytes(data)
		if err != nil {
			return
		}
		p, err := stackwalk.Process(d, stackwalk.Options{})
		if err != nil {
			return
		}
		if err := stackwalk.Print(io.Discard, p, stackwalk.PrintOptions{StackContents: true}); err != nil {
			t.Fatal(err)
		}
		if err := stackwalk.Print(io.Discard, p, stackwalk.PrintOptions{StackPointers: true}); err != nil {
			t.Fatal(err)
		}
		if err := stackwalk.PrintMachineReadable(io.Discard, p); err != nil {
			t.Fatal(err)
		}
		if err := stackwalk.PrintBrief(io.Discard, p); err != nil {
			t.Fatal(err)
		}
		var js bytes.Buffer
		if err := jsonout.WriteWith(&js, p, jsonout.Options{Pretty: true, Signature: "sig"}); err != nil {
			t.Fatal(err)
		}
		if !json.Valid(js.Bytes()) {
			t.Fatalf("invalid JSON: %.200q", js.Bytes())
		}
	})
}

// FuzzWalkWorkers: walking a fuzzed dump with 1 and with 3 workers gives
// the same report, what was cut included (issue 31). The least frame
// budget is lowered to 8 frames so that small dumps are cut; a seed has
// four threads sharing one stack of frame-pointer links.
func FuzzWalkWorkers(f *testing.F) {
	for _, b := range seedDumps(f) {
		f.Add(b)
	}
	f.Add(sharedStackDump(f))
	restore := stackwalk.SetMinFrameBudget(8)
	defer restore()
	report := func(t *testing.T, p *stackwalk.ProcessState) string {
		var b bytes.Buffer
		if err := stackwalk.PrintMachineReadable(&b, p); err != nil {
			t.Fatal(err)
		}
		for _, cs := range p.Threads {
			for _, fr := range cs.Frames {
				fmt.Fprintf(&b, "%x %x %d\n", fr.Context().Regs, fr.Context().Valid, fr.Trust)
			}
		}
		for _, e := range p.Problems {
			b.WriteString(e.Error() + "\n")
		}
		return b.String()
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := minidump.NewFileBytes(data)
		if err != nil {
			return
		}
		p, err := stackwalk.Process(d, stackwalk.Options{Workers: 1})
		if err != nil {
			return
		}
		one := report(t, p)
		p.Walk(stackwalk.Options{Workers: 3})
		if three := report(t, p); three != one {
			t.Fatalf("-j 3 differs from -j 1:\n%s\n---\n%s", three, one)
		}
	})
}

// sharedStackDump is four amd64 threads whose stacks are one region of 64
// frame-pointer links, the crashed thread last.
func sharedStackDump(tb testing.TB) []byte {
	const base = 0x7fff0000
	b := synth.New(arch.AMD64, minidump.PlatformLinux)
	st := synth.NewStack(base, 8)
	for i := range 64 {
		st.U64(base + uint64(i+1)*16) // saved rbp: the next link
		st.Ptr(0x401020 + uint64(i))  // return address
	}
	for i := range 4 {
		ctx := &amd64.Context{ContextFlags: amd64.ContextFull, Rip: 0x401000, Rsp: base, Rbp: base}
		b.AddThread(uint32(i+1), synth.AMD64(ctx), st)
		if i == 3 {
			b.SetException(uint32(i+1), 11, 0, synth.AMD64(ctx))
		}
	}
	b.AddELFModule("/bin/app", 0x400000, 0x10000, []byte("0123456789abcdef"))
	data, err := b.Bytes()
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// seedDumps builds one small dump per CPU with a stack that scans.
func seedDumps(tb testing.TB) [][]byte {
	var out [][]byte
	add := func(b *synth.Builder) {
		data, err := b.Bytes()
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, data)
	}
	{
		b := synth.New(arch.AMD64, minidump.PlatformLinux)
		st := synth.NewStack(0x7fff0000, 8)
		st.Ptr(0x401025)
		st.U64(0x7fff0000)
		ctx := &amd64.Context{ContextFlags: amd64.ContextFull, Rip: 0x401000, Rsp: 0x7fff0000, Rbp: 0x7fff0008}
		b.AddThread(1, synth.AMD64(ctx), st)
		b.AddELFModule("/bin/app", 0x400000, 0x10000, []byte("0123456789abcdef"))
		b.SetException(1, 11, 0, synth.AMD64(ctx))
		add(b)
	}
	{
		b := synth.New(arch.X86, minidump.PlatformWin32NT)
		st := synth.NewStack(0x120000, 4)
		st.Ptr(0x401025)
		st.U32(0x120000)
		ctx := &x86.Context{ContextFlags: x86.ContextFull, Eip: 0x401000, Esp: 0x120000, Ebp: 0x120004}
		b.AddThread(1, synth.X86(ctx), st)
		b.AddPDBModule(`c:\app.exe`, 0x400000, 0x10000, minidump.GUID{Data1: 1}, 1, "app.pdb")
		add(b)
	}
	{
		b := synth.New(arch.ARM64, minidump.PlatformLinux)
		st := synth.NewStack(0x7fff0000, 8)
		st.U64(0x7fff0010)
		st.Ptr(0x401025)
		ctx := &arm64.Context{ContextFlags: arm64.ContextFull}
		ctx.Iregs[arm64.RegPC], ctx.Iregs[arm64.RegSP], ctx.Iregs[arm64.RegFP] = 0x401000, 0x7fff0000, 0x7fff0000
		b.AddThread(1, synth.ARM64(ctx), st)
		b.AddELFModule("/bin/app", 0x400000, 0x10000, []byte("0123456789abcdef"))
		add(b)
	}
	return out
}
