package symserver

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symstore"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// runSymUpload runs Breakpad's sym_upload (bounded in time) and returns
// its stdout and exit status.
func runSymUpload(t testing.TB, bin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.WaitDelay = time.Second
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill() // by pid: only the process this test started
		<-done
		t.Fatalf("sym_upload %q: still running after 60 s", args)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// TestBreakpadSymUpload uploads with Google Breakpad's own sym_upload
// (built from source by tools/breakpad/build-upload.sh) in both protocols
// and checks what it prints.
func TestBreakpadSymUpload(t *testing.T) {
	bin := cmdtest.BreakpadSymUpload.Path(t)
	s, hs, a := start(t, false)
	dir := t.TempDir()
	symPath := filepath.Join(dir, "liba.so.sym")
	os.WriteFile(symPath, []byte(symA), 0o644)
	sym2 := strings.Replace(symA, "0123456789ABCDEF0123456789ABCDEF0 liba.so", "AAAA456789ABCDEF0123456789ABCDEF0 libb.so", 1)
	sym2Path := filepath.Join(dir, "libb.so.sym")
	os.WriteFile(sym2Path, []byte(sym2), 0o644)

	for _, c := range []struct {
		name string
		args []string
		out  string
		code int
	}{
		{"v1 without a token", []string{symPath, hs.URL + "/symbols/upload"}, "Failed to send symbol file: HTTP response code said error\nResponse code: 401\n", 1},
		{"v1", []string{symPath, hs.URL + "/symbols/upload?key=" + testSecret}, "Successfully sent the symbol file.\n", 0},
		{"v2, already there", []string{"-p", "sym-upload-v2", "-k", testSecret, symPath, hs.URL}, "Symbol file already exists, upload aborted. Use \"-f\" to overwrite.\n", 0},
		{"v2, forced: same bytes", []string{"-p", "sym-upload-v2", "-k", testSecret, "-f", symPath, hs.URL}, "Uploaded file checksum matched existing file checksum, no change necessary.\n", 0},
		{"v2, wrong key", []string{"-p", "sym-upload-v2", "-k", "bad", sym2Path, hs.URL}, "Failed to parse check symbol status response.", 1},
		{"v2", []string{"-p", "sym-upload-v2", "-k", testSecret, sym2Path, hs.URL}, "Successfully sent the symbol file.\n", 0},
	} {
		out, code := runSymUpload(t, bin, c.args...)
		// Breakpad's first line may be about finding libcurl.
		out = strings.TrimPrefix(out, "Failed to open curl lib from binary, use libcurl.so instead\n")
		if code != c.code || !strings.Contains(out, c.out) {
			t.Errorf("%s: exit %d, printed %q; want %d, %q", c.name, code, out, c.code, c.out)
		}
	}
	for _, want := range []struct{ file, id, body string }{
		{"liba.so", "0123456789ABCDEF0123456789ABCDEF0", symA}, {"libb.so", "AAAA456789ABCDEF0123456789ABCDEF0", sym2}} {
		p, _ := symstore.BreakpadFile(s.Dir(), want.file, want.id, ".sym")
		if b, err := os.ReadFile(p); err != nil || string(b) != want.body {
			t.Errorf("%s: %v", p, err)
		}
	}
	if l := a.list(); len(l) != 2 {
		t.Errorf("OnSymbols calls: %q", l)
	}
}

// TestStackwalkThroughServer uploads the symbols of corpus cases to a
// server on 127.0.0.1, in turn with Breakpad's sym_upload v1 and v2 (when
// it is built; else with the same v1 form from Go), our sym_upload (v1 and
// v2) and Tecken-style zips, then walks each case
// with our minidump_stackwalk --symbols-url and with the local stores: the
// outputs must be the same.
func TestStackwalkThroughServer(t *testing.T) {
	cdir := corpus.Dir(t)
	type kase = walkCase
	var cases []kase
	f, err := os.Open(filepath.Join(cdir, "cases.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Split(sc.Text(), "\t")
		if len(fl) < 4 || strings.Contains(fl[3], "big-symbols") || fl[3] == "" {
			continue
		}
		cases = append(cases, kase{fl[0], fl[1], fl[3]})
	}
	f.Close()
	if testing.Short() && len(cases) > 6 {
		cases = cases[:6]
	}
	if len(cases) == 0 {
		t.Skip("no corpus cases with symbol stores")
	}
	bp := ""
	if p := os.Getenv(cmdtest.BreakpadSymUpload.Env); p != "" {
		bp = p
	} else if st, err := os.Stat(cmdtest.BreakpadSymUpload.Default); err == nil && st.Mode()&0o111 != 0 {
		bp = cmdtest.BreakpadSymUpload.Default
	}
	if bp == "" {
		t.Logf("Breakpad's sym_upload not built (%s): uploading with Go's multipart form instead", cmdtest.BreakpadSymUpload.Build)
	}
	walker := cmdtest.Build(t, "github.com/gobreakpad/gobreakpad/cmd/minidump_stackwalk")
	// Cases share a server when none's stores hold, or lack, a module
	// another's dump names that the other's stores lack, or hold with
	// other contents: each case then walks with exactly its own symbols.
	groups, nsets := groupCases(t, cdir, cases)
	ourUpload := cmdtest.Build(t, "github.com/gobreakpad/gobreakpad/cmd/sym_upload")
	uploaded, v1, v2, ours, ours2, zips, lines := 0, 0, 0, 0, 0, 0, 0
	for _, g := range groups {
		_, hs, _ := start(t, false)
		seen, seenMod := map[string]bool{}, map[string]bool{}
		for _, st := range g.stores {
			root := filepath.Join(cdir, st)
			filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() || !strings.HasSuffix(p, ".sym") || seen[p] {
					return nil
				}
				seen[p] = true
				rel, _ := filepath.Rel(root, p)
				el := strings.Split(rel, string(filepath.Separator))
				if len(el) != 3 {
					return nil
				}
				if want, err := symstore.BreakpadPath(el[0], el[1], ".sym"); err != nil || want[2] != el[2] {
					return nil
				}
				if m, err := moduleLine(p); err != nil || symstore.BaseName(m.Name) != el[0] || m.ID != el[1] {
					return nil // a store file whose MODULE line names another module
				}
				// The first store holding a module wins, as in a walk.
				if k := strings.ToLower(el[0] + "/" + el[1]); seenMod[k] {
					return nil
				} else {
					seenMod[k] = true
				}
				uploaded++
				switch {
				case uploaded%4 == 2:
					// Our sym_upload, v1 and v2 in turn.
					args := []string{p, hs.URL + "/symbols/upload?key=" + testSecret}
					if uploaded%8 == 6 {
						args = []string{"-p", "sym-upload-v2", "-k", testSecret, p, hs.URL}
						ours2++
					}
					if r := cmdtest.Run(t, ourUpload, args...); r.Code != 0 || !strings.Contains(r.Stdout, "Successfully sent") {
						t.Fatalf("our sym_upload %q: %d %s %s", args, r.Code, r.Stdout, r.Stderr)
					}
					ours++
				case uploaded%4 == 3:
					// Tecken's zip, one member.
					b, _ := os.ReadFile(p)
					ct, body := zipForm(t, zipOf(t, member{name: el[0] + "/" + el[1] + "/" + el[2], data: string(b)}))
					if st, out := do(t, "POST", hs.URL+"/upload/", ct, body, "Auth-Token", testSecret); st != 201 {
						t.Fatalf("zip upload %s: %d %s", rel, st, out)
					}
					zips++
				case bp != "" && uploaded%4 == 1:
					v2++
					if out, code := runSymUpload(t, bp, "-p", "sym-upload-v2", "-k", testSecret, p, hs.URL); code != 0 {
						t.Fatalf("sym_upload v2 %s: %d %s", rel, code, out)
					}
				case bp != "":
					v1++
					if out, code := runSymUpload(t, bp, p, hs.URL+"/symbols/upload?key="+testSecret); code != 0 || !strings.Contains(out, "Successfully sent") {
						t.Fatalf("sym_upload v1 %s: %d %s", rel, code, out)
					}
				default:
					b, _ := os.ReadFile(p)
					ct, body := v1Body(t, b, map[string]string{"debug_file": el[0], "debug_identifier": el[1]})
					if st, out := do(t, "POST", hs.URL+"/symbols/upload?key="+testSecret, ct, body); st != 200 {
						t.Fatalf("upload %s: %d %s", rel, st, out)
					}
				}
				return nil
			})
		}
		for _, c := range g.cases {
			dump := filepath.Join(cdir, c.dump)
			args := []string{dump}
			for _, st := range strings.Fields(c.stores) {
				args = append(args, filepath.Join(cdir, st))
			}
			local := cmdtest.RunClean(t, walker, nil, args...)
			remote := cmdtest.RunClean(t, walker, nil, "--symbols-url", hs.URL+"/symbols/", "--symbols-cache", t.TempDir(), dump)
			if local.Code != remote.Code || local.Stdout != remote.Stdout {
				t.Errorf("%s: --symbols-url gives another walk than the local stores (exit %d, %d)\n%s", c.name, local.Code, remote.Code, firstDiff(local.Stdout, remote.Stdout))
			}
			lines += strings.Count(local.Stdout, "\n")
		}
		hs.Close()
	}
	t.Logf("%d symbol files uploaded to %d servers (%d sets of stores): Breakpad's sym_upload %d v1, %d v2; ours %d (%d v2); %d Tecken zips", uploaded, len(groups), nsets, v1, v2, ours, ours2, zips)
	t.Logf("%d cases (%d output lines) walked through the server, same output as the local stores", len(cases), lines)
}

