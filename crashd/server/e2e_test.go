package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

func TestMain(m *testing.M) { cmdtest.Main(m, stopS3) }

// corpusCase is one line of the corpus' cases.tsv.
type corpusCase struct {
	name, dump string
	symbols    []string // absolute
}

// corpusCaseNamed returns the corpus case called name, skipping the test
// when the corpus has none.
func corpusCaseNamed(t testing.TB, name string) corpusCase {
	t.Helper()
	var c corpusCase
	for _, k := range corpusCases(t) {
		if k.name == name {
			c = k
		}
	}
	if c.name == "" {
		t.Skip("corpus case " + name + " not found")
	}
	return c
}

func corpusCases(t testing.TB) []corpusCase {
	dir := corpus.Dir(t)
	f, err := os.Open(filepath.Join(dir, "cases.tsv"))
	if err != nil {
		t.Skipf("corpus cases.tsv: %v", err)
	}
	defer f.Close()
	var out []corpusCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), "\t")
		if len(fs) < 4 {
			continue
		}
		c := corpusCase{name: fs[0], dump: filepath.Join(dir, fs[1])}
		for _, s := range strings.Fields(fs[3]) {
			c.symbols = append(c.symbols, filepath.Join(dir, s))
		}
		out = append(out, c)
	}
	return out
}

// testServer is a crashd started in this process on a loopback port.
type testServer struct {
	URL  string
	srv  *Server
	stop func()
}

func startServer(t testing.TB, cfg Config) *testServer {
	t.Helper()
	ctx := context.Background()
	s, err := New(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Serve(sctx, ln) }()
	ts := &testServer{URL: "http://" + ln.Addr().String(), srv: s}
	ts.stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}
	return ts
}

func testConfig(t testing.TB, symbols []string) Config {
	cfg := Default()
	cfg.Data = t.TempDir()
	cfg.DB = testDB(t)
	cfg.Symbols = symbols
	cfg.Workers = 2
	cfg.ShutdownTimeout = Duration(20 * time.Second)
	cfg.APIToken = testAPIToken
	return cfg
}

// testAPIToken is testConfig's api_token: a token with reprocess, which
// reads crashes (getCrash sends it).
const testAPIToken = "server-test-api-token"

// upload posts a dump as a plain multipart/form-data upload (as Breakpad's
// minidump_upload sends it) and returns the crash id.
func upload(t testing.TB, url, dumpPath string, fields map[string]string) (crash.ID, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile(crash.MinidumpField, filepath.Base(dumpPath))
	b, err := os.ReadFile(dumpPath)
	if err != nil {
		return "", err
	}
	fw.Write(b)
	mw.Close()
	resp, err := http.Post(url+"/submit", mw.FormDataContentType(), &body)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	s, ok := strings.CutPrefix(string(out), "CrashID=")
	if resp.StatusCode != 200 || !ok {
		return "", fmt.Errorf("upload: %s: %q", resp.Status, out)
	}
	return crash.Parse(s)
}

// apiCrash is the part of GET /api/crashes/{id} the tests read.
type apiCrash struct {
	Status    string          `json:"status"`
	Signature string          `json:"signature"`
	Product   string          `json:"product"`
	Version   string          `json:"version"`
	JSONDump  json.RawMessage `json:"json_dump"`
	Notes     []string        `json:"notes"`
}

func getCrash(url string, id crash.ID) (apiCrash, int, error) {
	var c apiCrash
	req, err := http.NewRequest(http.MethodGet, url+"/api/crashes/"+string(id), nil)
	if err != nil {
		return c, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+testAPIToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return c, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return c, resp.StatusCode, nil
	}
	return c, 200, json.NewDecoder(resp.Body).Decode(&c)
}

