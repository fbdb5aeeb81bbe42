package stackwalk_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/symbols/symsrc"
)

// benchLatency is the time a benchmark's symbol server takes to answer
// each request: a server across a network, not on loopback.
const benchLatency = 50 * time.Millisecond

// slowStore serves the Breakpad stores roots over HTTP on a loopback port,
// each answer after benchLatency.
func slowStore(b *testing.B, roots ...string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(benchLatency)
		for _, root := range roots {
			p := filepath.Join(root, filepath.FromSlash(r.URL.Path))
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				http.ServeFile(w, r, p)
				return
			}
		}
		http.NotFound(w, r)
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

// benchRemote walks a dump as minidump_stackwalk --symbols-url does, with
// a cold cache each time, through a symbol server answering after
// benchLatency, without prefetching, with the default and with 32 at once
// (docs/symbols.md).
func benchRemote(b *testing.B, dump string, syms ...string) {
	dir := corpus.Dir(b)
	for i := range syms {
		syms[i] = filepath.Join(dir, syms[i])
	}
	url := slowStore(b, syms...)
	for _, prefetch := range []int{0, symsrc.DefaultPrefetch, 32} {
		b.Run(fmt.Sprintf("prefetch=%d", prefetch), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f, err := minidump.Open(filepath.Join(dir, dump))
				if err != nil {
					b.Fatal(err)
				}
				src, err := symsrc.Open(symsrc.Config{URLs: []string{url}, CacheDir: b.TempDir(), Prefetch: prefetch})
				if err != nil {
					b.Fatal(err)
				}
				p, err := stackwalk.Process(f, stackwalk.Options{Symbols: src, Workers: 2, Prefetch: src.Prefetch()})
				if err != nil {
					b.Fatal(err)
				}
				if err := stackwalk.PrintMachineReadable(io.Discard, p); err != nil {
					b.Fatal(err)
				}
				src.Close()
				f.Close()
			}
		})
	}
}

// BenchmarkRemoteLinux walks a Linux x86-64 dump whose walk reaches 5
// modules (Breakpad's linux_inline).
func BenchmarkRemoteLinux(b *testing.B) {
	benchRemote(b, "breakpad/processor/linux_inline.dmp", "breakpad/processor/symbols")
}

// BenchmarkRemoteCrashpad walks an iOS simulator (amd64) Crashpad dump of
// 354 modules whose walk reaches 11 (22 are referenced by the stacks).
func BenchmarkRemoteCrashpad(b *testing.B) {
	benchRemote(b, "breakpad/processor/minidump_crashpad_annotation.dmp", "breakpad/processor/symbols")
}
