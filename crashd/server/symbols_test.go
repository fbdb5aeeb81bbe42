package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
)

// TestSymbolsArrived: a crash walked before its symbols were uploaded is
// listed by /api/missing-symbols, processed again by itself when they
// arrive through the symbol server, into the walk minidump_stackwalk
// --json gives with the local stores; then the module is no longer missing.
// Three crashes miss the module and reprocess_max is 2: the two newest are
// reprocessed, the oldest stays listed as missing it.
func TestSymbolsArrived(t *testing.T) {
	c := corpusCaseNamed(t, "gen-threads-x64-O2")
	secret, tok, err := auth.NewToken("ci", auth.ScopeUpload)
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, nil)
	cfg.SymbolServer.Tokens = []auth.Token{tok}
	cfg.SymbolServer.ReprocessMax = 2
	ts := startServer(t, cfg)
	defer ts.stop()

	var ids []crash.ID
	var before apiCrash
	for range 3 {
		id, err := upload(t, ts.URL, c.dump, map[string]string{"ProductName": "Threads", "Version": "1"})
		if err != nil {
			t.Fatal(err)
		}
		before = waitProcessed(t, ts.URL, id, time.Minute)
		ids = append(ids, id)
	}
	oldest, id := ids[0], ids[2]
	missing := getMissing(t, ts.URL)
	if !strings.Contains(missing, `"debug_file":"threads","debug_id":"144AFBA2676A2231983B3DCC7FE8C9FE0","code_file":"threads","code_id":"a2fb4a146a673122983b3dcc7fe8c9fe20c9c052","crashes":3,"latest_crash_id":"`+string(id)+`"`) {
		t.Fatalf("missing symbols before the upload: %s", missing)
	}

	// Upload the case's symbols: with Breakpad's own sym_upload (-p
	// sym-upload-v2 and v1 in turn) when it is built, else with a v1 form
	// (Auth-Token).
	bp := os.Getenv(cmdtest.BreakpadSymUpload.Env)
	if st, err := os.Stat(cmdtest.BreakpadSymUpload.Default); bp == "" && err == nil && st.Mode()&0o111 != 0 {
		bp = cmdtest.BreakpadSymUpload.Default
	}
	if bp == "" {
		t.Logf("Breakpad's sym_upload not built (%s): uploading with Go's multipart form", cmdtest.BreakpadSymUpload.Build)
	}
	n, nbp := 0, 0
	for _, st := range c.symbols {
		filepath.WalkDir(st, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".sym") {
				return nil
			}
			if bp != "" {
				args := []string{p, ts.URL + "/symbols/upload?key=" + secret}
				if n%2 == 0 {
					args = []string{"-p", "sym-upload-v2", "-k", secret, p, ts.URL}
				}
				r := cmdtest.RunClean(t, bp, []string{"http_proxy=", "HTTP_PROXY="}, args...)
				if r.Code != 0 || !strings.Contains(r.Stdout, "Successfully sent the symbol file.") {
					t.Fatalf("Breakpad's sym_upload %q: %d %q %q", args, r.Code, r.Stdout, r.Stderr)
				}
				n++
				nbp++
				return nil
			}
			symUploadV1(t, ts.URL, secret, p)
			n++
			return nil
		})
	}
	want := stackwalkJSON(t, c.dump, c.symbols)
	if sameJSON(before.JSONDump, want) == "" {
		t.Fatal("the walk without symbols is already the symbolized one")
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		got, code, err := getCrash(ts.URL, id)
		if err == nil && code == 200 && got.Status == "processed" && sameJSON(got.JSONDump, want) == "" {
			t.Logf("%d symbol files uploaded (%d by Breakpad's sym_upload); crash reprocessed into the symbolized walk (signature %q, was %q)", n, nbp, got.Signature, before.Signature)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not reprocessed into the symbolized walk: %s", sameJSON(got.JSONDump, want))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got, _, _ := getCrash(ts.URL, ids[1]); got.Status != "processed" || sameJSON(got.JSONDump, want) != "" {
		t.Errorf("the second newest crash was not reprocessed into the symbolized walk")
	}
	// The reprocesses the uploads queued changed the crashing thread's
	// stack: the report says so (issue 38), with the frames and
	// signature before the last change (one symbol file arrives at a
	// time: the module's own, then libc's, each a reprocess).
	rreq, _ := http.NewRequest("GET", ts.URL+"/api/report/"+string(id), nil)
	rreq.Header.Set("Authorization", "Bearer "+testAPIToken)
	var rep struct {
		Signature   string `json:"signature"`
		StackChange *struct {
			PreviousSignature string   `json:"previous_signature"`
			FirstSignature    string   `json:"first_signature"`
			Signature         string   `json:"signature"`
			PreviousFrames    []string `json:"previous_frames"`
			Frames            []string `json:"frames"`
		} `json:"stack_change"`
	}
	if resp, err := http.DefaultClient.Do(rreq); err != nil {
		t.Fatal(err)
	} else {
		err := json.NewDecoder(resp.Body).Decode(&rep)
		resp.Body.Close()
		if c := rep.StackChange; err != nil || c == nil || c.Signature != rep.Signature || c.FirstSignature != before.Signature || len(c.Frames) == 0 || slices.Equal(c.Frames, c.PreviousFrames) {
			t.Errorf("report after the symbols' reprocess: stack change %+v (%v), signature %q, was %q", c, err, rep.Signature, before.Signature)
		} else {
			t.Logf("stack changed: first %q, %q -> %q; frames %q -> %q", c.FirstSignature, c.PreviousSignature, c.Signature, c.PreviousFrames, c.Frames)
		}
	}
	// The oldest is beyond reprocess_max: still walked without symbols
	// once the queue is empty (had it been queued with the two newest, it
	// would have been walked by then; it was a 500 ms sleep).
	waitQueueEmpty(t, ts.srv)
	if got, _, _ := getCrash(ts.URL, oldest); sameJSON(got.JSONDump, want) == "" {
		t.Errorf("the oldest crash was reprocessed beyond reprocess_max")
	}
	if missing := getMissing(t, ts.URL); !strings.Contains(missing, `"debug_file":"threads","debug_id":"144AFBA2676A2231983B3DCC7FE8C9FE0","code_file":"threads","code_id":"a2fb4a146a673122983b3dcc7fe8c9fe20c9c052","crashes":1,"latest_crash_id":"`+string(oldest)+`"`) {
		t.Errorf("missing symbols after the upload: %s", missing)
	}

	// A new crash with the module, uploaded now: walked with its
	// symbols at once (the processor's symbol sources remember misses
	// for a while; the upload, and the reprocessing it queued, made them
	// forget).
	if nid, err := upload(t, ts.URL, c.dump, map[string]string{"ProductName": "Threads", "Version": "1"}); err != nil {
		t.Fatal(err)
	} else if got := waitProcessed(t, ts.URL, nid, time.Minute); sameJSON(got.JSONDump, want) != "" {
		t.Errorf("a crash uploaded after the symbols arrived was walked without them: %s", sameJSON(got.JSONDump, want))
	}

	// A changed re-upload of the module (same debug id: a rebuilt
	// binary's symbols renamed a function) is seen by the running
	// processor, which holds the old one open: reprocessed, the crash
	// gets the new name in its signature.
	var symThreads []byte
	for _, st := range c.symbols {
		if b, err := os.ReadFile(filepath.Join(st, "threads", "144AFBA2676A2231983B3DCC7FE8C9FE0", "threads.sym")); err == nil {
			symThreads = b
		}
	}
	changed := bytes.Replace(symThreads, []byte(" store_result\n"), []byte(" store_result_v2\n"), 1)
	if bytes.Equal(changed, symThreads) {
		t.Fatal("threads.sym has no FUNC store_result")
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("symbol_file", "threads.sym")
	fw.Write(changed)
	mw.Close()
	req, _ := http.NewRequest("POST", ts.URL+"/symbols/upload", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Auth-Token", secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Contains(string(out), "unchanged") {
		t.Fatalf("changed re-upload: %d %s", resp.StatusCode, out)
	}
	// The processor checks a loaded .sym about once a second: the crash is
	// reprocessed every 2 s until it has the new name (it was one
	// reprocessing after a fixed 1.1 s sleep).
	deadline = time.Now().Add(60 * time.Second)
	var posted time.Time
	for {
		got, _, _ := getCrash(ts.URL, id)
		if got.Signature == "store_result_v2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a changed re-upload and reprocessing: signature %q, want store_result_v2", got.Signature)
		}
		if time.Since(posted) > 2*time.Second {
			req, _ := http.NewRequest("POST", ts.URL+"/api/crashes/"+string(id)+"/reprocess", nil)
			req.Header.Set("Authorization", "Bearer "+testAPIToken)
			resp, err = http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 202 {
				t.Fatalf("reprocess: %d", resp.StatusCode)
			}
			posted = time.Now()
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// symUploadV1 uploads a .sym with a sym-upload-v1 form (Auth-Token).
func symUploadV1(t testing.TB, url, secret, p string) {
	t.Helper()
	data, _ := os.ReadFile(p)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("symbol_file", filepath.Base(p))
	fw.Write(data)
	mw.Close()
	req, _ := http.NewRequest("POST", url+"/symbols/upload", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Auth-Token", secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("upload %s: %d %s", p, resp.StatusCode, out)
	}
}

// waitQueueEmpty polls the server's queue until it has nothing waiting or
// in flight, failing after a minute.
func waitQueueEmpty(t *testing.T, s *Server) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		d, err := s.Queue().Depth(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n := d.InFlight
		for _, w := range d.Waiting {
			n += w
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queue is not empty after a minute: %+v", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func getMissing(t testing.TB, url string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/api/missing-symbols", nil)
	req.Header.Set("Authorization", "Bearer "+testAPIToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !json.Valid(b) {
		t.Fatalf("missing symbols: %d %s", resp.StatusCode, b)
	}
	return string(b)
}
