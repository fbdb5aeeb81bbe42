package symserver

import (
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// badNames are names that would leave a directory, or name none, if a
// path were made of them.
var badNames = []string{"..", "../x", "../../outside", "a/../../outside", `..\outside`, `c:\outside`, "/etc/passwd", ".", "", "x\x00y", "x\ny", "./.."}

// TestTraversalEveryField sends every name-bearing field of every upload
// and download a traversal or otherwise unusable name: no request is
// answered 5xx, nothing is written outside the store (whose files are
// all NAME/ID/FILE), no file outside it is served, and the good upload
// made among them is the only module stored.
func TestTraversalEveryField(t *testing.T) {
	s, hs, _ := start(t, false)
	root := filepath.Dir(s.Dir())
	// A file outside the store a traversal would find.
	os.WriteFile(filepath.Join(root, "outside"), []byte(symA), 0o644)
	os.WriteFile(filepath.Join(root, "outside.sym"), []byte(symA), 0o644)
	key := "?key=" + testSecret
	check := func(what string, st int, body string) {
		t.Helper()
		if st >= 500 || st == 0 {
			t.Errorf("%s: %d %q", what, st, body)
		}
		if st == 200 && strings.Contains(body, "MODULE Linux") {
			t.Errorf("%s: served a symbol file: %.80q", what, body)
		}
	}
	elf, _ := os.ReadFile(corpus.File(t, "generated/threads-x64-O2/threads"))
	v1Fields := []string{"debug_file", "debug_identifier", "code_file", "os", "cpu", "version", "product"}
	for _, bad := range badNames {
		// sym-upload-v1: each field, with a .sym and with a native file.
		for _, f := range v1Fields {
			for _, file := range [][]byte{[]byte(symA), elf} {
				fields := map[string]string{f: bad}
				ct, body := v1Body(t, file, fields)
				st, out := do(t, "POST", hs.URL+"/symbols/upload"+key, ct, body)
				if st >= 500 {
					t.Errorf("v1 %s=%q: %d %q", f, bad, st, out)
				}
				// A full path is taken for its last element (Windows
				// clients send them); ".." anywhere is refused.
				if (f == "debug_file" || f == "debug_identifier" || f == "code_file") && st == 200 && (strings.Contains(bad, "..") || f == "debug_identifier" && bad != "") {
					t.Errorf("v1 %s=%q: accepted: %q", f, bad, out)
				}
			}
		}
		// sym-upload-v2: the checkStatus path's two names, the complete
		// body's two, the upload key.
		for _, p := range []string{"/v1/symbols/" + url.PathEscape(bad) + "/0123456789ABCDEF0123456789ABCDEF0:checkStatus", "/v1/symbols/liba.so/" + url.PathEscape(bad) + ":checkStatus"} {
			st, out := do(t, "GET", hs.URL+p+key, "", nil)
			check("checkStatus "+p, st, out)
			if st == 200 {
				t.Errorf("checkStatus %s: 200 %q", p, out)
			}
		}
		for _, body := range []string{
			`{"symbol_id":{"debug_file":` + quote(bad) + `,"debug_id":"0123456789ABCDEF0123456789ABCDEF0"}}`,
			`{"symbol_id":{"debug_file":"liba.so","debug_id":` + quote(bad) + `}}`,
		} {
			st, b := do(t, "POST", hs.URL+"/v1/uploads:create"+key, "", nil)
			m, k := reUpload.FindStringSubmatch(b), reKey.FindStringSubmatch(b)
			if st != 200 || m == nil || k == nil {
				t.Fatalf("create: %d %q", st, b)
			}
			do(t, "PUT", m[1], "", []byte(symA))
			st, out := do(t, "POST", hs.URL+"/v1/uploads/"+k[1]+":complete"+key, "application/json", []byte(body))
			check("complete "+body, st, out)
			if st == 200 && bad != "" {
				t.Errorf("complete %s: accepted: %q", body, out)
			}
		}
		for _, p := range []string{"/v1/uploads/" + url.PathEscape(bad), "/v1/uploads/" + url.PathEscape(bad) + ":complete" + key} {
			method := "PUT"
			if strings.HasSuffix(p, key) {
				method = "POST"
			}
			st, out := do(t, method, hs.URL+p, "", []byte(symA))
			check(method+" "+p, st, out)
			if st == 200 {
				t.Errorf("%s %s: 200", method, p)
			}
		}
		// Downloads and syminfo: each name.
		for _, p := range []string{
			"/symbols/" + url.PathEscape(bad) + "/0123456789ABCDEF0123456789ABCDEF0/liba.so.sym",
			"/symbols/liba.so/" + url.PathEscape(bad) + "/liba.so.sym",
			"/symbols/liba.so/0123456789ABCDEF0123456789ABCDEF0/" + url.PathEscape(bad),
			"/api/syminfo/" + url.PathEscape(bad) + "/0123456789ABCDEF0123456789ABCDEF0",
			"/api/syminfo/liba.so/" + url.PathEscape(bad),
		} {
			for _, m := range []string{"GET", "HEAD"} {
				st, out := do(t, m, hs.URL+p, "", nil)
				check(m+" "+p, st, out)
			}
		}
		// Tecken: the form's file name (zip members: TestZipUpload).
		zct, zbody := zipForm(t, zipOf(t, member{name: "liba.so/0123456789ABCDEF0123456789ABCDEF0/liba.so.sym", data: symA}))
		zbody = []byte(strings.Replace(string(zbody), `filename="symbols.zip"`, `filename=`+quote(bad), 1))
		st, out := do(t, "POST", hs.URL+"/upload/", zct, zbody, "Auth-Token", testSecret)
		check("Tecken file name "+bad, st, out)
	}
	// Everything written is in the store, as NAME/ID/FILE, or in Incoming
	// (empty now); the files outside are untouched.
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		el := strings.Split(rel, string(filepath.Separator))
		switch {
		case rel == "outside" || rel == "outside.sym":
		case el[0] == "symbols" && len(el) == 4, el[0] == "symbols.codeid" && len(el) == 4:
		case el[0] == "symbols.incoming" && len(el) == 2 && strings.HasPrefix(el[1], "v2-"):
			// Files PUT for keys whose completes were refused: kept
			// until the key expires (a client may complete again).
		default:
			t.Errorf("file written at %s", rel)
		}
		return nil
	})
	for _, f := range []string{"outside", "outside.sym"} {
		if b, _ := os.ReadFile(filepath.Join(root, f)); string(b) != symA {
			t.Errorf("%s changed", f)
		}
	}
	if ents, _ := os.ReadDir(s.Dir()); len(ents) > 4 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("store holds %v; want liba.so, threads and the base names of full paths (outside, passwd) at most", names)
	}
}

// quote is a JSON string of s.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r < 0x20:
			b.WriteString(`\u00` + "0123456789abcdef"[r>>4:r>>4+1] + "0123456789abcdef"[r&15:r&15+1])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
