package minidump_test

import (
	"math/rand/v2"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
)

// BenchmarkReadMemory looks up 8-byte reads among 4096 saved ranges.
func BenchmarkReadMemory(b *testing.B) {
	w := minidump.NewWriter()
	page := make([]byte, 256)
	for i := range 4096 {
		w.AddMemory(uint64(i)*0x10000, page)
	}
	data, err := w.Bytes()
	if err != nil {
		b.Fatal(err)
	}
	f, err := minidump.NewFileBytes(data)
	if err != nil {
		b.Fatal(err)
	}
	m, err := f.Memory()
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	addrs := make([]uint64, 1024)
	for i := range addrs {
		addrs[i] = uint64(rng.IntN(4096))*0x10000 + uint64(rng.IntN(248))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := m.ReadMemory(addrs[i&1023], 8); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkOpenThreadsModules opens a real dump and decodes what a stack
// walk needs first: threads with contexts, modules with identities, memory.
func BenchmarkOpenThreadsModules(b *testing.B) {
	p := corpus.File(b, "breakpad/processor/minidump2.dmp")
	b.ReportAllocs()
	for b.Loop() {
		f, err := minidump.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.ThreadList(); err != nil {
			b.Fatal(err)
		}
		mods, err := f.ModuleList()
		if err != nil {
			b.Fatal(err)
		}
		for i := range mods {
			mods[i].DebugIdentifier()
		}
		if _, err := f.Memory(); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// BenchmarkDecodeContext decodes one amd64 and one x86 context.
func BenchmarkDecodeContext(b *testing.B) {
	a := (&amd64.Context{ContextFlags: amd64.ContextFull, Rip: 1}).Encode()
	x := (&x86.Context{ContextFlags: x86.ContextFull, Eip: 1}).Encode()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := minidump.DecodeContext(a, arch.AMD64); err != nil {
			b.Fatal(err)
		}
		if _, err := minidump.DecodeContext(x, arch.X86); err != nil {
			b.Fatal(err)
		}
	}
}
