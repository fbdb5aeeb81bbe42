//go:build unix

package server

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/internal/testkit/cputime"
)

// benchDumps are the corpus dumps of 20 KB to 1 MB that Breakpad's
// processor test symbols cover, with those symbols.
func benchDumps(b *testing.B) ([][]byte, []string) {
	var dumps [][]byte
	var syms []string
	seen := map[string]bool{}
	for _, c := range corpusCases(b) {
		if !strings.Contains(c.dump, "breakpad/processor/") || len(c.symbols) != 1 || !strings.HasSuffix(c.symbols[0], "breakpad/processor/symbols") || seen[c.dump] {
			continue
		}
		st, err := os.Stat(c.dump)
		if err != nil || st.Size() < 20_000 || st.Size() > 1_100_000 {
			continue
		}
		data, err := os.ReadFile(c.dump)
		if err != nil {
			b.Fatal(err)
		}
		seen[c.dump] = true
		dumps = append(dumps, data)
		syms = c.symbols
	}
	if len(dumps) == 0 {
		b.Skip("no corpus dumps of 20 KB to 1 MB")
	}
	return dumps, syms
}

// uploadMany posts n uploads from clients concurrent clients and returns
// the time it took; every upload must be accepted.
func uploadMany(b *testing.B, url string, dumps [][]byte, n, clients int) time.Duration {
	bodies := make([][]byte, len(dumps))
	ctype := make([]string, len(dumps))
	for i, d := range dumps {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		mw.WriteField("ProductName", "Bench")
		mw.WriteField("Version", "1.0")
		fw, _ := mw.CreateFormFile("upload_file_minidump", "crash.dmp")
		fw.Write(d)
		mw.Close()
		bodies[i], ctype[i] = buf.Bytes(), mw.FormDataContentType()
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}, Timeout: time.Minute}
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				resp, err := hc.Post(url+"/submit", ctype[i%len(dumps)], bytes.NewReader(bodies[i%len(dumps)]))
				if err != nil {
					failed.Add(1)
					continue
				}
				var out bytes.Buffer
				out.ReadFrom(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || !strings.HasPrefix(out.String(), "CrashID=") {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d of %d uploads failed", f, n)
	}
	return el
}

// waitCount waits until the index holds want processed crashes and
// returns when that happened. It asks every 25 ms: each Counts scans the
// table, and polling every 5 ms (until 2026-11-26) cost ~0.15 ms of the
// CPU per processed crash the benchmark reports.
func waitCount(b *testing.B, ix index.Index, want int64) time.Time {
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		n, err := ix.Counts(context.Background())
		if err == nil && n[index.Processed] >= want {
			return time.Now()
		}
		time.Sleep(25 * time.Millisecond)
	}
	b.Fatalf("fewer than %d crashes processed after 10 minutes", want)
	return time.Time{}
}

