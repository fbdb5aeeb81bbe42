package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbols/pdbsyms"
)

// symStore is an HTTP symbol server over a map of paths to files, counting
// requests.
type symStore struct {
	mu    sync.Mutex
	files map[string][]byte
	reqs  []string
}

func (s *symStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, r.URL.Path)
	b, ok := s.files[r.URL.Path]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Write(b)
}

func (s *symStore) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// gcab compresses the file at path into a cabinet named packed, as
// symstore.exe compresses files, and returns the cabinet's bytes.
func gcab(t *testing.T, path, packed string) []byte {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Base(path)
	if err := os.WriteFile(filepath.Join(dir, base), data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("gcab", "-c", "-z", packed, base)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcab: %v: %s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, packed))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// moduleID returns the MODULE record's identifier of a symbol file.
func moduleID(t *testing.T, sym string) string {
	f := strings.Fields(strings.SplitN(sym, "\n", 2)[0])
	if len(f) != 5 || f[0] != "MODULE" {
		t.Fatalf("no MODULE record: %.100q", sym)
	}
	return f[3]
}

// isolate keeps the tests from the user's symbol configuration.
func isolate(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("_NT_SYMBOL_PATH", "")
	t.Setenv("DEBUGINFOD_URLS", "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
}

// TestSymbolServer dumps PEs whose PDBs are only on an HTTP symbol server
// (plain, and as cabinets made with gcab or, for basic32, Microsoft's own
// .pd_): the output must be byte for byte that of the PE with its PDB
// beside it, the PDB kept uncompressed in the cache as
// name.pdb/ID/name.pdb, and a second run served from the cache.
func TestSymbolServer(t *testing.T) {
	isolate(t)
	root := corpus.Dir(t)
	haveGcab := exec.Command("gcab", "--version").Run() == nil
	type input struct{ pe, pdb, packed string }
	inputs := []input{
		{pe: "windows/breakpad/dump_syms_regtest64.exe", pdb: "windows/breakpad/dump_syms_regtest64.pdb"},
		{pe: "windows/symbolic/crash.exe", pdb: "windows/symbolic/crash.pdb"},
		{pe: "windows/mozilla/basic32.dll", packed: "windows/mozilla/basic32.pd_"},
	}
	for _, in := range inputs {
		for _, form := range []string{"plain", "cab"} {
			if in.pdb == "" && form == "plain" {
				continue
			}
			name := filepath.Base(in.pe) + "/" + form
			t.Run(name, func(t *testing.T) {
				if form == "cab" && in.packed == "" && !haveGcab {
					t.Skip("gcab not installed (apt-get install gcab)")
				}
				// The reference: the PE with its PDB beside it.
				local := t.TempDir()
				pePath := filepath.Join(local, filepath.Base(in.pe))
				copyFile(t, filepath.Join(root, in.pe), pePath)
				pdbName := strings.TrimSuffix(filepath.Base(in.pe), filepath.Ext(in.pe)) + ".pdb"
				var pdbData []byte
				if in.pdb != "" {
					copyFile(t, filepath.Join(root, in.pdb), filepath.Join(local, pdbName))
				} else {
					copyFile(t, filepath.Join(root, in.packed), filepath.Join(local, "packed.pd_"))
					p, err := (&pdbsyms.Inputs{MaxRatio: 32}).Unpack(filepath.Join(local, "packed.pd_"))
					if err != nil {
						t.Fatal(err)
					}
					copyFile(t, p, filepath.Join(local, pdbName))
					os.RemoveAll(filepath.Dir(filepath.Dir(p)))
					os.Remove(filepath.Join(local, "packed.pd_"))
				}
				pdbData, _ = os.ReadFile(filepath.Join(local, pdbName))
				want, err := runCmd(t, pePath)
				if err != nil {
					t.Fatal(err)
				}
				id := moduleID(t, want)

				store := &symStore{files: map[string][]byte{}}
				switch {
				case form == "plain":
					store.files["/sym/"+pdbName+"/"+id+"/"+pdbName] = pdbData
				case in.packed != "":
					b, _ := os.ReadFile(filepath.Join(root, in.packed))
					store.files["/sym/"+pdbName+"/"+id+"/"+strings.TrimSuffix(pdbName, "b")+"_"] = b
				default:
					store.files["/sym/"+pdbName+"/"+id+"/"+strings.TrimSuffix(pdbName, "b")+"_"] = gcab(t, filepath.Join(local, pdbName), "out.pd_")
				}
				srv := httptest.NewServer(store)
				defer srv.Close()

				alone := t.TempDir()
				peAlone := filepath.Join(alone, filepath.Base(in.pe))
				copyFile(t, pePath, peAlone)
				cacheDir := t.TempDir()
				spec := "srv*" + cacheDir + "*" + srv.URL + "/sym"
				got, err := runCmd(t, "--symbol-server", spec, peAlone)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("through the server: %d bytes, want %d (%.200q)", len(got), len(want), got)
				}
				cached, err := os.ReadFile(filepath.Join(cacheDir, pdbName, id, pdbName))
				if err != nil || !bytes.Equal(cached, pdbData) {
					t.Errorf("cache: %d bytes (%v), want the PDB's %d", len(cached), err, len(pdbData))
				}
				n := store.requests()
				if n == 0 || !strings.Contains(got, "\nFUNC ") {
					t.Errorf("%d requests, FUNC records: %v", n, strings.Contains(got, "\nFUNC "))
				}
				if got, err := runCmd(t, "--symbol-server", spec, peAlone); err != nil || got != want {
					t.Errorf("from the cache: %d bytes, %v", len(got), err)
				}
				if store.requests() != n {
					t.Errorf("from the cache: %d more requests", store.requests()-n)
				}

				// $_NT_SYMBOL_PATH and Mozilla's $HOME/.dump_syms/config,
				// each with a fresh cache.
				t.Setenv("_NT_SYMBOL_PATH", "cache*"+t.TempDir()+";srv*"+srv.URL+"/sym")
				if got, err := runCmd(t, peAlone); err != nil || got != want {
					t.Errorf("_NT_SYMBOL_PATH: %d bytes, %v", len(got), err)
				}
				t.Setenv("_NT_SYMBOL_PATH", "")
				conf := filepath.Join(os.Getenv("HOME"), ".dump_syms")
				os.MkdirAll(conf, 0o755)
				os.WriteFile(filepath.Join(conf, "config"), []byte("SRV*"+t.TempDir()+"*"+srv.URL+"/sym\n"), 0o644)
				defer os.RemoveAll(conf)
				if got, err := runCmd(t, peAlone); err != nil || got != want {
					t.Errorf("$HOME/.dump_syms/config: %d bytes, %v", len(got), err)
				}
			})
		}
	}
}

