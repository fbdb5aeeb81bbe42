package symserver

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// BenchmarkDownload: warm downloads of a corpus .sym over 127.0.0.1 from
// concurrent clients (b.SetParallelism), as minidump_stackwalk
// --symbols-url makes them (no gzip).
func BenchmarkDownload(b *testing.B) {
	sym := corpus.File(b, "generated/threads-x64-O2/symbols/threads/144AFBA2676A2231983B3DCC7FE8C9FE0/threads.sym")
	data, err := os.ReadFile(sym)
	if err != nil {
		b.Fatal(err)
	}
	_, hs, _ := start(b, true)
	ct, body := v1Body(b, data, nil)
	if st, out := do(b, "POST", hs.URL+"/symbols/upload", ct, body); st != 200 {
		b.Fatalf("upload: %d %s", st, out)
	}
	url := hs.URL + "/symbols/threads/144AFBA2676A2231983B3DCC7FE8C9FE0/threads.sym"
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	b.SetParallelism(8)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	t0 := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Get(url)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "req/s")
}

// BenchmarkUploadBig: a v1 upload of the corpus' 65 MB .sym, with and
// without the fast forms written at upload (-benchtime=1x: each iteration
// is one upload into a fresh store).
func BenchmarkUploadBig(b *testing.B) {
	sym := corpus.File(b, "perf/big-symbols/deep_chain/A34CC23410BCE5A3F062F9443D3440C00/deep_chain.sym")
	data, err := os.ReadFile(sym)
	if err != nil {
		b.Fatal(err)
	}
	ct, body := v1Body(b, data, nil)
	for _, fast := range []bool{false, true} {
		name := "plain"
		if fast {
			name = "fast-forms"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for range b.N {
				b.StopTimer()
				s, hs, _ := start(b, true)
				if fast {
					s.cfg.FastCache = filepath.Join(b.TempDir(), "cache")
				}
				b.StartTimer()
				if st, out := do(b, "POST", hs.URL+"/symbols/upload", ct, body); st != 200 {
					b.Fatalf("upload: %d %s", st, out)
				}
				b.StopTimer()
				hs.Close()
				b.StartTimer()
			}
		})
	}
}
