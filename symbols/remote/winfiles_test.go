package remote

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/gobreakpad/gobreakpad/pdb"
	"github.com/gobreakpad/gobreakpad/symbols/pdbsyms"
)

// TestWinFiles: PDBs and PEs by name and identifier from a local store
// tree, a symbol server (then its cache, without a request) and not from
// hostile names; a server's answer that is not a PDB is not kept.
func TestWinFiles(t *testing.T) {
	fakePDB := []byte(pdb.Magic + "rest of a PDB")
	files := map[string][]byte{
		"/a.pdb/ID1/a.pdb":     fakePDB,
		"/a.exe/CID1/a.exe":    []byte("MZ a PE"),
		"/bad.pdb/ID2/bad.pdb": []byte("Symbol Not Found"),
	}
	var reqs atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqs.Add(1)
		if b, ok := files[r.URL.Path]; ok {
			w.Write(b)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	local := t.TempDir()
	putFile(t, fakePDB, local, "l.pdb", "ID3", "l.pdb")
	cacheDir := t.TempDir()
	in := &pdbsyms.Inputs{}
	defer in.Close()
	w := &WinFiles{Path: ParseSymbolPath("srv*" + local + ";srv*" + cacheDir + "*" + srv.URL), MissTTL: -1, Inputs: in}

	find := w.FindPDB("")
	if p, err := find("l.pdb", "ID3"); err != nil || p != filepath.Join(local, "l.pdb", "ID3", "l.pdb") || reqs.Load() != 0 {
		t.Errorf("local store: %q, %v, %d requests", p, err, reqs.Load())
	}
	p, err := find("a.pdb", "ID1")
	if err != nil || p != filepath.Join(cacheDir, "a.pdb", "ID1", "a.pdb") {
		t.Fatalf("server: %q, %v", p, err)
	}
	n := reqs.Load()
	if p2, err := find("a.pdb", "ID1"); err != nil || p2 != p || reqs.Load() != n {
		t.Errorf("again: %q, %v, %d more requests", p2, err, reqs.Load()-n)
	}
	if p, err := find("bad.pdb", "ID2"); err == nil {
		t.Errorf("an answer that is not a PDB: %q", p)
	}
	if _, err := os.Stat(filepath.Join(cacheDir, "bad.pdb", "ID2", "bad.pdb")); !os.IsNotExist(err) {
		t.Errorf("an answer that is not a PDB was kept: %v", err)
	}
	if p, err := w.FetchByID(`C:\build\a.exe`, "CID1", true); err != nil || p != filepath.Join(cacheDir, "a.exe", "CID1", "a.exe") {
		t.Errorf("FetchByID(a PE): %q, %v", p, err)
	}
	if p, err := w.FetchByID("l.pdb", "ID3", false); err != nil || p != filepath.Join(local, "l.pdb", "ID3", "l.pdb") {
		t.Errorf("FetchByID(a local PDB): %q, %v", p, err)
	}
	n = reqs.Load()
	for _, bad := range [][2]string{{"..", "ID1"}, {"a.pdb", ".."}, {"a.pdb", "x/y"}, {"c:", "ID1"}} {
		if p, err := find(bad[0], bad[1]); err == nil {
			t.Errorf("FindPDB(%q, %q) = %q", bad[0], bad[1], p)
		}
		if p, err := w.FetchByID(bad[0], bad[1], false); err == nil {
			t.Errorf("FetchByID(%q, %q) = %q", bad[0], bad[1], p)
		}
	}
	if reqs.Load() != n {
		t.Errorf("%d requests for hostile names", reqs.Load()-n)
	}
	none := &WinFiles{Inputs: in}
	if _, err := none.FindPDB("")("a.pdb", "ID1"); err == nil {
		t.Error("no symbol path: no error")
	}
}