// TestSymbolServerMisses: a PDB no server has (404, or a 200 answer that is
// not a PDB, as some servers write "Symbol Not Found") gives the PE's own
// records, as without a server; names from the PE that are not file names
// are never asked for nor made paths.
func TestSymbolServerMisses(t *testing.T) {
	isolate(t)
	pe := corpus.File(t, "windows/symbolic/crash.exe")
	dir := t.TempDir()
	peAlone := filepath.Join(dir, "crash.exe")
	copyFile(t, pe, peAlone)
	want, err := runCmd(t, peAlone)
	if err != nil {
		t.Fatal(err)
	}
	store := &symStore{files: map[string][]byte{
		"/crash.pdb/3249D99D0C4049318610F4E4FB0B69361/crash.pdb": []byte("Symbol Not Found"),
	}}
	srv := httptest.NewServer(store)
	defer srv.Close()
	cacheDir := t.TempDir()
	for _, url := range []string{srv.URL + "/missing", srv.URL} {
		got, err := runCmd(t, "--symbol-server", "srv*"+cacheDir+"*"+url, peAlone)
		if err != nil || got != want {
			t.Errorf("%s: %d bytes, %v; want the PE's own %d bytes", url, len(got), err, len(want))
		}
	}
	if store.requests() < 4 { // missing: .pdb, .pd_, file.ptr; then the 200
		t.Errorf("%d requests: %v", store.requests(), store.reqs)
	}
	if _, err := os.Stat(filepath.Join(cacheDir, "crash.pdb", "3249D99D0C4049318610F4E4FB0B69361", "crash.pdb")); err == nil {
		t.Error("a file that is not a PDB was kept in the cache")
	}

	// The CodeView record's name made "..": no request, nothing written.
	data, err := os.ReadFile(pe)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte("crash.pdb\x00"))
	if i < 0 {
		t.Fatal("no PDB name in crash.exe")
	}
	bad := append([]byte(nil), data...)
	copy(bad[i:], "..\x00")
	evil := filepath.Join(t.TempDir(), "crash.exe")
	if err := os.WriteFile(evil, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	n := store.requests()
	evilCache := t.TempDir()
	if _, err := runCmd(t, "--symbol-server", "srv*"+evilCache+"*"+srv.URL, evil); err != nil {
		t.Fatal(err)
	}
	if store.requests() != n {
		t.Errorf("a PDB named %q was asked for: %v", "..", store.reqs[n:])
	}
	if ents, _ := os.ReadDir(evilCache); len(ents) != 0 {
		t.Errorf("the cache holds %d entries", len(ents))
	}
}

