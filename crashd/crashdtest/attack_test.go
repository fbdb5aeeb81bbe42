package crashdtest

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"mime/multipart"
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
	"github.com/gobreakpad/gobreakpad/internal/testkit/faults"
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

// bigSym returns a .sym of about size bytes (FUNC and line records, STACK
// CFI) whose MODULE line's identifier is 33 '0's at [idAt, idAt+33).
func bigSym(size int) (data []byte, idAt int) {
	var b bytes.Buffer
	b.WriteString("MODULE Linux x86_64 ")
	idAt = b.Len()
	b.WriteString(strings.Repeat("0", 33) + " libbig.so\nINFO CODE_ID 00\nFILE 0 big.c\n")
	for i := 0; b.Len() < size; i++ {
		a := 0x1000 + 0x40*i
		fmt.Fprintf(&b, "FUNC %x 40 0 big_function_%d\n%x 20 %d 0\n%x 20 %d 0\nSTACK CFI INIT %x 40 .cfa: $rsp 8 + .ra: .cfa -8 + ^\nSTACK CFI %x .cfa: $rsp 16 +\n",
			a, i, a, i+1, a+0x20, i+2, a, a+1)
	}
	return b.Bytes(), idAt
}

// symbolAttack runs a crashd serve (embedded defaults and config, its
// first-run admin token for the uploads) while symUploaders clients each
// send perClient symbol files of symSize bytes one after another
// (sym-upload-v1 forms, each module new, no retry) and uploaders clients
// send a real crash until they are done. It returns the server's peak
// RSS, the crash uploads accepted and failed, and the symbol uploads
// stored, refused 503 with Retry-After, and answered otherwise.
func symbolAttack(tb testing.TB, symUploaders, perClient, symSize, uploaders int, config string) (res attackResult, stored, busy, other int64) {
	root := corpus.Root()
	dump, err := os.ReadFile(filepath.Join(root, "testdata/truth/cxx/dtor-x64-O2/crash.dmp"))
	if err != nil {
		tb.Fatal(err)
	}
	bin := cmdtest.Build(tb, CrashdPackage)
	opt := Options{Bin: bin}
	if config != "" {
		p := filepath.Join(tb.TempDir(), "crashd.json")
		os.WriteFile(p, []byte(config), 0o600)
		opt.Args = []string{"--config", p}
	}
	c := Start(tb, opt)
	secret, err := os.ReadFile(c.DataPath("admin-token"))
	if err != nil {
		tb.Fatal(err)
	}
	key := strings.TrimSpace(string(secret))
	sym, idAt := bigSym(symSize)
	res.start = vmHWM(tb, c.Pid())

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var syms, crashes sync.WaitGroup
	var n, nStored, nBusy, nOther, ok, failed atomic.Int64
	client := &http.Client{Timeout: 5 * time.Minute}
	start := time.Now()
	for range symUploaders {
		syms.Go(func() {
			for range perClient {
				data := bytes.Clone(sym)
				copy(data[idAt:], fmt.Sprintf("%032X0", n.Add(1)))
				var body bytes.Buffer
				mw := multipart.NewWriter(&body)
				fw, _ := mw.CreateFormFile("symbol_file", "libbig.so.sym")
				fw.Write(data)
				mw.Close()
				req, _ := http.NewRequestWithContext(ctx, "POST", c.URL+"/symbols/upload", &body)
				req.Header.Set("Content-Type", mw.FormDataContentType())
				req.Header.Set("Auth-Token", key)
				resp, err := client.Do(req)
				if err != nil {
					tb.Errorf("symbol upload: %v", err)
					nOther.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch {
				case resp.StatusCode == 200:
					nStored.Add(1)
				case resp.StatusCode == 503 && resp.Header.Get("Retry-After") != "":
					nBusy.Add(1)
				default:
					tb.Logf("symbol upload: %s", resp.Status)
					nOther.Add(1)
				}
			}
		})
	}
	done := make(chan struct{})
	for range uploaders {
		crashes.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				cp := &Crashpad{URL: c.URL + "/submit", Annotations: map[string]string{"prod": "Attack", "ver": "1.0"}, Minidump: dump}
				req, err := cp.Request(ctx)
				if err != nil {
					tb.Error(err)
					return
				}
				if r, err := Do(req); err == nil && r.Status == 200 {
					ok.Add(1)
				} else {
					failed.Add(1)
				}
			}
		})
	}
	syms.Wait()
	close(done)
	crashes.Wait()
	res.elapsed = time.Since(start)
	res.peak = vmHWM(tb, c.Pid())
	res.uploads, res.uploadsFailed = ok.Load(), failed.Load()
	res.log = c.Log()
	// Nothing of the uploads stays in the spool once they are answered.
	if ents, _ := os.ReadDir(c.DataPath("symbols.incoming")); len(ents) != 0 {
		tb.Errorf("%d files left in symbols.incoming", len(ents))
	}
	return res, nStored.Load(), nBusy.Load(), nOther.Load()
}

