package dumptext_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/dumptext"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
)

// FuzzWrite runs the whole printer on arbitrary bytes, in both memory
// formats: it must not panic.
func FuzzWrite(f *testing.F) {
	b := synth.New(arch.X86, minidump.PlatformWin32NT)
	ctx := synth.X86(&x86.Context{ContextFlags: x86.ContextFull})
	b.AddThread(1, ctx, synth.NewStack(0x1000, 4))
	b.AddPDBModule("a.exe", 0x400000, 0x1000, minidump.GUID{Data1: 1}, 1, "a.pdb")
	b.SetException(1, 0xc0000005, 0, ctx)
	b.SetMiscInfo(minidump.MiscInfo{SizeOfInfo: minidump.MiscInfo5Size, Flags1: 0x3ff})
	b.AddStream(minidump.LinuxEnviron, []byte("A=1\x00B"))
	if data, err := b.Bytes(); err == nil {
		f.Add(data)
	}
	if data, err := os.ReadFile(filepath.Join(corpus.Path(), "breakpad/processor/minidump2.dmp")); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := minidump.NewFileBytes(data)
		if err != nil {
			return
		}
		for _, hexdump := range []bool{false, true} {
			dumptext.Write(io.Discard, file, dumptext.Options{Hexdump: hexdump})
		}
	})
}

func BenchmarkWrite(b *testing.B) {
	p := corpus.File(b, "breakpad/processor/minidump2.dmp")
	f, err := minidump.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.ReportAllocs()
	for b.Loop() {
		dumptext.Write(io.Discard, f, dumptext.Options{})
	}
}
