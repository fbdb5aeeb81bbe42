package symserver

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"hash/crc32"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/symstore"
)

type member struct {
	name string
	data string
	// declared, when non-zero, is the size written in the directory
	// (a lie: the raw deflate stream holds data).
	declared uint64
}

func zipOf(t testing.TB, ms ...member) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, m := range ms {
		if m.declared == 0 {
			w, err := zw.Create(m.name)
			if err != nil {
				t.Fatal(err)
			}
			w.Write([]byte(m.data))
			continue
		}
		var raw bytes.Buffer
		fw, _ := flate.NewWriter(&raw, flate.BestCompression)
		fw.Write([]byte(m.data))
		fw.Close()
		w, err := zw.CreateRaw(&zip.FileHeader{Name: m.name, Method: zip.Deflate, CRC32: crc32.ChecksumIEEE([]byte(m.data)),
			CompressedSize64: uint64(raw.Len()), UncompressedSize64: m.declared})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(raw.Bytes())
	}
	zw.Close()
	return b.Bytes()
}

func zipForm(t testing.TB, z []byte) (string, []byte) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fw, _ := mw.CreateFormFile("symbols.zip", "symbols.zip")
	fw.Write(z)
	mw.Close()
	return mw.FormDataContentType(), b.Bytes()
}

const symB = "MODULE windows x86 ABCD1 test_app.pdb\nPUBLIC 10 0 f\n"

// TestZipUpload: Tecken's upload, its answers, and the zips it refuses
// before writing anything.
func TestZipUpload(t *testing.T) {
	s, hs, a := start(t, false)
	url := hs.URL + "/upload/"
	good := zipOf(t, member{name: "liba.so/0123456789ABCDEF0123456789ABCDEF0/liba.so.sym", data: symA},
		member{name: "test_app.pdb/ABCD1/test_app.sym", data: symB})
	ct, body := zipForm(t, good)
	st, b := do(t, "POST", url, ct, body, "Auth-Token", testSecret)
	if st != 201 || !strings.Contains(b, `"file_uploads": [`) || !strings.Contains(b, `"key": "test_app.pdb/ABCD1/test_app.sym"`) || !strings.Contains(b, `"skipped_keys": []`) {
		t.Fatalf("zip upload: %d %s", st, b)
	}
	st, b = do(t, "POST", url, ct, body, "Auth-Token", testSecret)
	if st != 201 || !strings.Contains(b, `"skipped_keys": [
      "liba.so/0123456789ABCDEF0123456789ABCDEF0/liba.so.sym",
      "test_app.pdb/ABCD1/test_app.sym"
    ]`) || !strings.Contains(b, `"file_uploads": []`) {
		t.Fatalf("same zip again: %d %s", st, b)
	}
	if st, _ := do(t, "POST", url, ct, body); st != 401 {
		t.Errorf("no token: %d", st)
	}
	if st, _ := do(t, "POST", url, ct, body, "Auth-Token", "noscope"); st != 403 {
		t.Errorf("token without the scope: %d", st)
	}
	for _, c := range []struct {
		name   string
		zip    []byte
		status int
		msg    string
	}{
		{"traversal", zipOf(t, member{name: "../x/x.sym", data: symA}), 400, `unusable file name: \"..\"`},
		{"traversal inside", zipOf(t, member{name: "a/../a.sym", data: symA}), 400, `unusable file name: \"..\"`},
		{"absolute", zipOf(t, member{name: "/etc/passwd/x", data: symA}), 400, "not MODULE/ID/FILE"},
		{"deeper", zipOf(t, member{name: "a/b/c/a.sym", data: symA}), 400, "not MODULE/ID/FILE"},
		{"backslash", zipOf(t, member{name: `a\..\x/ID/a.sym`, data: symA}), 400, "holds a separator"},
		{"not the .sym", zipOf(t, member{name: "liba.so/0123/other.txt", data: symA}), 400, "not the module's .sym"},
		{"4 GiB declared", zipOf(t, member{name: "liba.so/0123/liba.so.sym", data: symA, declared: 4 << 30}), 413, "4294967296 bytes declared"},
		{"zip bomb", zipOf(t, member{name: "liba.so/0123/liba.so.sym", data: symA + strings.Repeat("\x00", 20<<20)}), 413, "over 100 times"},
		{"inflates past its size", zipOf(t, member{name: "liba.so/0123456789ABCDEF0123456789ABCDEF0/liba.so.sym", data: symA + strings.Repeat("PUBLIC 1 0 x\n", 1000), declared: 50}), 400, "zip member liba.so/0123456789ABCDEF0123456789ABCDEF0/liba.so.sym: "},
		{"MODULE disagrees", zipOf(t, member{name: "libz.so/0123/libz.so.sym", data: symA}), 400, "MODULE line names liba.so"},
		{"not a zip", []byte("hello"), 400, "not a zip file"},
	} {
		ct, body := zipForm(t, c.zip)
		st, b := do(t, "POST", url, ct, body, "Auth-Token", testSecret)
		if st != c.status || !strings.Contains(b, c.msg) {
			t.Errorf("%s: %d %s; want %d and %q", c.name, st, b, c.status, c.msg)
		}
	}
	ents, _ := os.ReadDir(s.Dir())
	if len(ents) != 2 {
		t.Errorf("store holds %d modules, want 2", len(ents))
	}
	if inc, _ := os.ReadDir(s.cfg.Incoming); len(inc) != 0 {
		t.Errorf("incoming files left: %v", inc)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(s.Dir()), "x")); err == nil {
		t.Error("written outside the store")
	}
	if l := a.list(); len(l) != 2 {
		t.Errorf("OnSymbols: %q", l)
	}
}

func FuzzZipMembers(f *testing.F) {
	f.Add(zipOf(f, member{name: "liba.so/0123/liba.so.sym", data: symA}))
	f.Add(zipOf(f, member{name: "../x/x.sym", data: symA}))
	f.Fuzz(func(t *testing.T, b []byte) {
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		ms, err := ZipMembers(zr, 1<<20, 4<<20)
		if err != nil {
			return
		}
		for _, m := range ms {
			p, err := symstore.BreakpadFile("/root", m.DebugFile, m.DebugID, ".sym")
			if err != nil || !strings.HasPrefix(p, "/root/") || filepath.Clean(p) != p || strings.Count(p, "/") != 4 {
				t.Fatalf("member %q gives path %q (%v)", m.file.Name, p, err)
			}
		}
	})
}
