package symfile_test

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symfile"
	"github.com/gobreakpad/gobreakpad/symfile/internal/symgen"
)

const (
	genSize = 200 << 20
	genSeed = 1
)

var (
	genOnce sync.Once
	genPath string
	genInfo symgen.Info
	genErr  error
)

// generated returns the path of the 200 MiB synthetic symbol file, writing it
// on first use into the temporary directory (it is kept there between runs,
// named by size and seed, since the content depends on nothing else).
func generated(b *testing.B) (string, symgen.Info) {
	genOnce.Do(func() {
		genPath = filepath.Join(os.TempDir(), fmt.Sprintf("gobreakpad-symgen-%d-%d.sym", genSize, genSeed))
		infoPath := genPath + ".info"
		if b, err := os.ReadFile(infoPath); err == nil {
			if _, err := fmt.Sscan(string(b), &genInfo.Funcs, &genInfo.FuncStart, &genInfo.FuncEnd); err == nil {
				if _, err := os.Stat(genPath); err == nil {
					return
				}
			}
		}
		f, err := os.Create(genPath + ".tmp")
		if err != nil {
			genErr = err
			return
		}
		w := bufio.NewWriter(f)
		genInfo, genErr = symgen.Write(w, genSize, genSeed)
		if genErr == nil {
			genErr = w.Flush()
		}
		if err := f.Close(); genErr == nil {
			genErr = err
		}
		if genErr == nil {
			genErr = os.Rename(genPath+".tmp", genPath)
		}
		if genErr == nil {
			genErr = os.WriteFile(infoPath, fmt.Appendf(nil, "%d %d %d\n", genInfo.Funcs, genInfo.FuncStart, genInfo.FuncEnd), 0o644)
		}
	})
	if genErr != nil {
		b.Fatal(genErr)
	}
	return genPath, genInfo
}

// benchOpen measures Open on path (with lookups, OpenLookups and one
// Lookup, the STACK records left unread). Besides the usual figures it
// reports peak-heap-MB, the largest live heap seen (sampled every 200 µs)
// while opening, above the heap in use before.
func benchOpen(b *testing.B, path string, lookups bool) {
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			select {
			case <-done:
				return
			case <-time.After(200 * time.Microsecond):
			}
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
		}
	}()
	b.ResetTimer()
	for b.Loop() {
		if lookups {
			t, err := symfile.OpenLookups(path)
			if err != nil {
				b.Fatal(err)
			}
			t.Lookup(0x1170)
			t.Close()
			continue
		}
		t, err := symfile.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if t.Corrupt() {
			b.Fatal(t.Errors()[0])
		}
		t.Close()
	}
	b.StopTimer()
	close(done)
	if p := peak.Load(); p > base {
		b.ReportMetric(float64(p-base)/(1<<20), "peak-heap-MB")
	}
}

// BenchmarkOpen200MB measures parse-and-index of the synthetic 200 MiB file;
// B/op (all bytes allocated) bounds the heap the index needs.
func BenchmarkOpen200MB(b *testing.B) {
	p, _ := generated(b)
	benchOpen(b, p, false)
}

// BenchmarkOpenBigSymbols measures parse-and-index of the corpus's 65 MB file.
func BenchmarkOpenBigSymbols(b *testing.B) {
	benchOpen(b, corpus.File(b, "perf/big-symbols/deep_chain/A34CC23410BCE5A3F062F9443D3440C00/deep_chain.sym"), false)
}

// BenchmarkOpenLookupsBigSymbols measures OpenLookups of the corpus's 65 MB
// file and one lookup: what symlookup does (its STACK records, most of the
// file, skipped).
func BenchmarkOpenLookupsBigSymbols(b *testing.B) {
	benchOpen(b, corpus.File(b, "perf/big-symbols/deep_chain/A34CC23410BCE5A3F062F9443D3440C00/deep_chain.sym"), true)
}

func openGenerated(b *testing.B) (*symfile.Table, symgen.Info) {
	p, info := generated(b)
	t, err := symfile.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { t.Close() })
	return t, info
}

// randomAddrs returns n addresses spread over the generated functions.
func randomAddrs(info symgen.Info, n int) []uint64 {
	r := rand.New(rand.NewPCG(7, 7))
	a := make([]uint64, n)
	for i := range a {
		a[i] = info.FuncStart + r.Uint64N(info.FuncEnd-info.FuncStart)
	}
	return a
}

// BenchmarkLookup200MB measures Lookup (function, line, inlines) at random
// addresses of the synthetic file, each function met for the first time.
func BenchmarkLookup200MB(b *testing.B) {
	t, info := openGenerated(b)
	addrs := randomAddrs(info, 1<<20)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		t.Lookup(addrs[i&(len(addrs)-1)])
		i++
	}
}

// BenchmarkCFIRules200MB measures CFIRules at random addresses.
func BenchmarkCFIRules200MB(b *testing.B) {
	t, info := openGenerated(b)
	addrs := randomAddrs(info, 1<<20)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		t.CFIRules(addrs[i&(len(addrs)-1)])
		i++
	}
}

// BenchmarkLookupHot200MB measures Lookup over a working set of 256
// addresses, as a stack walk meets them: the memory they touch stays cached.
func BenchmarkLookupHot200MB(b *testing.B) {
	t, info := openGenerated(b)
	addrs := randomAddrs(info, 256)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		t.Lookup(addrs[i&(len(addrs)-1)])
		i++
	}
}
