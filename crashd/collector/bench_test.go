package collector

import (
	"bytes"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/internal/testkit/cputime"
)

// corpusDumps returns the corpus minidumps of 20 KB to 1 MB (the issue's
// benchmark sizes), skipping without the corpus.
func corpusDumps(b *testing.B) [][]byte {
	dir := corpus.Dir(b)
	var dumps [][]byte
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".dmp") {
			return nil
		}
		if st, err := d.Info(); err != nil || st.Size() < 20<<10 || st.Size() > 1<<20 {
			return nil
		}
		data, err := os.ReadFile(p)
		if err == nil && bytes.HasPrefix(data, []byte("MDMP")) {
			dumps = append(dumps, data)
		}
		return nil
	})
	if len(dumps) == 0 {
		b.Skip("no corpus dumps of 20 KB-1 MB")
	}
	return dumps
}

// BenchmarkSubmit measures accepted uploads per second through a real
// server on 127.0.0.1 with 100 concurrent clients, each upload a corpus
// dump in a Breakpad form, stored durably (blob.Dir, fsync) or in memory.
func BenchmarkSubmit(b *testing.B) {
	dumps := corpusDumps(b)
	type upload struct {
		body []byte
		ct   string
	}
	var ups []upload
	var total int
	for _, d := range dumps {
		body, ct := form(map[string]any{"ProductName": "Bench", "Version": "1.0", "upload_file_minidump": fileVal{"crash.dmp", d}})
		ups = append(ups, upload{body, ct})
		total += len(body)
	}
	for _, kind := range []string{"Dir", "Mem"} {
		b.Run(kind, func(b *testing.B) {
			var store blob.Store = blob.NewMem()
			if kind == "Dir" {
				d, err := blob.OpenDir(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				defer d.Close()
				store = d
			}
			e := newEnv(b, Config{}, store)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 100, MaxConnsPerHost: 100}}
			defer client.CloseIdleConnections()
			b.SetBytes(int64(total / len(ups)))
			b.SetParallelism((100 + 1) / 2) // × GOMAXPROCS: about 100 clients on this 2-core machine
			var n atomic.Int64
			start, cpu0 := time.Now(), cputime.Used()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					u := ups[int(n.Add(1))%len(ups)]
					req, _ := http.NewRequest("POST", e.srv.URL+"/submit", bytes.NewReader(u.body))
					req.Header.Set("Content-Type", u.ct)
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 || !bytes.HasPrefix(body, []byte("CrashID=bp-")) {
						b.Errorf("%d %q", resp.StatusCode, body)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "uploads/s")
			// CPU of the process (clients and server) per upload: what a
			// loaded machine's wall time hides.
			b.ReportMetric((cputime.Used()-cpu0).Seconds()*1000/float64(b.N), "cpu-ms/upload")
		})
	}
}
