//go:build linux

package symfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	dsbreakpad "github.com/gobreakpad/gobreakpad/dumpsyms/breakpad"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/formats"
)

// converted returns the generated 200 MiB .sym written in the named format
// (docs/symbfile.md's table), converting it on first use into the temporary
// directory beside it.
func converted(b *testing.B, name string) string {
	src, _ := generated(b)
	if name == "breakpad" {
		return src
	}
	f, err := formats.ByName(name)
	if err != nil {
		b.Fatal(err)
	}
	out := strings.TrimSuffix(src, ".sym") + f.Exts[0]
	if _, err := os.Stat(out); err == nil {
		return out
	}
	model, err := dsbreakpad.ReadFile(src, nil)
	if err != nil {
		b.Fatal(err)
	}
	w, err := os.Create(out + ".tmp")
	if err != nil {
		b.Fatal(err)
	}
	if err := f.Write(w, model, formats.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(out+".tmp", out); err != nil {
		b.Fatal(err)
	}
	return out
}

func minorFaults() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Minflt
}

// BenchmarkFormatLookup200MB compares lookups (with inline chains) at random
// addresses of the generated 200 MiB symbol set in each lookup format, as
// minidump_stackwalk makes them (symbols.Lookuper). Besides ns/op it
// reports file-MB, the file's size; open-ms, the time to open it for
// lookups; and touched-KB/lookup, the memory pages first touched per
// lookup over the first 10,000 lookups after opening (minor page faults ×
// 4 KiB: the mapped file's pages and the heap a lookup needs), which is what
// a walk of a few dozen frames pays. For mapped files it undercounts on
// kernels that map a page-cached file's whole large folio on a fault
// (docs/symbfile.md).
func BenchmarkFormatLookup200MB(b *testing.B) {
	_, info := generated(b)
	addrs := randomAddrs(info, 1<<20)
	for _, name := range []string{"breakpad", "symcache", "symbfile", "gsym"} {
		b.Run(name, func(b *testing.B) {
			p := converted(b, name)
			f, err := formats.ByName(name)
			if err != nil {
				b.Fatal(err)
			}
			st, err := os.Stat(p)
			if err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			l, c, err := f.Open(p)
			if err != nil {
				b.Fatal(err)
			}
			openMS := float64(time.Since(t0).Microseconds()) / 1e3
			defer c.Close()
			const cold = 10000
			f0 := minorFaults()
			var found int
			for i := range cold {
				if _, ok := l.Lookup(addrs[(i*7919)&(len(addrs)-1)], true); ok {
					found++
				}
			}
			touched := float64(minorFaults()-f0) * 4 / cold
			if found < cold/2 {
				b.Fatalf("%s: only %d of %d lookups found something", filepath.Base(p), found, cold)
			}
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			var sink symbols.Symbol
			for b.Loop() {
				sink, _ = l.Lookup(addrs[i&(len(addrs)-1)], true)
				i++
			}
			_ = sink
			// After the loop: ResetTimer drops metrics reported before it.
			b.ReportMetric(float64(st.Size())/(1<<20), "file-MB")
			b.ReportMetric(openMS, "open-ms")
			b.ReportMetric(touched, "touched-KB/lookup")
		})
	}
}
