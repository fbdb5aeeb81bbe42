//go:build unix

// Command scale is tools/scale/run.sh's driver (docs/scale.md): it starts a
// 3-node nats-server cluster and a PostgreSQL instance in a temporary
// directory (crashd/scaletest), crashd processes in their roles (collectors,
// processors, a page server) on 127.0.0.1, all sharing the cluster (queue,
// replicated object store of blobs, leases) and PostgreSQL (index); sends a
// stream of corpus uploads from a load generator; during it kills -9 a
// processor while it walks, kills -9 one NATS node and restarts PostgreSQL;
// waits for the backlog to drain; checks that every accepted crash is
// processed exactly once in the index and that its blobs are readable
// (with -blobs s3 they are on a SeaweedFS server, also killed -9 and
// restarted during the stream); stops
// everything it started by pid; and prints as its last line
//
//	scale: sent N accepted N processed N lost 0 duplicates 0 ingest R/s processed R/s p50 Xs p99 Ys faults K
//
// It exits 1 when a crash was lost or duplicated, 2 on a setup failure.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/scaletest"
)

var (
	crashdBin  = flag.String("crashd", "", "the crashd `PROGRAM` to run")
	corpusDir  = flag.String("corpus", "", "the shared corpus `DIR`")
	crashes    = flag.Int("crashes", 600, "uploads to send")
	rate       = flag.Float64("rate", 40, "uploads per second to send")
	collectors = flag.Int("collectors", 2, "collector processes")
	processors = flag.Int("processors", 3, "processor processes")
	workers    = flag.Int("workers", 2, "workers per processor")
	faults     = flag.Bool("faults", true, "kill a processor, a NATS node and restart PostgreSQL during the stream")
	drainFor   = flag.Duration("drain", 5*time.Minute, "bound on waiting for the backlog after the stream")
	keep       = flag.Bool("keep", false, "keep the temporary directory")
	symUploads = flag.Int("symupload", -1, "symbol files to upload with sym_upload during the stream, each to a random process with the symbols role (the collectors get it too): -1 means every .sym file of the corpus's Breakpad symbols with -blobs s3, none otherwise")
	symUpload  = flag.String("sym-upload", "", "our sym_upload `PROGRAM`, used when Breakpad's is not built ($GOBREAKPAD_BREAKPAD_SYM_UPLOAD or "+breakpadSymUpload+")")
	blobsIn    = flag.String("blobs", "nats", "where the blobs go: nats (the cluster's object store) or s3 (a SeaweedFS server, built by tools/s3/build.sh; one more fault: it is killed -9 and restarted)")
)

func main() {
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
	}
	os.Exit(code)
}

// proc is a crashd process.
type proc struct {
	name string
	url  string
	args []string
	env  []string
	log  string
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	// cpu and rss of its past lives (a killed process's last reading).
	cpu    time.Duration
	maxRSS int64
}

func (p *proc) start() error {
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(*crashdBin, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = scaletest.ProcAttr()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(done) }()
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
	return waitHealthy(p.url, time.Minute)
}

func waitHealthy(url string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url + "/__lbheartbeat__")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s not healthy after %v", url, d)
}

// usage reads the process's CPU time and peak resident memory.
func (p *proc) usage() (time.Duration, int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cpu, rss := p.cpu, p.maxRSS
	if p.cmd == nil {
		return cpu, rss
	}
	pid := p.cmd.Process.Pid
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		if i := bytes.LastIndexByte(b, ')'); i > 0 {
			f := strings.Fields(string(b[i+2:]))
			if len(f) > 13 {
				ut, _ := strconv.ParseInt(f[11], 10, 64)
				st, _ := strconv.ParseInt(f[12], 10, 64)
				cpu += time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ 100
			}
		}
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for l := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				rss = max(rss, kb*1024)
			}
		}
	}
	return cpu, rss
}

// kill stops the process with sig and waits (SIGKILL after 30 s).
func (p *proc) kill(sig syscall.Signal) {
	cpu, rss := p.usage()
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
	p.mu.Lock()
	p.cmd, p.cpu, p.maxRSS = nil, cpu, rss
	p.mu.Unlock()
}

