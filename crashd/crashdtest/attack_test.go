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

// attackResult is what an attack measured.
type attackResult struct {
	peak, start                    int64 // VmHWM after and before, bytes
	elapsed                        time.Duration
	uploads, uploadsFailed         int64
	bombs, bombsNot413, slowBodies int64
	health, healthFailed           int64
	log                            string
}

// attack runs a crashd serve on embedded defaults (all roles, embedded
// NATS, dir store, SQLite) and attacks it for d with bombers clients
// sending gzip bombs (204 KB inflating to 200 MiB) one after another and
// slow connections declaring 25 MiB bodies and sending a byte every 2 s,
// while uploaders clients upload a real crash (the Crashpad request of a
// dump of this tree) and a health check is asked for every 0.5 s. The
// server is stopped by its pid when the test ends.
func attack(tb testing.TB, d time.Duration, bombers, slow, uploaders int) attackResult {
	root := corpus.Root()
	dump, err := os.ReadFile(filepath.Join(root, "testdata/truth/cxx/dtor-x64-O2/crash.dmp"))
	if err != nil {
		tb.Fatal(err)
	}
	bin := cmdtest.Build(tb, CrashdPackage)
	c := Start(tb, Options{Bin: bin, Symbols: []string{filepath.Join(root, "testdata/truth/cxx/dtor-x64-O2/symbols")}})
	res := attackResult{start: vmHWM(tb, c.Pid())}

	head := (&Crashpad{URL: c.URL + "/submit", Annotations: map[string]string{"prod": "Bomb", "ver": "1.0"}, Boundary: "bomb"}).Body()
	open := head[:bytes.LastIndex(head, []byte("--bomb--"))]
	bomb := gzipBomb(append(open, "--bomb\r\nContent-Disposition: form-data; name=\"upload_file_minidump\"; filename=\"x.dmp\"\r\nContent-Type: application/octet-stream\r\n\r\n"...), 200<<20)

	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	var bombs, bombsOther, slowOpen, ok, failed, health, healthFailed atomic.Int64
	client := &http.Client{Timeout: 5 * time.Minute}
	for range bombers {
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
				if resp.StatusCode != 413 {
					bombsOther.Add(1)
				}
			}
		})
	}
	for range slow {
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
	start := time.Now()
	for range uploaders {
		wg.Go(func() {
			for ctx.Err() == nil {
				cp := &Crashpad{URL: c.URL + "/submit", Annotations: map[string]string{"prod": "Attack", "ver": "1.0"}, Minidump: dump} // a report of its own: Request fills in its id
				req, err := cp.Request(ctx)
				if err != nil {
					tb.Error(err)
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
	res.elapsed = time.Since(start)
	res.peak = vmHWM(tb, c.Pid())
	res.uploads, res.uploadsFailed = ok.Load(), failed.Load()
	res.bombs, res.bombsNot413, res.slowBodies = bombs.Load(), bombsOther.Load(), slowOpen.Load()
	res.health, res.healthFailed = health.Load(), healthFailed.Load()
	res.log = c.Log()
	return res
}

// TestAttack is a short attack (3 s; 5 bombers, 50 slow bodies, 2
// uploaders): every bomb answered 413, real uploads and every health check
// answered, and the server's peak RSS under the goal of 512 MiB.
func TestAttack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs crashd")
	}
	r := attack(t, 3*time.Second, 5, 50, 2)
	if r.bombsNot413 != 0 || r.bombs == 0 {
		t.Errorf("%d bombs, %d not answered 413", r.bombs, r.bombsNot413)
	}
	if r.uploads == 0 || r.uploadsFailed != 0 {
		t.Errorf("%d uploads accepted, %d failed under attack\n%s", r.uploads, r.uploadsFailed, tail(r.log))
	}
	if r.healthFailed != 0 {
		t.Errorf("%d of %d health checks failed", r.healthFailed, r.health)
	}
	if r.peak > 512<<20 {
		t.Errorf("peak RSS %d MiB", r.peak>>20)
	}
	t.Logf("peak RSS %d MiB (%d at start), %d bombs, %d slow bodies, %d uploads, %d health checks", r.peak>>20, r.start>>20, r.bombs, r.slowBodies, r.uploads, r.health)
}

// BenchmarkAttack is the attack for $CRASHD_ATTACK_SECONDS
// (default 20): 20 bombers, 200 slow bodies, 4 uploaders (see attack). It
// reports the server's peak RSS (VmHWM), the real uploads accepted per
// second under attack, and the health checks that failed; docs/crashd.md
// records the figures. Run with -benchtime=1x (b.N is not used).
func BenchmarkAttack(b *testing.B) {
	secs := 20
	if s := os.Getenv("CRASHD_ATTACK_SECONDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 600 {
			b.Fatalf("CRASHD_ATTACK_SECONDS=%q: want 1-600", s)
		}
		secs = n
	}
	r := attack(b, time.Duration(secs)*time.Second, 20, 200, 4)
	b.ReportMetric(float64(r.peak)/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(float64(r.start)/(1<<20), "start-RSS-MiB")
	b.ReportMetric(float64(r.uploads)/r.elapsed.Seconds(), "uploads/s")
	b.ReportMetric(float64(r.uploadsFailed), "uploads-failed")
	b.ReportMetric(float64(r.bombs), "bombs")
	b.ReportMetric(float64(r.bombsNot413), "bombs-not-413")
	b.ReportMetric(float64(r.slowBodies), "slow-bodies")
	b.ReportMetric(float64(r.health), "health-checks")
	b.ReportMetric(float64(r.healthFailed), "health-failed")
	if r.uploads == 0 {
		b.Errorf("no real upload accepted under attack\n%s", tail(r.log))
	}
}