// firstDiff says where two outputs first differ.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n local:  %q\n remote: %q", i+1, x, y)
		}
	}
	return "(same)"
}

// TestNativeELF: an ELF file with its debug information uploaded as it is
// (v1 form; Breakpad's sym_upload -p sym-upload-v2 -t elf -c -i when
// built) is turned into the module's .sym in the server.
func TestNativeELF(t *testing.T) {
	elf := corpus.File(t, "generated/threads-x64-O2/threads")
	const id = "144AFBA2676A2231983B3DCC7FE8C9FE0"
	s, hs, a := start(t, false)
	s.cfg.FastCache = t.TempDir()
	b, err := os.ReadFile(elf)
	if err != nil {
		t.Fatal(err)
	}
	ct, body := v1Body(t, b, map[string]string{"debug_file": "threads", "code_file": "threads", "debug_identifier": id})
	if st, out := do(t, "POST", hs.URL+"/symbols/upload?key="+testSecret, ct, body); st != 200 || out != "OK threads/"+id+"\n" {
		t.Fatalf("v1 ELF upload: %d %q", st, out)
	}
	p, _ := symstore.BreakpadFile(s.Dir(), "threads", id, ".sym")
	sym, err := os.ReadFile(p)
	if err != nil || !strings.HasPrefix(string(sym), "MODULE Linux x86_64 "+id+" threads\n") || !strings.Contains(string(sym), "\nFUNC ") {
		t.Fatalf("stored .sym: %v %.200q", err, sym)
	}
	for _, ext := range []string{".symc", ".cfidx"} {
		if m, _ := filepath.Glob(filepath.Join(s.cfg.FastCache, "threads", id, "*"+ext)); len(m) != 1 {
			t.Errorf("fast form %s not written: %v", ext, m)
		}
	}
	// A wrong identifier is refused with the MODULE line's.
	ct, body = v1Body(t, b, map[string]string{"debug_file": "threads", "debug_identifier": "FFFF"})
	if st, out := do(t, "POST", hs.URL+"/symbols/upload?key="+testSecret, ct, body); st != 400 || !strings.Contains(out, "MODULE line names threads "+id) {
		t.Errorf("v1 ELF upload, wrong id: %d %q", st, out)
	}
	if bin := os.Getenv(cmdtest.BreakpadSymUpload.Env); bin != "" || fileExists(cmdtest.BreakpadSymUpload.Default) {
		bin = cmdtest.BreakpadSymUpload.Path(t)
		os.Remove(p)
		out, code := runSymUpload(t, bin, "-p", "sym-upload-v2", "-k", testSecret, "-t", "elf", "-c", "threads", "-i", id, elf, hs.URL)
		if code != 0 || !strings.Contains(out, "Successfully sent the symbol file.\n") {
			t.Errorf("Breakpad's sym_upload -t elf: %d %q", code, out)
		}
		if sym2, err := os.ReadFile(p); err != nil || string(sym2) != string(sym) {
			t.Errorf("sym_upload -t elf stored another .sym (%v)", err)
		}
	} else {
		t.Logf("Breakpad's sym_upload not built: its -t elf upload not tried (%s)", cmdtest.BreakpadSymUpload.Build)
	}
	if n := len(a.list()); n < 1 {
		t.Errorf("OnSymbols: %d calls", n)
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// TestNativeWindows: a PDB, and a PE with its PDB nowhere, uploaded as
// they are, are turned into .sym files as dump_syms makes them.
func TestNativeWindows(t *testing.T) {
	pdbPath := corpus.File(t, "windows/mozilla/dump_syms_regtest64.pdb")
	s, hs, _ := start(t, true)
	for _, c := range []struct{ path, field string }{{pdbPath, "dump_syms_regtest64.pdb"}, {corpus.File(t, "windows/mozilla/basic64.dll"), "basic64.dll"}} {
		b, err := os.ReadFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		ct, body := v1Body(t, b, map[string]string{"debug_file": c.field})
		st, out := do(t, "POST", hs.URL+"/symbols/upload", ct, body)
		if c.field == "basic64.dll" {
			// A PE alone names its PDB in the MODULE line, not the PE.
			if st != 400 || !strings.Contains(out, "MODULE line names basic64.pdb") {
				t.Errorf("PE named as the DLL: %d %q", st, out)
			}
			ct, body = v1Body(t, b, map[string]string{"code_file": c.field})
			st, out = do(t, "POST", hs.URL+"/symbols/upload", ct, body)
		}
		if st != 200 || !strings.HasPrefix(out, "OK ") {
			t.Errorf("%s: %d %q", c.field, st, out)
			continue
		}
		f, id, _ := strings.Cut(strings.Fields(out)[1], "/")
		p, _ := symstore.BreakpadFile(s.Dir(), f, id, ".sym")
		h, err := readHeader(p)
		if err != nil || h.OS != "windows" {
			t.Errorf("%s: stored %s: %+v %v", c.field, p, h, err)
		}
	}
}