// apiToken is the crashd processes' api_token: a token with reprocess,
// which reads crashes.
const apiToken = "scale-driver-api-token"

// busy reads crashd_processor_busy_workers from the process's metrics.
func (p *proc) busy() int {
	n, _ := p.metric("crashd_processor_busy_workers ")
	return int(n)
}

// metric returns the sum of the process's metrics whose lines start with
// prefix (a name and its labels' start), and whether there was one.
func (p *proc) metric(prefix string) (float64, bool) {
	resp, err := http.Get(p.url + "/metrics")
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	sum, found := 0.0, false
	for l := range strings.Lines(string(b)) {
		if strings.HasPrefix(l, prefix) {
			f := strings.Fields(l)
			n, _ := strconv.ParseFloat(f[len(f)-1], 64)
			sum, found = sum+n, true
		}
	}
	return sum, found
}

// accepted is a crash the collector accepted; at is when its upload began
// (latencies are upload-to-processed).
type accepted struct {
	id  string
	seq int
	at  time.Time
}

func run(ctx context.Context) (int, error) {
	if *crashdBin == "" || *corpusDir == "" {
		return 2, fmt.Errorf("-crashd and -corpus are required")
	}
	dumps, err := loadDumps(filepath.Join(*corpusDir, "breakpad/processor"))
	if err != nil {
		return 2, err
	}
	syms := filepath.Join(*corpusDir, "breakpad/processor/symbols")
	tmp, err := os.MkdirTemp("", "crashd-scale-")
	if err != nil {
		return 2, err
	}
	// The temporary directory (every process's log) is kept with -keep,
	// and whenever a crash was lost or duplicated (failed is set then):
	// its path is printed with the ids in lost.txt.
	failed := false
	defer func() {
		if *keep || failed {
			fmt.Println("scale: kept", tmp, "(logs: *.log, nats/*.log; lost crashes: lost.txt)")
			return
		}
		os.RemoveAll(tmp)
	}()
	t0 := time.Now()
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cl, err := scaletest.StartNATS(sctx, filepath.Join(tmp, "nats"), 3)
	if err != nil {
		return 2, err
	}
	defer cl.Stop()
	pg, err := scaletest.StartPostgres(sctx, filepath.Join(tmp, "pg"))
	if err != nil {
		return 2, err
	}
	defer pg.Stop()
	fmt.Printf("scale: nats cluster %s, postgres %s (%.1fs)\n", cl.URL(), pg.URL, time.Since(t0).Seconds())
	// Blobs: the cluster's object store, or an S3-compatible server
	// (SeaweedFS) with the credentials in the processes' environment.
	blobEnv := []string{}
	var s3 *scaletest.S3Server
	switch *blobsIn {
	case "nats":
	case "s3":
		if !scaletest.S3Built() {
			return 2, fmt.Errorf("-blobs s3: %s", scaletest.S3Missing)
		}
		s3, err = scaletest.StartS3(sctx, filepath.Join(tmp, "s3"))
		if err != nil {
			return 2, err
		}
		defer s3.Stop()
		blobEnv = []string{"CRASHD_S3_ENDPOINT=" + s3.Endpoint, "CRASHD_S3_BUCKET=crashd-scale", "CRASHD_S3_PREFIX=scale",
			"AWS_ACCESS_KEY_ID=" + s3.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s3.SecretKey, "AWS_EC2_METADATA_DISABLED=true"}
		fmt.Printf("scale: s3 (%s) %s (%.1fs)\n", s3.Kind, s3.Endpoint, time.Since(t0).Seconds())
	default:
		return 2, fmt.Errorf("-blobs %q: nats or s3", *blobsIn)
	}

	// Symbol uploads during the stream: an upload token in a configuration
	// file every process reads, and the symbols role on the collectors
	// too, so that an upload goes to any of several processes.
	symFiles, err := symbolFiles(syms, *symUploads)
	if err != nil {
		return 2, err
	}
	conf := filepath.Join(tmp, "crashd.json")
	tok := sha256.Sum256([]byte(symToken))
	cb, _ := json.Marshal(map[string]any{"symbol_server": map[string]any{"tokens": []map[string]any{
		{"name": "scale", "sha256": hex.EncodeToString(tok[:]), "scopes": []string{"upload_symbols"}}}}})
	if err := os.WriteFile(conf, cb, 0o600); err != nil {
		return 2, err
	}
	collRoles := "collector"
	if len(symFiles) > 0 {
		collRoles = "collector,symbols"
	}

	var procs []*proc
	defer func() {
		for _, p := range procs {
			p.kill(syscall.SIGTERM)
		}
	}()
	mk := func(name, roles string) (*proc, error) {
		port, err := scaletest.FreePort()
		if err != nil {
			return nil, err
		}
		p := &proc{name: name, url: fmt.Sprintf("http://127.0.0.1:%d", port), log: filepath.Join(tmp, name+".log"),
			args: []string{"serve", "--config", conf, "--roles", roles, "--listen", fmt.Sprintf("127.0.0.1:%d", port),
				"--data", filepath.Join(tmp, name), "--nats", cl.URL(), "--db", pg.URL, "--blobs", *blobsIn,
				"--symbols", syms, "--workers", strconv.Itoa(*workers), "--log-format", "json"},
			env: append([]string{"CRASHD_ACK_WAIT=10s", "CRASHD_RETRY_DELAY=1s", "CRASHD_SWEEP_INTERVAL=15s", "CRASHD_RECOVER_DAYS=2", "CRASHD_MAX_ATTEMPTS=5",
				// The driver scrapes /metrics on loopback, and reads crashes
				// with the api_token (crashd shows none without a token).
				"CRASHD_OPEN_METRICS=true", "CRASHD_API_TOKEN=" + apiToken}, blobEnv...)}
		procs = append(procs, p)
		return p, p.start()
	}
	var colls, workersP []*proc
	for i := range *collectors {
		p, err := mk(fmt.Sprintf("collector%d", i+1), collRoles)
		if err != nil {
			return 2, err
		}
		colls = append(colls, p)
	}
	for i := range *processors {
		p, err := mk(fmt.Sprintf("processor%d", i+1), "processor")
		if err != nil {
			return 2, err
		}
		workersP = append(workersP, p)
	}
	web, err := mk("web", "web,symbols")
	if err != nil {
		return 2, err
	}
	fmt.Printf("scale: %d collectors, %d processors (%d workers each), 1 page server (%.1fs)\n", len(colls), len(workersP), *workers, time.Since(t0).Seconds())

	// The stream of uploads, with the faults at a quarter, a half and
	// three quarters of it.
	var (
		mu       sync.Mutex
		acc      []accepted
		sent     atomic.Int64
		nfaults  int
		faultLog []string
	)
	run := fmt.Sprintf("scale-%d", time.Now().UnixNano())
	faultAt := map[int]func(){}
	if *faults {
		faultAt[*crashes/4] = func() {
			// A processor killed while it walks.
			p := workersP[0]
			// Its metrics polled without pause until a worker is busy.
			busy := 0
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && busy == 0; {
				busy = p.busy()
			}
			p.kill(syscall.SIGKILL)
			faultLog = append(faultLog, fmt.Sprintf("kill -9 %s (%d workers busy)", p.name, busy))
			go func() {
				time.Sleep(5 * time.Second)
				if err := p.start(); err != nil {
					fmt.Fprintln(os.Stderr, "scale: restart", p.name, err)
				}
			}()
		}
		faultAt[*crashes/2] = func() {
			i := rand.IntN(len(cl.Nodes))
			cl.Kill(i)
			faultLog = append(faultLog, "kill -9 nats "+cl.Nodes[i].Name)
			go func() {
				time.Sleep(10 * time.Second)
				if err := cl.Restart(i); err != nil {
					fmt.Fprintln(os.Stderr, "scale: restart nats", err)
				}
			}()
		}
		if s3 != nil {
			faultAt[*crashes*5/8] = func() {
				// The object store killed -9 while blobs are written
				// and read; restarted 5 s later.
				s3.Kill()
				faultLog = append(faultLog, "kill -9 s3 ("+s3.Kind+")")
				go func() {
					time.Sleep(5 * time.Second)
					rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
					defer cancel()
					t := time.Now()
					if err := s3.Restart(rctx); err != nil {
						fmt.Fprintln(os.Stderr, "scale: restart s3", err)
						return
					}
					mu.Lock()
					faultLog = append(faultLog, fmt.Sprintf("s3 back (%.1fs after its restart)", time.Since(t).Seconds()))
					mu.Unlock()
				}()
			}
		}
		faultAt[*crashes*3/4] = func() {
			t := time.Now()
			if err := pg.Restart(ctx); err != nil {
				fmt.Fprintln(os.Stderr, "scale:", err)
				return
			}
			faultLog = append(faultLog, fmt.Sprintf("restart postgres (immediate, %.1fs)", time.Since(t).Seconds()))
		}
	}
	client := &http.Client{Timeout: 2 * time.Minute}
	start := time.Now()
	// The symbol files go up one by one, spread over the stream.
	symTargets := append(slices.Clone(colls), web)
	symDone := make(chan symResult, 1)
	go func() {
		symDone <- uploadSymbols(ctx, symFiles, symTargets, time.Duration(float64(*crashes) / *rate * float64(time.Second)))
	}()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	tick := time.NewTicker(time.Duration(float64(time.Second) / *rate))
	for i := range *crashes {
		if f := faultAt[i]; f != nil {
			go func() { f(); mu.Lock(); nfaults++; mu.Unlock() }()
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return 2, ctx.Err()
		}
		sem <- struct{}{}
		wg.Add(1)
		sent.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			t := time.Now()
			id, err := upload(client, colls, i, run, dumps[i%len(dumps)])
			if err != nil {
				fmt.Fprintf(os.Stderr, "scale: upload %d: %v\n", i, err)
				return
			}
			mu.Lock()
			acc = append(acc, accepted{id: id, seq: i, at: t})
			mu.Unlock()
		}()
	}
	tick.Stop()
	wg.Wait()
	ingestDur := time.Since(start)
	fmt.Printf("scale: %d sent, %d accepted in %.1fs\n", sent.Load(), len(acc), ingestDur.Seconds())
	symRes := <-symDone

	// Drain: every accepted crash processed in the index.
	db, err := sql.Open("pgx", pg.URL)
	if err != nil {
		return 2, err
	}
	defer db.Close()
	ids := make([]string, len(acc))
	for i, a := range acc {
		ids[i] = a.id
	}
	deadline := time.Now().Add(*drainFor)
	var processed int
	for {
		err := db.QueryRowContext(ctx, `SELECT count(*) FROM crashes WHERE status = 'processed' AND crash_id = ANY($1)`, ids).Scan(&processed)
		if err == nil && processed >= len(ids) {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			fmt.Fprintf(os.Stderr, "scale: drain: %d of %d processed after %v (%v)\n", processed, len(ids), *drainFor, err)
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	// Exactly once: one index row per accepted crash, and no crash in the
	// index that was not accepted (an upload stored twice).
	procAt := map[string]time.Time{}
	rows, err := db.QueryContext(ctx, `SELECT crash_id, processed_at, count(*) OVER (PARTITION BY crash_id) FROM crashes WHERE product = 'Scale' AND version = $1`, run)
	if err != nil {
		return 2, fmt.Errorf("check: %w", err)
	}
	duplicates := 0
	indexed := map[string]bool{}
	for rows.Next() {
		var id, at string
		var n int
		if err := rows.Scan(&id, &at, &n); err != nil {
			return 2, err
		}
		if n > 1 || indexed[id] {
			duplicates++
		}
		indexed[id] = true
		if t, err := time.Parse("2006-01-02T15:04:05.000000Z", at); err == nil {
			procAt[id] = t
		}
	}
	rows.Close()
	accSet := map[string]bool{}
	seqs := map[int]int{}
	for _, a := range acc {
		accSet[a.id] = true
		seqs[a.seq]++
	}
	for id := range indexed {
		if !accSet[id] {
			duplicates++ // stored though its client was not told so, or twice
		}
	}
	for _, n := range seqs {
		if n > 1 {
			duplicates += n - 1
		}
	}
	// Blobs readable: the dump and the processed crash in the object
	// store, and the processed crash through the page server's API.
	var st blob.Store
	if s3 != nil {
		st, err = blob.OpenS3(ctx, blob.S3Config{Endpoint: s3.Endpoint, Bucket: "crashd-scale", Prefix: "scale", AccessKeyID: s3.AccessKey, SecretAccessKey: s3.SecretKey})
	} else {
		st, err = openObjectStore(ctx, cl.URL())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale: check blobs:", err)
		st = nil // not a nil *S3 in the interface
	}
	unreadable := checkBlobs(ctx, st, web.url, acc)
	lost := 0
	var lat []float64
	var lastProc time.Time
	for _, a := range acc {
		t, ok := procAt[a.id]
		if !ok || unreadable[a.id] {
			lost++
			continue
		}
		lat = append(lat, t.Sub(a.at).Seconds())
		if t.After(lastProc) {
			lastProc = t
		}
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	for _, f := range faultLog {
		fmt.Println("scale: fault:", f)
	}
	var procCPU time.Duration
	for _, p := range procs {
		cpu, rss := p.usage()
		fmt.Printf("scale: %s cpu %.1fs peak rss %.0f MiB\n", p.name, cpu.Seconds(), float64(rss)/(1<<20))
		if strings.HasPrefix(p.name, "processor") {
			procCPU += cpu
		}
	}
	for _, nd := range cl.Nodes {
		if pid := nd.Pid(); pid > 0 {
			cpu, rss := (&proc{cmd: &exec.Cmd{Process: &os.Process{Pid: pid}}}).usage()
			fmt.Printf("scale: nats %s cpu %.1fs peak rss %.0f MiB\n", nd.Name, cpu.Seconds(), float64(rss)/(1<<20))
		}
	}
	nproc := len(lat)
	if nproc > 0 {
		fmt.Printf("scale: processor cpu per crash %.0f ms\n", procCPU.Seconds()*1000/float64(nproc))
	}
	if *blobsIn == "nats" && len(colls) > 0 {
		// The record of unqueued crashes: empty but for its flag once the
		// backlog is drained; what the sweeps did with it.
		n, _ := colls[0].metric("crashd_unqueued_crashes ")
		var swept []string
		for _, o := range []string{"published", "queued", "orphan"} {
			sum := 0.0
			for _, c := range colls {
				v, _ := c.metric(`crashd_sweep_unqueued_total{outcome="` + o + `"}`)
				sum += v
			}
			swept = append(swept, fmt.Sprintf("%s %.0f", o, sum))
		}
		fmt.Printf("scale: unqueued records at the end %.0f (the flag: 1); sweeps: %s\n", n, strings.Join(swept, ", "))
	}
	if len(symFiles) > 0 {
		fmt.Printf("scale: symbols uploaded %d of %d in %d tries, slowest %.1fs (%s; %s)\n", symRes.ok, len(symFiles), symRes.tries, symRes.oldest.Seconds(), symRes.client, strings.Join(symRes.where, " "))
	}
	procDur := lastProc.Sub(start)
	fmt.Printf("scale: sent %d accepted %d processed %d lost %d duplicates %d ingest %.1f/s processed %.1f/s p50 %.2fs p99 %.2fs faults %d\n",
		sent.Load(), len(acc), nproc, lost, duplicates, float64(len(acc))/ingestDur.Seconds(), float64(nproc)/max(procDur.Seconds(), 0.001),
		pct(0.50), pct(0.99), nfaults)
	if lost > 0 || duplicates > 0 || int64(len(acc)) != sent.Load() || symRes.ok != len(symFiles) {
		failed = true
		if err := reportLost(ctx, filepath.Join(tmp, "lost.txt"), tmp, db, st, cl.URL(), acc, procAt, unreadable, indexed, accSet); err != nil {
			fmt.Fprintln(os.Stderr, "scale: lost.txt:", err)
		}
		return 1, nil
	}
	return 0, nil
}

// upload posts one crash to a collector (round robin, the next one after a
// failure, as a load balancer would), up to 10 times, and returns its id.
func upload(client *http.Client, colls []*proc, seq int, run string, dump []byte) (string, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("ProductName", "Scale")
	mw.WriteField("Version", run)
	mw.WriteField("ScaleSeq", strconv.Itoa(seq))
	fw, _ := mw.CreateFormFile("upload_file_minidump", "crash.dmp")
	fw.Write(dump)
	mw.Close()
	var last error
	for try := range 10 {
		c := colls[(seq+try)%len(colls)]
		resp, err := client.Post(c.url+"/submit", mw.FormDataContentType(), bytes.NewReader(buf.Bytes()))
		if err != nil {
			last = err
			time.Sleep(time.Second)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if id, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "CrashID=bp-"); ok && resp.StatusCode == 200 {
			return id, nil
		}
		last = fmt.Errorf("%s: %d %q", c.name, resp.StatusCode, b)
		time.Sleep(time.Second)
	}
	return "", last
}

// openObjectStore opens the cluster's object store of blobs.
func openObjectStore(ctx context.Context, natsURL string) (blob.Store, error) {
	nc, err := nats.Connect(natsURL)
	if err != nil {
		return nil, err
	}
	js, _ := jetstream.New(nc)
	// The replication crashd gives it on a 3-node cluster: opening it
	// with another would change the bucket under the processes.
	return blob.OpenObjectStore(ctx, js, "crashd_blobs", 3)
}

// checkBlobs reads every accepted crash's dump and processed crash from
// the blob store st (nil: it could not be opened), and its processed crash
// from the page server's API; it returns the crashes one of them failed
// for.
func checkBlobs(ctx context.Context, st blob.Store, webURL string, acc []accepted) map[string]bool {
	bad := map[string]bool{}
	if st == nil {
		for _, a := range acc {
			bad[a.id] = true
		}
		return bad
	}
	for _, a := range acc {
		id := crash.ID(a.id)
		d, err1 := st.Get(ctx, crash.DumpKey(id, "upload_file_minidump"))
		pc, err2 := st.Get(ctx, crash.ProcessedCrashKey(id))
		var p struct {
			CrashID string `json:"crash_id"`
		}
		if err1 != nil || err2 != nil || len(d) == 0 || json.Unmarshal(pc, &p) != nil || p.CrashID != a.id {
			fmt.Fprintf(os.Stderr, "scale: %s: blobs: dump %d bytes (%v), processed crash %d bytes (%v)\n", a.id, len(d), err1, len(pc), err2)
			bad[a.id] = true
			continue
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, webURL+"/api/crashes/"+a.id, nil)
		if err != nil {
			bad[a.id] = true
			continue
		}
		req.Header.Set("Authorization", "Bearer "+apiToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			bad[a.id] = true
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"json_dump"`)) {
			fmt.Fprintf(os.Stderr, "scale: %s: page server: %d\n", a.id, resp.StatusCode)
			bad[a.id] = true
		}
	}
	return bad
}

// loadDumps reads the minidumps of 20 KB to 1.1 MB in dir.
func loadDumps(dir string) ([][]byte, error) {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.dmp"))
	var out [][]byte
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil || st.Size() < 20_000 || st.Size() > 1_100_000 {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no minidumps of 20 KB to 1.1 MB in %s (the shared corpus)", dir)
	}
	return out, nil
}

// breakpadSymUpload is where tools/breakpad/build-upload.sh builds
// Breakpad's sym_upload.
const breakpadSymUpload = "/tmp/bpsrc-upload/src/tools/linux/symupload/sym_upload"

// symToken is the symbol upload token's secret (its sha256 is in the
// processes' configuration).
const symToken = "scale-driver-symbols-token"

// symbolFiles returns n of the .sym files under dir (-1: all of them with
// -blobs s3, none otherwise).
func symbolFiles(dir string, n int) ([]string, error) {
	if n == 0 || n < 0 && *blobsIn != "s3" {
		return nil, nil
	}
	// One file per module (debug file and id): two versions of one module
	// would replace each other.
	var out []string
	seen := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".sym") && !seen[filepath.Dir(p)] {
			seen[filepath.Dir(p)] = true
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if n > 0 && n < len(out) {
		out = out[:n]
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no symbol files under %s", dir)
	}
	return out, nil
}

// symResult is what uploadSymbols did.
type symResult struct {
	ok     int
	tries  int           // sym_upload runs, retries included
	oldest time.Duration // the longest from a file's first try to its success
	client string        // whose sym_upload
	where  []string      // process and protocol of each upload that succeeded
}

// uploadSymbols sends each file with sym_upload (Breakpad's when it is
// built, else ours), protocols v1 and v2 in turn, to a random process of
// targets, spread over d; an upload failing (a fault under way) is tried
// again on another process, up to 6 times. It succeeded when sym_upload
// exits 0 and the process then serves the file in Breakpad's layout.
func uploadSymbols(ctx context.Context, files []string, targets []*proc, d time.Duration) symResult {
	bin, res := os.Getenv("GOBREAKPAD_BREAKPAD_SYM_UPLOAD"), symResult{client: "Breakpad's sym_upload"}
	if bin == "" {
		bin = breakpadSymUpload
	}
	if _, err := os.Stat(bin); err != nil {
		bin, res.client = *symUpload, "our cmd/sym_upload"
	}
	if len(files) == 0 {
		return res
	}
	if bin == "" {
		fmt.Fprintln(os.Stderr, "scale: symbols: no sym_upload (Breakpad's not built, -sym-upload not given)")
		return res
	}
	gap := d / time.Duration(len(files)+1)
	for i, f := range files {
		select {
		case <-ctx.Done():
			return res
		case <-time.After(gap):
		}
		v2 := i%2 == 1
		var last string
		first := time.Now()
		for try := range 6 {
			res.tries++
			p := targets[rand.IntN(len(targets))]
			var args []string
			if v2 {
				args = []string{"-p", "sym-upload-v2", "-k", symToken, f, p.url}
			} else {
				args = []string{f, p.url + "/symbols/upload?key=" + symToken}
			}
			cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			out, err := exec.CommandContext(cctx, bin, args...).CombinedOutput()
			cancel()
			if err == nil {
				err = symbolServed(p.url, f)
			}
			if err == nil {
				proto := "v1"
				if v2 {
					proto = "v2"
				}
				res.ok++
				res.oldest = max(res.oldest, time.Since(first))
				res.where = append(res.where, p.name+"/"+proto)
				break
			}
			last = fmt.Sprintf("try %d to %s: %v: %s", try+1, p.name, err, bytes.TrimSpace(out))
			time.Sleep(2 * time.Second)
		}
		if last != "" && len(res.where) < i+1 {
			fmt.Fprintf(os.Stderr, "scale: symbols: %s not uploaded (%s)\n", filepath.Base(f), last)
		}
	}
	return res
}

// symbolServed checks that the process at url serves the symbol file f
// (its MODULE line names the debug file and id) in Breakpad's layout,
// byte for byte.
func symbolServed(url, f string) error {
	b, err := os.ReadFile(f)
	if err != nil {
		return err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	fs := strings.Fields(string(line))
	if len(fs) < 5 || fs[0] != "MODULE" {
		return fmt.Errorf("%s: no MODULE line", f)
	}
	name := strings.Join(fs[4:], " ")
	sym := strings.TrimSuffix(name, ".pdb") + ".sym"
	resp, err := http.Get(url + "/symbols/" + name + "/" + fs[3] + "/" + sym)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("GET the uploaded symbols: %d", resp.StatusCode)
	}
	if !bytes.Equal(bytes.TrimRight(got, "\r\n"), bytes.TrimRight(b, "\r\n")) {
		return fmt.Errorf("GET the uploaded symbols: %d bytes, uploaded %d", len(got), len(b))
	}
	return nil
}
