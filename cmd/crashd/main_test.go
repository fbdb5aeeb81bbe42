package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// child is a crashd serve running as a child process.
type child struct {
	cmd  *exec.Cmd
	url  string
	mu   sync.Mutex
	log  bytes.Buffer
	done chan struct{}
}

// startChild starts crashd serve on a loopback port and waits until it
// serves.
func startChild(t *testing.T, args ...string) *child {
	t.Helper()
	prog := cmdtest.Build(t, ".")
	c := &child{done: make(chan struct{})}
	c.cmd = exec.Command(prog, append([]string{"serve", "--listen", "127.0.0.1:0", "--log-format", "json"}, args...)...)
	// A killed crashd's crashes come back after the ack wait: a short one.
	c.cmd.Env = append(os.Environ(), "DEBUGINFOD_URLS=", "_NT_SYMBOL_PATH=", "CRASHD_ACK_WAIT=3s", "CRASHD_API_TOKEN="+testAPIToken)
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := c.cmd.Process.Pid
	t.Cleanup(func() {
		// Stop it by its pid if the test did not.
		if p, err := os.FindProcess(pid); err == nil {
			p.Signal(syscall.SIGKILL)
		}
		<-c.done
	})
	addr := make(chan string, 1)
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			c.mu.Lock()
			c.log.Write(sc.Bytes())
			c.log.WriteByte('\n')
			c.mu.Unlock()
			var l struct {
				Msg    string `json:"msg"`
				Listen string `json:"listen"`
			}
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "crashd serving" {
				addr <- l.Listen
			}
		}
		c.cmd.Wait()
	}()
	select {
	case a := <-addr:
		c.url = "http://" + a
	case <-c.done:
		t.Fatalf("crashd exited before serving:\n%s", c.logText())
	case <-time.After(60 * time.Second):
		t.Fatalf("crashd not serving after 60s:\n%s", c.logText())
	}
	return c
}

func (c *child) logText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.log.String()
}

// kill kills the child with SIGKILL (no chance to clean up) and waits.
func (c *child) kill() {
	c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
}

// terminate sends SIGTERM and returns the exit code.
func (c *child) terminate(t *testing.T) int {
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("crashd still running 60s after SIGTERM:\n%s", c.logText())
	}
	return c.cmd.ProcessState.ExitCode()
}

// testAPIToken is the children's api_token (a token with reprocess,
// which reads crashes); client sends it with every request.
const testAPIToken = "crashd-test-api-token"

var client = &http.Client{Timeout: 30 * time.Second, Transport: bearer{testAPIToken}}

// bearer adds "Authorization: Bearer TOKEN" to the requests it sends.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func upload(url string, dump []byte, product string) (string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("ProductName", product)
	mw.WriteField("Version", "1.0")
	fw, _ := mw.CreateFormFile("upload_file_minidump", "crash.dmp")
	fw.Write(dump)
	mw.Close()
	resp, err := client.Post(url+"/submit", mw.FormDataContentType(), &body)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	id, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "CrashID=bp-")
	if resp.StatusCode != 200 || !ok {
		return "", fmt.Errorf("%s: %q", resp.Status, b)
	}
	return id, nil
}

type apiCrash struct {
	Status   string          `json:"status"`
	JSONDump json.RawMessage `json:"json_dump"`
}

func getCrash(url, id string) (apiCrash, error) {
	var c apiCrash
	resp, err := client.Get(url + "/api/crashes/" + id)
	if err != nil {
		return c, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return c, fmt.Errorf("%s", resp.Status)
	}
	return c, json.NewDecoder(resp.Body).Decode(&c)
}