// waitProcessed polls the API until the crash is processed.
func waitProcessed(t testing.TB, url string, id crash.ID, timeout time.Duration) apiCrash {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		c, code, err := getCrash(url, id)
		if err == nil && code == 200 && c.Status == "processed" {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not processed after %v: %+v %d %v", id, timeout, c, code, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stackwalkJSON is minidump_stackwalk --json's report of a dump.
// nil when it refuses the dump.
func stackwalkJSON(t testing.TB, dump string, symbols []string) []byte {
	prog := cmdtest.Build(t, "../../cmd/minidump_stackwalk")
	r := cmdtest.RunClean(t, prog, nil, append([]string{"--json", dump}, symbols...)...)
	if r.Code != 0 {
		return nil
	}
	return []byte(r.Stdout)
}

// stackwalkJSONSignature is minidump_stackwalk --json --signature's
// report of a dump, less its "signature" key, and that key ("" when
// absent). A nil report when it refuses the dump.
func stackwalkJSONSignature(t testing.TB, dump string, symbols []string) ([]byte, string) {
	prog := cmdtest.Build(t, "../../cmd/minidump_stackwalk")
	r := cmdtest.RunClean(t, prog, nil, append([]string{"--json", "--signature", dump}, symbols...)...)
	if r.Code != 0 {
		return nil, ""
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Errorf("%s: minidump_stackwalk --json --signature: %v", dump, err)
		return nil, ""
	}
	var sig string
	if raw, ok := doc["signature"]; ok {
		if err := json.Unmarshal(raw, &sig); err != nil {
			t.Errorf("%s: minidump_stackwalk --json --signature: signature %s: %v", dump, raw, err)
		}
		delete(doc, "signature")
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Errorf("%s: %v", dump, err)
	}
	return b, sig
}

// sameJSON compares two JSON texts as values and returns the first
// difference ("" when equal).
func sameJSON(a, b []byte) string {
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		return "first: " + err.Error()
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		return "second: " + err.Error()
	}
	return diff("", va, vb)
}

func diff(path string, a, b any) string {
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok {
			return path + ": object vs not"
		}
		for k, v := range a {
			w, ok := bm[k]
			if !ok {
				return path + "." + k + ": missing in the second"
			}
			if d := diff(path+"."+k, v, w); d != "" {
				return d
			}
		}
		for k := range bm {
			if _, ok := a[k]; !ok {
				return path + "." + k + ": missing in the first"
			}
		}
		return ""
	case []any:
		bs, ok := b.([]any)
		if !ok || len(a) != len(bs) {
			return fmt.Sprintf("%s: arrays of different lengths or kinds", path)
		}
		for i := range a {
			if d := diff(fmt.Sprintf("%s[%d]", path, i), a[i], bs[i]); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(a, b) {
		return fmt.Sprintf("%s: %v vs %v", path, a, b)
	}
	return ""
}

// TestEndToEnd uploads every corpus dump to a crashd (one per set of
// symbol paths: the cases' symbols differ) with a plain multipart POST,
// waits for it to be processed, and checks that the processed crash's
// json_dump is minidump_stackwalk --json's report of the dump with the same
// symbols, and its signature minidump_stackwalk --signature's. Nothing is
// normalised: the two are the same walk by the same library calls, so
// every field must agree. -short takes one case per symbol set of the
// first five sets.
func TestEndToEnd(t *testing.T) {
	// As cmdtest.RunClean runs minidump_stackwalk.
	t.Setenv("DEBUGINFOD_URLS", "")
	t.Setenv("_NT_SYMBOL_PATH", "")
	cases := corpusCases(t)
	groups := map[string][]corpusCase{}
	var order []string
	for _, c := range cases {
		k := strings.Join(c.symbols, "\x00")
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], c)
	}
	if testing.Short() {
		order = order[:min(5, len(order))]
	}
	// One symbols cache for the servers one after the other: each would
	// otherwise make the fast forms of the symbol files its cases share
	// (generated/syslib-symbols: 16 MB, 1.7 s of CPU under -race) anew.
	// An entry answers only for the .sym of its size and modification
	// time (symbols/symsrc); cmd/minidump_stackwalk
	// TestSymbolsCacheFastPath pins the walks with and without it equal.
	symCache := t.TempDir()
	for _, k := range order {
		cs := groups[k]
		if testing.Short() {
			cs = cs[:1]
		}
		cfg := testConfig(t, cs[0].symbols)
		cfg.SymbolsCache = symCache
		ts := startServer(t, cfg)
		ids := map[string]crash.ID{}
		for _, c := range cs {
			id, err := upload(t, ts.URL, c.dump, map[string]string{"ProductName": "Corpus", "Version": c.name})
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			ids[c.name] = id
		}
		// minidump_stackwalk's answers, two at a time while the server
		// processes (the test's longest part under -race): one run each,
		// --json --signature, whose "signature" key is the signature
		// --signature prints (the same value of the same walk:
		// cmd/minidump_stackwalk TestSignature).
		type reference struct {
			json      []byte
			signature string
		}
		refs := make([]reference, len(cs))
		var wg sync.WaitGroup
		slots := make(chan struct{}, 2)
		for i, c := range cs {
			wg.Go(func() {
				slots <- struct{}{}
				defer func() { <-slots }()
				refs[i].json, refs[i].signature = stackwalkJSONSignature(t, c.dump, c.symbols)
			})
		}
		wg.Wait()
		for i, c := range cs {
			got := waitProcessed(t, ts.URL, ids[c.name], 2*time.Minute)
			if got.Product != "Corpus" || got.Version != c.name {
				t.Errorf("%s: product %q version %q", c.name, got.Product, got.Version)
			}
			want := refs[i].json
			if want == nil {
				// minidump_stackwalk refuses it; the processed crash says why.
				if string(got.JSONDump) != "null" || len(got.Notes) == 0 {
					t.Errorf("%s: minidump_stackwalk refuses the dump, the processor gave json_dump %.100s, notes %q", c.name, got.JSONDump, got.Notes)
				}
				continue
			}
			if d := sameJSON(got.JSONDump, want); d != "" {
				t.Errorf("%s: json_dump differs from minidump_stackwalk --json: %s", c.name, d)
			}
			// The uploads carry no annotations the signature rules read, so
			// the signature is minidump_stackwalk --signature's.
			if refs[i].signature != got.Signature {
				t.Errorf("%s: signature %q, minidump_stackwalk --signature %q", c.name, got.Signature, refs[i].signature)
			}
		}
		ts.stop()
	}
}
