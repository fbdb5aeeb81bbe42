package stackwalk_test

import (
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
)

// benchWalk measures a whole walk as the command does it: open the dump,
// load symbols, walk every thread and print the -m report.
func benchWalk(b *testing.B, dump string, syms ...string) {
	benchWalkWorkers(b, 1, dump, syms...)
}

func benchWalkWorkers(b *testing.B, workers int, dump string, syms ...string) {
	dir := corpus.Dir(b)
	dump = filepath.Join(dir, dump)
	for i := range syms {
		syms[i] = filepath.Join(dir, syms[i])
	}
	b.ReportAllocs()
	for b.Loop() {
		f, err := minidump.Open(dump)
		if err != nil {
			b.Fatal(err)
		}
		dirs := symbreakpad.NewDirs(syms...)
		p, err := stackwalk.Process(f, stackwalk.Options{Symbols: dirs, Workers: workers})
		if err != nil {
			b.Fatal(err)
		}
		if err := stackwalk.PrintMachineReadable(io.Discard, p); err != nil {
			b.Fatal(err)
		}
		dirs.Close()
		f.Close()
	}
}

// BenchmarkWalkBigSymbols is the perf case: a 65 MB symbol file.
func BenchmarkWalkBigSymbols(b *testing.B) {
	benchWalk(b, "generated/deep_chain-x64-O2/crash.dmp", "perf/big-symbols", "generated/syslib-symbols")
}

// BenchmarkWalkThreads walks a multi-threaded x86-64 dump with CFI.
func BenchmarkWalkThreads(b *testing.B) {
	benchWalk(b, "generated/threads-x64-O2/crash.dmp", "generated/threads-x64-O2/symbols", "generated/syslib-symbols")
}

// BenchmarkWalkThreadsParallel walks the same dump's threads two at a time.
func BenchmarkWalkThreadsParallel(b *testing.B) {
	benchWalkWorkers(b, 2, "generated/threads-x64-O2/crash.dmp", "generated/threads-x64-O2/symbols", "generated/syslib-symbols")
}

// BenchmarkWalkWindowsX86 walks a Windows x86 dump with STACK WIN records.
func BenchmarkWalkWindowsX86(b *testing.B) {
	benchWalk(b, "breakpad/processor/minidump2.dmp", "breakpad/processor/symbols")
}

// BenchmarkReadLinux reads a Linux dump into a ProcessState without walking
// it: the streams, modules, threads and the Linux extras (readExtras).
func BenchmarkReadLinux(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(corpus.Dir(b), "generated/threads-x64-O2/crash.dmp"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		f, err := minidump.NewFileBytes(data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := stackwalk.Read(f); err != nil {
			b.Fatal(err)
		}
	}
}