func waitProcessed(t *testing.T, url, id string, timeout time.Duration) apiCrash {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		c, err := getCrash(url, id)
		if err == nil && c.Status == "processed" {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not processed after %v: %+v %v", id, timeout, c, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func equalJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

// TestServe runs the built crashd: uploads, processing into the JSON
// minidump_stackwalk --json gives, the API, crashd reprocess, SIGTERM.
func TestServe(t *testing.T) {
	dir := corpus.Dir(t)
	syms := filepath.Join(dir, "breakpad/processor/symbols")
	dumps := []string{"linux_null_read_av.dmp", "ascii_read_av.dmp", "minidump2.dmp"}
	c := startChild(t, "--data", t.TempDir(), "--symbols", syms, "--workers", "2")
	walker := cmdtest.Build(t, "../minidump_stackwalk")
	var ids []string
	for _, d := range dumps {
		b, err := os.ReadFile(filepath.Join(dir, "breakpad/processor", d))
		if err != nil {
			t.Fatal(err)
		}
		id, err := upload(c.url, b, "Serve")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for i, d := range dumps {
		got := waitProcessed(t, c.url, ids[i], time.Minute)
		want := cmdtest.RunClean(t, walker, nil, "--json", filepath.Join(dir, "breakpad/processor", d), syms)
		if want.Code != 0 || !equalJSON(got.JSONDump, []byte(want.Stdout)) {
			t.Errorf("%s: json_dump is not minidump_stackwalk --json's report", d)
		}
	}
	if r := cmdtest.Run(t, cmdtest.Build(t, "."), "reprocess", "--server", c.url, "bp-"+ids[0]); r.Code != 1 || !strings.Contains(r.Stderr, "401") {
		t.Errorf("crashd reprocess without api_token: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	withToken := []string{"CRASHD_API_TOKEN=" + testAPIToken}
	r := cmdtest.RunClean(t, cmdtest.Build(t, "."), withToken, "reprocess", "--server", c.url, "bp-"+ids[0])
	if r.Code != 0 || !strings.Contains(r.Stdout, "queued "+ids[0]) {
		t.Errorf("crashd reprocess: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	if r := cmdtest.Run(t, cmdtest.Build(t, "."), "reprocess", "--server", c.url, "not-an-id"); r.Code != 2 {
		t.Errorf("crashd reprocess not-an-id: status %d %q", r.Code, r.Stderr)
	}
	unknown := "00000000-0000-4000-8000-000000261126"
	if r := cmdtest.RunClean(t, cmdtest.Build(t, "."), withToken, "reprocess", "--server", c.url, unknown); r.Code != 1 || !strings.Contains(r.Stderr, "404") {
		t.Errorf("crashd reprocess unknown id: status %d %q", r.Code, r.Stderr)
	}
	if code := c.terminate(t); code != 0 {
		t.Errorf("exit status %d after SIGTERM:\n%s", code, c.logText())
	}
	if !strings.Contains(c.logText(), `"crashd stopped"`) {
		t.Errorf("no graceful stop in the log:\n%s", c.logText())
	}
}

// TestCrashSafety kills crashd -9 at random points during a stream of
// uploads, in a bounded loop, restarting it on the same data directory:
// every crash that got a 200 must be processed after the last restart, and
// none may appear twice in the index.
func TestCrashSafety(t *testing.T) {
	dir := corpus.Dir(t)
	syms := filepath.Join(dir, "breakpad/processor/symbols")
	var dumps [][]byte
	for _, d := range []string{"linux_null_read_av.dmp", "ascii_read_av.dmp", "minidump2.dmp", "linux_raise_sigabrt.dmp"} {
		b, err := os.ReadFile(filepath.Join(dir, "breakpad/processor", d))
		if err != nil {
			t.Fatal(err)
		}
		dumps = append(dumps, b)
	}
	data := t.TempDir()
	rounds := 6
	if testing.Short() {
		rounds = 2
	}
	var mu sync.Mutex
	accepted := map[string]bool{}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 23))
	for round := range rounds {
		c := startChild(t, "--data", data, "--symbols", syms, "--workers", "2")
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					id, err := upload(c.url, dumps[(g+i)%len(dumps)], "Safety")
					if err != nil {
						continue // the server died under the upload: not accepted
					}
					mu.Lock()
					accepted[id] = true
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Duration(200+rng.IntN(1300)) * time.Millisecond)
		c.kill()
		close(stop)
		wg.Wait()
		mu.Lock()
		t.Logf("round %d: %d crashes accepted so far", round, len(accepted))
		mu.Unlock()
	}
	if len(accepted) == 0 {
		t.Fatal("no upload accepted")
	}
	c := startChild(t, "--data", data, "--symbols", syms, "--workers", "2")
	for id := range accepted {
		waitProcessed(t, c.url, id, 2*time.Minute)
	}
	// Every row once: page through the index.
	seen := map[string]int{}
	q := "product=Safety&limit=1000"
	for q != "" {
		resp, err := client.Get(c.url + "/api/crashes?" + q)
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Crashes []struct {
				ID     string `json:"crash_id"`
				Status string `json:"status"`
			} `json:"crashes"`
			Next string `json:"next"`
		}
		err = json.NewDecoder(resp.Body).Decode(&res)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Crashes {
			seen[r.ID]++
		}
		q = res.Next
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("%s: %d rows in the index", id, n)
		}
	}
	for id := range accepted {
		if seen[id] != 1 {
			t.Errorf("%s: accepted, %d rows in the index", id, seen[id])
		}
	}
	t.Logf("%d crashes accepted across %d kill -9s, all processed; %d in the index", len(accepted), rounds, len(seen))
	if code := c.terminate(t); code != 0 {
		t.Errorf("exit status %d after SIGTERM", code)
	}
}

func TestLocalAddr(t *testing.T) {
	for in, want := range map[string]string{":8000": "127.0.0.1:8000", "0.0.0.0:1": "127.0.0.1:1", "[::]:2": "127.0.0.1:2",
		"10.0.0.1:3": "10.0.0.1:3", "[::1]:4": "[::1]:4", "host:5": "host:5", "bad": "bad"} {
		if got := localAddr(in); got != want {
			t.Errorf("localAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestShutdownFinishesUploads: SIGTERM during an upload still being sent
// lets it finish (answered with its crash id); the crash is processed
// after the restart if not before; exit status 0.
func TestShutdownFinishesUploads(t *testing.T) {
	dir := corpus.Dir(t)
	syms := filepath.Join(dir, "breakpad/processor/symbols")
	dump, err := os.ReadFile(filepath.Join(dir, "breakpad/processor/linux_null_read_av.dmp"))
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	c := startChild(t, "--data", data, "--symbols", syms)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("ProductName", "Shutdown")
	fw, _ := mw.CreateFormFile("upload_file_minidump", "crash.dmp")
	fw.Write(dump)
	mw.Close()
	whole := body.Bytes()
	pr, pw := io.Pipe()
	type answer struct {
		code int
		body string
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest("POST", c.url+"/submit", pr)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.ContentLength = int64(len(whole))
		resp, err := client.Do(req)
		if err != nil {
			done <- answer{err: err}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- answer{code: resp.StatusCode, body: string(b)}
	}()
	pw.Write(whole[:len(whole)/2])
	time.Sleep(200 * time.Millisecond) // the server is reading the body
	c.cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(300 * time.Millisecond)
	pw.Write(whole[len(whole)/2:])
	pw.Close()
	t0 := time.Now()
	a := <-done
	t.Logf("answered %v after the rest of the body", time.Since(t0))
	id, ok := strings.CutPrefix(strings.TrimSpace(a.body), "CrashID=bp-")
	if a.err != nil || a.code != 200 || !ok {
		t.Fatalf("upload in flight at SIGTERM: %d %q %v\n%s", a.code, a.body, a.err, c.logText())
	}
	select {
	case <-c.done:
	case <-time.After(60 * time.Second):
		t.Fatal("crashd still running 60s after SIGTERM")
	}
	if code := c.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit status %d after SIGTERM:\n%s", code, c.logText())
	}
	t.Logf("exited %v after the rest of the body", time.Since(t0))
	c = startChild(t, "--data", data, "--symbols", syms)
	waitProcessed(t, c.url, id, time.Minute)
	t.Logf("processed %v after the rest of the body", time.Since(t0))
	c.terminate(t)
}
