//go:build unix

package walk

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/internal/testkit/cputime"
	"github.com/gobreakpad/gobreakpad/stackwalk/batch"
	"github.com/gobreakpad/gobreakpad/stackwalk/signature"
	"github.com/gobreakpad/gobreakpad/symbols/symsrc"
)

// benchGroup is the corpus dumps that share one list of symbol paths,
// with the source of those paths (kept open: warm symbols).
type benchGroup struct {
	src   *symsrc.Sources
	dumps []batch.Dump
	ids   []crash.ID
}

// benchSetup reads the corpus's cases.tsv: every dump with its symbol
// paths, one symbol source per list of paths, the raw crash and the dump
// stored in a Mem store as the collector stores them.
func benchSetup(b *testing.B) ([]*benchGroup, blob.Store, int) {
	b.Helper()
	b.Setenv("DEBUGINFOD_URLS", "")
	b.Setenv("_NT_SYMBOL_PATH", "")
	dir := corpus.Dir(b)
	f, err := os.Open(filepath.Join(dir, "cases.tsv"))
	if err != nil {
		b.Skipf("corpus cases.tsv: %v", err)
	}
	defer f.Close()
	ctx := context.Background()
	store := blob.NewMem()
	groups := map[string]*benchGroup{}
	var order []*benchGroup
	cache := b.TempDir()
	seen := map[string]bool{}
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), "\t")
		if len(fs) < 4 || seen[fs[1]] {
			continue
		}
		seen[fs[1]] = true
		path := filepath.Join(dir, fs[1])
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		g := groups[fs[3]]
		if g == nil {
			var paths []string
			for _, s := range strings.Fields(fs[3]) {
				paths = append(paths, filepath.Join(dir, s))
			}
			src, err := symsrc.Open(symsrc.Config{Paths: paths, CacheDir: cache})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { src.Close() })
			g = &benchGroup{src: src}
			groups[fs[3]] = g
			order = append(order, g)
		}
		id := crash.New(time.Unix(1764115200, 0), 0)
		raw, _ := json.Marshal(crash.RawCrash{UUID: id, Annotations: map[string]any{"ProductName": "Bench", "Version": "1.0"}})
		store.Put(ctx, crash.RawCrashKey(id), raw)
		store.Put(ctx, crash.DumpNamesKey(id), []byte(`["upload_file_minidump"]`))
		store.Put(ctx, crash.DumpKey(id, crash.MinidumpField), data)
		g.dumps = append(g.dumps, batch.Dump{Key: fs[1], Path: path})
		g.ids = append(g.ids, id)
		n++
	}
	if n == 0 {
		b.Skip("no dumps in the corpus's cases.tsv")
	}
	return order, store, n
}

// BenchmarkProcessCorpus walks every corpus dump (cases.tsv, each with its
// symbol paths) with warm symbols, one dump after another in this one
// process, two ways: "crashdiff" is crashdiff's work per dump
// (stackwalk/batch: open, walk, signature), "processed" the crash server
// processor's (Walker.Process: raw crash and dump read from a Mem store,
// walk, signature, json_dump; Marshal). One op is the whole corpus. Besides
// ns/op it reports CPU time per dump (user + system of the process, GC
// included; steadier than wall time on a shared machine), dumps per
// CPU-second (one core's throughput) and allocations per dump.
// docs/performance.md records the figures.
func BenchmarkProcessCorpus(b *testing.B) {
	groups, store, n := benchSetup(b)
	ctx := context.Background()
	gen := signature.Default()
	crashdiff := func() {
		for _, g := range groups {
			_, err := batch.Walk(ctx, g.dumps, batch.Options{Symbols: g.src, Signatures: gen, Workers: 1}, func(w batch.Walked) string {
				return w.Signature.Signature
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	processed := func() {
		for _, g := range groups {
			w := Walker{Symbols: g.src, Signature: gen}
			for _, id := range g.ids {
				pc, _, err := w.Process(ctx, store, id, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Marshal(pc); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	// Warm: every module's symbols loaded once.
	processed()
	crashdiff()
	for _, c := range []struct {
		name string
		run  func()
	}{{"crashdiff", crashdiff}, {"processed", processed}} {
		b.Run(c.name, func(b *testing.B) {
			runtime.GC()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			cpu0 := cputime.Used()
			for b.Loop() {
				c.run()
			}
			cpu := cputime.Used() - cpu0
			runtime.ReadMemStats(&m1)
			dumps := float64(n * b.N)
			b.ReportMetric(cpu.Seconds()*1000/dumps, "cpu-ms/dump")
			b.ReportMetric(dumps/cpu.Seconds(), "dumps/cpu-s")
			b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/dumps, "allocs/dump")
			b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/dumps, "B/dump")
		})
	}
}
