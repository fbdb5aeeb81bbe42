//go:build unix

package server

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/scaletest"
	"github.com/gobreakpad/gobreakpad/crashd/symblob"
	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/faults"
	"github.com/gobreakpad/gobreakpad/symbols"
)

// TestSymbolsOnS3: two crashd processes with data directories of their
// own sharing a 3-node nats-server cluster, an S3 server (blobs s3) and the index: a
// collector, page and symbol server (A) and a processor (B). A crash
// walked by B without its module's symbols is reprocessed into the
// symbolized walk after the symbols are uploaded to A (the symbols event
// through the queue; the .sym fetched by B from S3 into its local copy); a
// crash uploaded afterwards is symbolized at once; the symbols are on S3
// under symbols/ in Breakpad's layout; B's symbol directory holds copies
// only, A's download answers from S3 what B has not.
func TestSymbolsOnS3(t *testing.T) {
	// 100 s on the loaded 2-core machine: an S3 server, three NATS
	// nodes, two crashds, 15 symbol files.
	faults.Long(t, "symbols on S3 across two processes")
	if scaletest.NATSServer() == "" {
		t.Skip("nats-server is not installed (apt-get install nats-server)")
	}
	c := corpusCaseNamed(t, "gen-threads-x64-O2")
	srv := startS3(t)
	bucket := s3Bucket("crashd-syms")
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := scaletest.StartNATS(ctx, t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	secret, tok, err := auth.NewToken("ci", auth.ScopeUpload)
	if err != nil {
		t.Fatal(err)
	}

	a := testConfig(t, nil)
	a.Roles = []string{RoleCollector, RoleWeb, RoleSymbols}
	a.SymbolServer.Tokens = []auth.Token{tok}
	a.NATSURL, a.Blobs, a.S3Endpoint, a.S3Bucket, a.S3Prefix = cl.URL(), "s3", srv.Endpoint, bucket, "prod"
	if a.DB == "" {
		a.DB = filepath.Join(t.TempDir(), "index.sqlite") // one machine's stand-in for PostgreSQL
	}
	as := startServer(t, a)
	defer as.stop()
	b := testConfig(t, nil)
	b.Roles = []string{RoleProcessor}
	b.NATSURL, b.Blobs, b.S3Endpoint, b.S3Bucket, b.S3Prefix, b.DB = cl.URL(), "s3", srv.Endpoint, bucket, "prod", a.DB
	bs := startServer(t, b)
	defer bs.stop()

	id, err := upload(t, as.URL, c.dump, map[string]string{"ProductName": "Threads", "Version": "1"})
	if err != nil {
		t.Fatal(err)
	}
	before := waitProcessed(t, as.URL, id, time.Minute)
	want := stackwalkJSON(t, c.dump, c.symbols)
	if sameJSON(before.JSONDump, want) == "" {
		t.Fatal("the walk without symbols is already the symbolized one")
	}

	// The symbols, to A: Breakpad's sym_upload (v2) when built, else a
	// v1 form.
	bp := os.Getenv(cmdtest.BreakpadSymUpload.Env)
	if st, err := os.Stat(cmdtest.BreakpadSymUpload.Default); bp == "" && err == nil && st.Mode()&0o111 != 0 {
		bp = cmdtest.BreakpadSymUpload.Default
	}
	var mods []string
	for _, st := range c.symbols {
		filepath.WalkDir(st, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".sym") {
				return nil
			}
			rel, _ := filepath.Rel(st, p)
			mods = append(mods, filepath.ToSlash(rel))
			if bp != "" {
				r := cmdtest.RunClean(t, bp, []string{"http_proxy=", "HTTP_PROXY="}, "-p", "sym-upload-v2", "-k", secret, p, as.URL)
				if r.Code != 0 || !strings.Contains(r.Stdout, "Successfully sent the symbol file.") {
					t.Fatalf("Breakpad's sym_upload: %d %q %q", r.Code, r.Stdout, r.Stderr)
				}
				return nil
			}
			symUploadV1(t, as.URL, secret, p)
			return nil
		})
	}
	if len(mods) == 0 {
		t.Fatal("no symbol files in the case")
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		got, code, err := getCrash(as.URL, id)
		if err == nil && code == 200 && got.Status == "processed" && sameJSON(got.JSONDump, want) == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not reprocessed into the symbolized walk: %s", sameJSON(got.JSONDump, want))
		}
		time.Sleep(50 * time.Millisecond)
	}
	id2, err := upload(t, as.URL, c.dump, map[string]string{"ProductName": "Threads", "Version": "2"})
	if err != nil {
		t.Fatal(err)
	}
	if got := waitProcessed(t, as.URL, id2, time.Minute); sameJSON(got.JSONDump, want) != "" {
		t.Errorf("a crash after the upload: not symbolized: %s", sameJSON(got.JSONDump, want))
	}

	ctx2, cancel2 := context.WithTimeout(context.Background(), time.Minute)
	defer cancel2()
	st, err := blob.OpenS3(ctx2, blob.S3Config{Endpoint: srv.Endpoint, Bucket: bucket, Prefix: "prod", AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mods {
		el := strings.Split(m, "/")
		key, err := symblob.SymKey(el[0], el[1])
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := st.Exists(ctx2, key); !ok {
			t.Errorf("%s: not on S3 (%v)", key, err)
		}
		resp, err := http.Get(as.URL + "/symbols/" + m)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(got) == 0 {
			t.Errorf("download of %s: %s, %d bytes", m, resp.Status, len(got))
		}
	}
	// The module of the crash's own code: copied into the processor's
	// symbol directory from S3.
	if _, err := os.Stat(filepath.Join(b.Data, "symbols", "threads", "144AFBA2676A2231983B3DCC7FE8C9FE0", "threads.sym")); err != nil {
		t.Errorf("no local copy of threads' symbols in the processor's data directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(b.Data, "v1")); !os.IsNotExist(err) {
		t.Errorf("blobs in the processor's data directory (%v)", err)
	}
}

// TestSymbolsOnNATSBlobs: one crashd with blobs in the NATS object store
// (the embedded queue): an uploaded .sym is put on the blob store under
// symbols/; the symbols event through the queue drops the process's local
// copy, and the symbol chain fetches it back from the blob store.
func TestSymbolsOnNATSBlobs(t *testing.T) {
	secret, tok, err := auth.NewToken("ci", auth.ScopeUpload)
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, nil)
	cfg.Blobs = "nats"
	cfg.SymbolServer.Tokens = []auth.Token{tok}
	ts := startServer(t, cfg)
	defer ts.stop()
	id := "0123456789ABCDEF0123456789ABCDEF0"
	sym := filepath.Join(t.TempDir(), "liba.so.sym")
	os.WriteFile(sym, []byte("MODULE Linux x86_64 "+id+" liba.so\nFILE 0 a.c\nFUNC 1000 10 0 f\n1000 10 1 0\n"), 0o644)
	symUploadV1(t, ts.URL, secret, sym)
	ctx := context.Background()
	if ok, err := ts.srv.store.Exists(ctx, "symbols/liba.so/"+id+"/liba.so.sym"); !ok {
		t.Fatalf("not on the blob store: %v", err)
	}
	local := filepath.Join(cfg.Data, "symbols", "liba.so", id, "liba.so.sym")
	deadline := time.Now().Add(10 * time.Second)
	for fileThere(local) {
		if time.Now().After(deadline) {
			t.Fatal("the symbols event did not drop the local copy")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := ts.srv.syms.Load(symbolsModule("liba.so", id)); err != nil {
		t.Fatalf("symbols from the blob store: %v", err)
	}
	if !fileThere(local) {
		t.Error("no local copy after the walk's load")
	}
}

func fileThere(p string) bool { _, err := os.Stat(p); return err == nil }

func symbolsModule(file, id string) symbols.Module {
	return symbols.Module{DebugFile: file, DebugID: id}
}

// TestSymbolsByCodeOnNATSBlobs: two crashd processes with data
// directories of their own sharing one NATS (the first's embedded server,
// blobs nats) and the index: a .sym uploaded to the first is downloaded
// from the second by its code id (the Microsoft-style
// /symbols/CODE_FILE/CODE_ID/NAME), found by /api/syminfo by code id, and
// listed on the second's symbols page, though the second never received it
// (the index's symbol_files, migration 13).
func TestSymbolsByCodeOnNATSBlobs(t *testing.T) {
	secret, tok, err := auth.NewToken("ci", auth.ScopeUpload)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	natsAddr := ln.Addr().String()
	ln.Close()
	a := testConfig(t, nil)
	a.Blobs, a.NATSListen = "nats", natsAddr
	a.Roles = []string{RoleCollector, RoleWeb, RoleSymbols}
	a.SymbolServer.Tokens = []auth.Token{tok}
	if a.DB == "" {
		a.DB = filepath.Join(t.TempDir(), "index.sqlite") // one machine's stand-in for PostgreSQL
	}
	as := startServer(t, a)
	defer as.stop()
	b := testConfig(t, nil)
	b.Blobs, b.NATSURL, b.DB = "nats", "nats://"+natsAddr, a.DB
	b.Roles = []string{RoleWeb, RoleSymbols}
	bs := startServer(t, b)
	defer bs.stop()

	const debugID, codeID = "0123456789ABCDEF0123456789ABCDEF0", "67452301AB89EFCD0123456789ABCDEF"
	data := "MODULE Linux x86_64 " + debugID + " liba.so\nINFO CODE_ID " + codeID + " liba.so\nFILE 0 a.c\nFUNC 1000 10 0 f\n1000 10 1 0\n"
	sym := filepath.Join(t.TempDir(), "liba.so.sym")
	os.WriteFile(sym, []byte(data), 0o644)
	symUploadV1(t, as.URL, secret, sym)

	get := func(path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", bs.URL+path, nil)
		req.Header.Set("Auth-Token", testAPIToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if st, body := get("/symbols/liba.so/" + codeID + "/liba.so.sym"); st != 200 || body != data {
		t.Errorf("the second process's download by code id: %d %q", st, body)
	}
	if st, body := get("/symbols/liba.so/" + strings.ToLower(codeID) + "/liba.so.sym"); st != 200 || body != data {
		t.Errorf("by code id in lower case: %d %q", st, body)
	}
	if st, body := get("/symbols/liba.so/" + debugID + "/liba.so.sym"); st != 200 || body != data {
		t.Errorf("by debug id: %d %q", st, body)
	}
	if st, _ := get("/symbols/liba.so/67452301AB89EFCD0123456789ABCDEE/liba.so.sym"); st != 404 {
		t.Errorf("an unknown code id: %d", st)
	}
	if st, body := get("/api/syminfo/liba.so/" + codeID); st != 200 || !strings.Contains(body, `"debug_id":"`+debugID+`"`) || !strings.Contains(body, `"code_id":"`+codeID+`"`) {
		t.Errorf("the second process's syminfo by code id: %d %s", st, body)
	}
	st, body := get("/api/symbols")
	if st != 200 || !strings.Contains(body, `"debug_file":"liba.so","debug_id":"`+debugID+`","name":"liba.so.sym","size":`+fmt.Sprint(len(data))) {
		t.Errorf("the second process's symbols page: %d %s", st, body)
	}
	// Nothing of it in the second process's own directory.
	if _, err := os.Stat(filepath.Join(b.Data, "symbols", "liba.so")); !os.IsNotExist(err) {
		t.Errorf("the second process holds a copy: %v", err)
	}
}