// symbolAttackConfig is the attack's crashd configuration: a budget of
// 192 MiB, the symbol uploads' half 96 MiB (two 16 MB files' fast forms
// at once).
const symbolAttackConfig = `{"collector": {"max_inflight_bytes": 201326592}}`

// TestSymbolAttack (GOBREAKPAD_FAULT_TESTS: about a minute on the loaded
// 2-core machine): 12 clients each sending a 16 MB symbol file at once
// (each module's fast forms are written at upload, about its size in
// memory) beside 2 clients sending crashes: the symbol uploads take at
// most half of the budget (the rest are answered 503 with Retry-After),
// every crash is answered 200, nothing is left in the spool, and the
// server's peak RSS stays under 320 MiB (without the bound, budget 8 GiB:
// docs/crashd.md).
func TestSymbolAttack(t *testing.T) {
	faults.Long(t, "12 clients sending 16 MB symbol files to a crashd")
	r, stored, busy, other := symbolAttack(t, 12, 1, 16<<20, 2, symbolAttackConfig)
	if r.uploads == 0 || r.uploadsFailed != 0 {
		t.Errorf("%d crash uploads accepted, %d failed beside the symbol uploads\n%s", r.uploads, r.uploadsFailed, tail(r.log))
	}
	if stored == 0 || other != 0 {
		t.Errorf("symbol uploads: %d stored, %d busy, %d answered otherwise\n%s", stored, busy, other, tail(r.log))
	}
	if r.peak > 320<<20 {
		t.Errorf("peak RSS %d MiB", r.peak>>20)
	}
	t.Logf("peak RSS %d MiB (%d at start), symbol uploads %d stored, %d busy; %d crash uploads in %s", r.peak>>20, r.start>>20, stored, busy, r.uploads, r.elapsed.Round(time.Millisecond))
}

// BenchmarkSymbolAttack is TestSymbolAttack's run with
// $CRASHD_ATTACK_CONFIG as the configuration (default the test's; a
// budget of 8 GiB shows the memory without the bound); -benchtime=1x. It
// reports the peak RSS and the uploads.
func BenchmarkSymbolAttack(b *testing.B) {
	config := symbolAttackConfig
	if s, ok := os.LookupEnv("CRASHD_ATTACK_CONFIG"); ok {
		config = s
	}
	r, stored, busy, other := symbolAttack(b, 12, 1, 16<<20, 2, config)
	b.ReportMetric(float64(r.peak)/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(float64(r.start)/(1<<20), "start-RSS-MiB")
	b.ReportMetric(float64(r.uploads)/r.elapsed.Seconds(), "crash-uploads/s")
	b.ReportMetric(float64(r.uploadsFailed), "crash-uploads-failed")
	b.ReportMetric(float64(stored), "syms-stored")
	b.ReportMetric(float64(busy), "syms-busy")
	b.ReportMetric(float64(other), "syms-other")
}