// BenchmarkCrashd measures crashd in this process on loopback (run it
// with -benchtime=1x; b.N is not used): uploads/s accepted from 100
// concurrent clients with the collector alone, crashes processed/s with
// warm symbols (the backlog those uploads left), and, with both running,
// uploads/s and the p50/p99 time from upload to processed crash.
// docs/crashd.md records the figures.
func BenchmarkCrashd(b *testing.B) {
	b.Setenv("DEBUGINFOD_URLS", "")
	b.Setenv("_NT_SYMBOL_PATH", "")
	dumps, syms := benchDumps(b)
	const n, clients = 2000, 100
	data := b.TempDir()
	cfg := testConfig(b, syms)
	cfg.Data = data
	cfg.Workers = 0 // the default

	// 1. The collector alone.
	c1 := cfg
	c1.Roles = []string{RoleCollector, RoleWeb}
	ts := startServer(b, c1)
	cpu0 := cputime.Used()
	el := uploadMany(b, ts.URL, dumps, n, clients)
	b.ReportMetric((cputime.Used()-cpu0).Seconds()*1000/n, "cpu-ms/upload")
	ts.stop()
	b.ReportMetric(float64(n)/el.Seconds(), "uploads/s")

	// 2. The processor on that backlog, symbols warmed on a first crash.
	ts = startServer(b, cfg)
	waitCount(b, ts.srv.Index(), 1)
	stopProfile := profilePhase(b, "CRASHD_BENCH_CPUPROFILE")
	start, cpu0, gc0 := time.Now(), cputime.Used(), gcCPU()
	w0, sw0 := writes()
	gs, _ := ts.srv.Index().(interface{ GroupCommits() (int64, int64) })
	var c0, o0 int64
	if gs != nil {
		c0, o0 = gs.GroupCommits()
	}
	end := waitCount(b, ts.srv.Index(), n)
	stopProfile()
	if gs != nil {
		if c1, o1 := gs.GroupCommits(); c1 > c0 {
			b.ReportMetric(float64(o1-o0)/float64(c1-c0), "crashes/commit")
		}
	}
	b.ReportMetric(float64(n-1)/end.Sub(start).Seconds(), "processed/s")
	b.ReportMetric((cputime.Used()-cpu0).Seconds()*1000/(n-1), "cpu-ms/processed")
	b.ReportMetric((gcCPU()-gc0)*1000/(n-1), "gc-cpu-ms/processed")
	b.ReportMetric(heapMiB("/gc/heap/live:bytes"), "heap-live-MiB")
	b.ReportMetric(heapMiB("/gc/heap/goal:bytes"), "heap-goal-MiB")
	if w1, sw1 := writes(); w1 > 0 {
		b.ReportMetric(float64(w1-w0)/1024/(n-1), "write-KiB/processed")
		b.ReportMetric(float64(sw1-sw0)/(n-1), "write-calls/processed")
	}

	// 3. Both: uploads while the workers walk; latency upload -> processed.
	t0 := time.Now()
	el = uploadMany(b, ts.URL, dumps, n, clients)
	b.ReportMetric(float64(n)/el.Seconds(), "mixed-uploads/s")
	waitCount(b, ts.srv.Index(), 2*n)
	p50, p99 := latencies(b, ts.srv.Index(), t0)
	b.ReportMetric(p50, "burst-p50-ms")
	b.ReportMetric(p99, "burst-p99-ms")

	// 4. A steady stream the server keeps up with: 100 uploads/s for 10 s.
	t0 = time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	var wg sync.WaitGroup
	for i := range 1000 {
		<-tick.C
		wg.Add(1)
		go func() {
			defer wg.Done()
			uploadMany(b, ts.URL, dumps[i%len(dumps):i%len(dumps)+1], 1, 1)
		}()
	}
	tick.Stop()
	wg.Wait()
	waitCount(b, ts.srv.Index(), 2*n+1000)
	p50, p99 = latencies(b, ts.srv.Index(), t0)
	b.ReportMetric(p50, "steady-p50-ms")
	b.ReportMetric(p99, "steady-p99-ms")
	ts.stop()
}

// latencies returns the p50 and p99 of upload -> processed (the index's
// processed_at - received_at) in milliseconds, over the crashes received
// since t0.
func latencies(b *testing.B, ix index.Index, t0 time.Time) (p50, p99 float64) {
	var lat []float64
	q := index.Query{Since: t0, Limit: index.MaxLimit}
	for {
		cs, err := ix.Search(context.Background(), q)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range cs {
			lat = append(lat, c.ProcessedAt.Sub(c.ReceivedAt).Seconds()*1000)
		}
		if len(cs) < q.Limit {
			break
		}
		q.Before = cs[len(cs)-1].ReceivedAt
	}
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)*99/100]
}

// profilePhase starts a CPU profile into the file the environment
// variable env names, when it is set, and returns what stops it: a profile
// of the processing phase alone, where -test.cpuprofile covers the uploads
// too. (Do not pass -test.cpuprofile with it: one profile at a time.)
func profilePhase(b *testing.B, env string) func() {
	name := os.Getenv(env)
	if name == "" {
		return func() {}
	}
	f, err := os.Create(name)
	if err != nil {
		b.Fatalf("%s: %v", env, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		b.Fatalf("%s: %v", env, err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Errorf("%s: %v", env, err)
		}
	}
}

// gcCPU is the runtime's estimate of the CPU seconds the garbage
// collector used so far (runtime/metrics).
func gcCPU() float64 {
	m := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(m)
	if m[0].Value.Kind() != metrics.KindFloat64 {
		return 0
	}
	return m[0].Value.Float64()
}

// writes returns the bytes this process passed to write(2), pwrite(2)
// and the like so far, and the number of such calls (Linux's
// /proc/self/io wchar and syscw; 0, 0 elsewhere): counted exactly, where
// CPU time is noisy on a shared machine.
func writes() (bytes, calls int64) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch k {
		case "wchar":
			bytes = n
		case "syscw":
			calls = n
		}
	}
	return bytes, calls
}

// heapMiB reads a runtime/metrics byte count in MiB (0 if unknown).
func heapMiB(name string) float64 {
	m := []metrics.Sample{{Name: name}}
	metrics.Read(m)
	if m[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return float64(m[0].Value.Uint64()) / (1 << 20)
}