// TestCabinetInputs dumps cabinets given directly (Microsoft's basic32.pd_,
// and gcab-made .pd_, .ex_ and .dl_ files): the output is that of the
// files they hold, the PE found as a cabinet beside a PDB and the PDB as a
// cabinet beside a PE.
func TestCabinetInputs(t *testing.T) {
	isolate(t)
	root := corpus.Dir(t)
	dir := t.TempDir()
	copyFile(t, filepath.Join(root, "windows/mozilla/basic32.pd_"), filepath.Join(dir, "basic32.pd_"))
	copyFile(t, filepath.Join(root, "windows/mozilla/basic32.dll"), filepath.Join(dir, "basic32.dll"))
	plain := t.TempDir()
	p, err := (&pdbsyms.Inputs{MaxRatio: 32}).Unpack(filepath.Join(dir, "basic32.pd_"))
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, p, filepath.Join(plain, "basic32.pdb"))
	os.RemoveAll(filepath.Dir(filepath.Dir(p)))
	copyFile(t, filepath.Join(dir, "basic32.dll"), filepath.Join(plain, "basic32.dll"))
	want, err := runCmd(t, filepath.Join(plain, "basic32.pdb"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(want, "\nINFO CODE_ID 5DDC1E9A6C000 basic32.dll\n") {
		t.Fatalf("the reference has no CODE_ID: %.200q", want)
	}
	for _, args := range [][]string{
		{filepath.Join(dir, "basic32.pd_")}, // the PE beside it
		{filepath.Join(dir, "basic32.dll")}, // the PDB beside it as a cabinet
	} {
		if got, err := runCmd(t, args...); err != nil || got != want {
			t.Errorf("%s: %d bytes, %v; want %d", args, len(got), err, len(want))
		}
	}
	// A stored name that is not a file name ("..") is replaced by the
	// cabinet's unpacked name.
	cabData, err := os.ReadFile(filepath.Join(dir, "basic32.pd_"))
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(cabData, []byte("basic32.pdb\x00"))
	if i < 0 {
		t.Fatal("no stored name in basic32.pd_")
	}
	copy(cabData[i:], "..\x00")
	evil := filepath.Join(t.TempDir(), "evil.pd_")
	if err := os.WriteFile(evil, cabData, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := runCmd(t, evil); err != nil || !strings.HasPrefix(got, "MODULE windows x86 "+moduleID(t, want)+" evil.pdb\n") {
		t.Errorf("a cabinet storing \"..\": %.100q, %v", got, err)
	}
	if _, err := exec.LookPath("gcab"); err != nil {
		t.Skip("gcab not installed (apt-get install gcab)")
	}
	// A .dl_ beside a .pd_, and a .dl_ beside a plain PDB.
	packed := t.TempDir()
	copyFile(t, filepath.Join(dir, "basic32.pd_"), filepath.Join(packed, "basic32.pd_"))
	os.WriteFile(filepath.Join(packed, "basic32.dl_"), gcab(t, filepath.Join(plain, "basic32.dll"), "x.dl_"), 0o644)
	for _, arg := range []string{"basic32.pd_", "basic32.dl_"} {
		if got, err := runCmd(t, filepath.Join(packed, arg)); err != nil || got != want {
			t.Errorf("%s with %s beside: %d bytes, %v; want %d", arg, "a cabinet", len(got), err, len(want))
		}
	}
	onlyPDB := t.TempDir()
	copyFile(t, filepath.Join(plain, "basic32.pdb"), filepath.Join(onlyPDB, "basic32.pdb"))
	copyFile(t, filepath.Join(packed, "basic32.dl_"), filepath.Join(onlyPDB, "basic32.dl_"))
	if got, err := runCmd(t, filepath.Join(onlyPDB, "basic32.pdb")); err != nil || got != want {
		t.Errorf("basic32.pdb with basic32.dl_ beside: %d bytes, %v; want %d", len(got), err, len(want))
	}
	// --store names the file after the PDB inside, not the cabinet.
	st := t.TempDir()
	if _, err := runCmd(t, "--store", st, filepath.Join(dir, "basic32.pd_")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(st, "basic32.pdb", moduleID(t, want), "basic32.sym")); err != nil || string(b) != want {
		t.Errorf("--store: %v", err)
	}
}

// TestFetchByID fetches a PDB by name and debug identifier (Mozilla's
// --debug-id) and a PE by name and code identifier (--code-id), whose PDB
// comes from the same server.
func TestFetchByID(t *testing.T) {
	isolate(t)
	root := corpus.Dir(t)
	local := t.TempDir()
	copyFile(t, filepath.Join(root, "windows/symbolic/crash.exe"), filepath.Join(local, "crash.exe"))
	copyFile(t, filepath.Join(root, "windows/symbolic/crash.pdb"), filepath.Join(local, "crash.pdb"))
	want, err := runCmd(t, filepath.Join(local, "crash.exe"))
	if err != nil {
		t.Fatal(err)
	}
	pdbData, _ := os.ReadFile(filepath.Join(local, "crash.pdb"))
	peData, _ := os.ReadFile(filepath.Join(local, "crash.exe"))
	const id, codeID = "3249D99D0C4049318610F4E4FB0B69361", "5AB380779000"
	store := &symStore{files: map[string][]byte{
		"/crash.pdb/" + id + "/crash.pdb":     pdbData,
		"/crash.exe/" + codeID + "/crash.exe": peData,
	}}
	srv := httptest.NewServer(store)
	defer srv.Close()
	spec := "srv*" + t.TempDir() + "*" + srv.URL
	// The PE beside the name given (in an empty directory here: none).
	empty := t.TempDir()
	got, err := runCmd(t, "--symbol-server", spec, "--debug-id", id, filepath.Join(empty, "crash.pdb"))
	alone := t.TempDir()
	copyFile(t, filepath.Join(local, "crash.pdb"), filepath.Join(alone, "crash.pdb"))
	wantPDB, _ := runCmd(t, filepath.Join(alone, "crash.pdb"))
	if err != nil || got != wantPDB || !strings.HasPrefix(got, "MODULE windows x86 "+id+" crash.pdb\n") {
		t.Errorf("--debug-id: %.100q, %v; want %d bytes", got, err, len(wantPDB))
	}
	// With the PE beside the name given, as the PDB found beside it.
	got, err = runCmd(t, "--symbol-server", spec, "--debug-id", id, filepath.Join(local, "crash.pdb"))
	if want, _ := runCmd(t, filepath.Join(local, "crash.pdb")); err != nil || got != want {
		t.Errorf("--debug-id with the PE beside: %d bytes, %v; want %d", len(got), err, len(want))
	}
	got, err = runCmd(t, "--symbol-server", spec, "--code-id", codeID, filepath.Join(empty, "crash.exe"))
	if err != nil || got != want {
		t.Errorf("--code-id: %d bytes, %v; want %d", len(got), err, len(want))
	}
	if _, err := runCmd(t, "--symbol-server", spec, "--debug-id", "..", "crash.pdb"); err == nil {
		t.Error("--debug-id ..: no error")
	}
}
