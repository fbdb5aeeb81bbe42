package crashdtest

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// gzipBomb returns a gzip member of prefix followed by n zeros (n a
// multiple of 1 MiB) without compressing them all: deflate blocks of 1 MiB
// of zeros after the first need nothing but zeros before them, so one is
// repeated. 200 MiB make 204 KB, the bomb.
func gzipBomb(prefix []byte, n int) []byte {
	const mib = 1 << 20
	zeros := make([]byte, mib)
	var buf bytes.Buffer
	fw, _ := flate.NewWriter(&buf, flate.BestCompression)
	fw.Write(prefix)
	fw.Write(zeros)
	fw.Flush()
	first := bytes.Clone(buf.Bytes())
	buf.Reset()
	fw.Write(zeros)
	fw.Flush()
	rep := bytes.Clone(buf.Bytes())
	buf.Reset()
	fw.Close()
	last := buf.Bytes()
	out := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}
	out = append(out, first...)
	crc := crc32.Update(crc32.ChecksumIEEE(prefix), crc32.IEEETable, zeros)
	for range n/mib - 1 {
		out = append(out, rep...)
		crc = crc32.Update(crc, crc32.IEEETable, zeros)
	}
	out = append(out, last...)
	out = binary.LittleEndian.AppendUint32(out, crc)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(prefix)+n))
	return out
}

// vmHWM returns a process's peak resident set size in bytes (VmHWM of
// /proc/PID/status).
func vmHWM(tb testing.TB, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Skipf("no /proc: %v", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				tb.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	tb.Fatal("no VmHWM")
	return 0
}

// BenchmarkAttack runs a crashd serve on embedded defaults (all roles,
// embedded NATS, dir store, SQLite) and attacks it for
// $CRASHD_ATTACK_SECONDS (default 20) with 20 clients sending gzip bombs
// (204 KB inflating to 200 MiB) one after another and 200 connections
// declaring 25 MiB bodies and sending a byte every 2 s, while 4 clients
// upload real crashes (the Crashpad request of a corpus-free dump of this
// tree) and health checks are asked for. It reports the server's peak RSS
// (VmHWM), the real uploads accepted per second under attack, and the
// health checks that failed; docs/crashd.md records the figures. Run with
// -benchtime=1x (b.N is not used).
func BenchmarkAttack(b *testing.B) {
	secs := 20
	if s := os.Getenv("CRASHD_ATTACK_SECONDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 600 {
			b.Fatalf("CRASHD_ATTACK_SECONDS=%q: want 1-600", s)
		}
		secs = n
	}
	root := corpus.Root()
	dump, err := os.ReadFile(filepath.Join(root, "testdata/truth/cxx/dtor-x64-O2/crash.dmp"))
	if err != nil {
		b.Fatal(err)
	}
	bin := cmdtest.Build(b, CrashdPackage)
	c := Start(b, Options{Bin: bin, Symbols: []string{filepath.Join(root, "testdata/truth/cxx/dtor-x64-O2/symbols")}})
	base := vmHWM(b, c.Pid())

	cp := &Crashpad{URL: c.URL + "/submit", Annotations: map[string]string{"prod": "Attack", "ver": "1.0"}, Minidump: dump}
	head := (&Crashpad{URL: c.URL + "/submit", Annotations: map[string]string{"prod": "Bomb", "ver": "1.0"}, Boundary: "bomb"}).Body()
	open := head[:bytes.LastIndex(head, []byte("--bomb--"))]
	bomb := gzipBomb(append(open, "--bomb\r\nContent-Disposition: form-data; name=\"upload_file_minidump\"; filename=\"x.dmp\"\r\nContent-Type: application/octet-stream\r\n\r\n"...), 200<<20)

	ctx, cancel := context.WithTimeout(b.Context(), time.Duration(secs)*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var bombs, bombs413, bombsOther atomic.Int64
	client := &http.Client{Timeout: 5 * time.Minute}
	for range 20 {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "POST", c.URL+"/submit", bytes.NewReader(bomb))
				req.Header.Set("Content-Type", "multipart/form-data; boundary=bomb")
				req.Header.Set("Content-Encoding", "gzip")
				resp, err := client.Do(req)
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				bombs.Add(1)
				if resp.StatusCode == 413 {
					bombs413.Add(1)
				} else {
					bombsOther.Add(1)
				}
			}
		})
	}
	var slowOpen atomic.Int64
	for range 200 {
		wg.Go(func() {
			conn, err := net.Dial("tcp", c.Addr)
			if err != nil {
				return
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST /submit HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=slow\r\nContent-Length: %d\r\n\r\n--slow\r\n", 25<<20)
			slowOpen.Add(1)
			tick := time.NewTicker(2 * time.Second)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					if _, err := conn.Write([]byte{'x'}); err != nil {
						return
					}
				}
			}
		})
	}
	var ok, failed atomic.Int64
	start := time.Now()
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, err := cp.Request(ctx)
				if err != nil {
					b.Error(err)
					return
				}
				r, err := Do(req)
				if ctx.Err() != nil {
					return
				}
				if err == nil && r.Status == 200 {
					ok.Add(1)
				} else {
					failed.Add(1)
				}
			}
		})
	}
	var health, healthFailed atomic.Int64
	wg.Go(func() {
		hc := &http.Client{Timeout: 5 * time.Second}
		for ctx.Err() == nil {
			resp, err := hc.Get(c.URL + "/__heartbeat__")
			health.Add(1)
			if err != nil || resp.StatusCode != 200 {
				healthFailed.Add(1)
			}
			if resp != nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			time.Sleep(500 * time.Millisecond)
		}
	})
	wg.Wait()
	el := time.Since(start)
	peak := vmHWM(b, c.Pid())
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(float64(base)/(1<<20), "start-RSS-MiB")
	b.ReportMetric(float64(ok.Load())/el.Seconds(), "uploads/s")
	b.ReportMetric(float64(failed.Load()), "uploads-failed")
	b.ReportMetric(float64(bombs.Load()), "bombs")
	b.ReportMetric(float64(bombsOther.Load()), "bombs-not-413")
	b.ReportMetric(float64(slowOpen.Load()), "slow-bodies")
	b.ReportMetric(float64(health.Load()), "health-checks")
	b.ReportMetric(float64(healthFailed.Load()), "health-failed")
	if ok.Load() == 0 {
		b.Errorf("no real upload accepted under attack\n%s", tail(c.Log()))
	}
}
