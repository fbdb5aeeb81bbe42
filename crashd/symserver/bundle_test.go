package symserver

import (
	"archive/zip"
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbols/formats"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// filesZip zips files (zip name → path on disk; a directory is added with
// everything under it, under its name).
func filesZip(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var ms []member
	for name, p := range files {
		filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			if d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(p, q)
			b, err := os.ReadFile(q)
			if err != nil {
				t.Fatal(err)
			}
			n := name
			if rel != "." {
				n += "/" + filepath.ToSlash(rel)
			}
			ms = append(ms, member{name: n, data: string(b)})
			return nil
		})
	}
	return zipOf(t, ms...)
}

// dumpRef is what our dump_syms code makes of the native file at path with
// its companions where they are (the reference for a bundle's .sym).
func dumpRef(t testing.TB, path string) string {
	t.Helper()
	var o formats.DumpOptions
	o.PE.Inlines, o.MachO.Inlines = true, true
	o.PE.DebugDirs = []string{filepath.Dir(path)}
	m, err := formats.DumpNative(path, o)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	if err := breakpadFormat.Write(w, m, formats.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	return b.String()
}

// TestBundles: native files that belong together, uploaded in one zip as
// a build system has them (v1 form and sym-upload-v2's PUT), are converted
// together: the .sym stored is what our dump_syms code makes of the pair
// in place, and more than of the main file alone.
func TestBundles(t *testing.T) {
	s, hs, _ := start(t, false)
	dir := t.TempDir()

	type bundle struct {
		name     string
		zip      []byte
		fields   map[string]string
		ref      string // the .sym of the pair in place
		alone    []byte // the main file alone
		richer   string // a record the pair has and the main file alone lacks
		v2       bool
		v2DebugF string
	}
	var bundles []bundle

	// ELF + its separate debug file (objcopy --only-keep-debug, then
	// stripped with a .gnu_debuglink).
	if objcopy, err := exec.LookPath("objcopy"); err != nil {
		t.Log("objcopy not found (Debian: binutils): the ELF + debug file bundle is not tried")
	} else {
		full := corpus.File(t, "generated/threads-x64-O2/threads")
		ed := filepath.Join(dir, "elf")
		os.MkdirAll(ed, 0o755)
		dbg, bin := filepath.Join(ed, "threads.debug"), filepath.Join(ed, "threads")
		for _, args := range [][]string{
			{"--only-keep-debug", full, dbg},
			{"--strip-debug", "--add-gnu-debuglink=" + dbg, full, bin},
		} {
			if out, err := exec.Command(objcopy, args...).CombinedOutput(); err != nil {
				t.Fatalf("objcopy %q: %v %s", args, err, out)
			}
		}
		alone, _ := os.ReadFile(bin)
		bundles = append(bundles, bundle{
			name: "ELF + debug file", zip: filesZip(t, map[string]string{"threads": bin, "threads.debug": dbg}),
			fields: map[string]string{"code_file": "threads", "debug_file": "threads", "debug_identifier": "144AFBA2676A2231983B3DCC7FE8C9FE0"},
			ref:    dumpRef(t, bin), alone: alone, richer: "\nFILE ",
		})
		// The same bundle through sym-upload-v2 (sym_upload -t elf -c
		// threads -i ID bundle.zip).
		bundles = append(bundles, bundle{
			name: "ELF + debug file, v2", zip: bundles[len(bundles)-1].zip, ref: bundles[len(bundles)-1].ref,
			v2: true, v2DebugF: "threads",
		})
	}
	// PE + PDB.
	pe := corpus.File(t, "windows/mozilla/dump_syms_regtest64.exe")
	pdb := corpus.File(t, "windows/mozilla/dump_syms_regtest64.pdb")
	peAlone, _ := os.ReadFile(pe)
	bundles = append(bundles, bundle{
		name: "PE + PDB", zip: filesZip(t, map[string]string{"dump_syms_regtest64.exe": pe, "dump_syms_regtest64.pdb": pdb}),
		fields: map[string]string{"code_file": "dump_syms_regtest64.exe", "debug_file": "dump_syms_regtest64.pdb"},
		ref:    dumpRef(t, pe), alone: peAlone, richer: "\nFILE ",
	})
	// Mach-O + dSYM (what our dump_syms -d -g hello-x86_64.dSYM
	// hello-x86_64 writes).
	mo := corpus.File(t, "macos/built/hello-x86_64")
	dsym := filepath.Join(filepath.Dir(mo), "hello-x86_64.dSYM")
	moAlone, _ := os.ReadFile(mo)
	moRef := dumpRef(t, mo)
	bundles = append(bundles, bundle{
		name: "Mach-O + dSYM", zip: filesZip(t, map[string]string{"hello-x86_64": mo, "hello-x86_64.dSYM": dsym}),
		fields: map[string]string{"code_file": "hello-x86_64", "debug_file": "hello-x86_64"},
		ref:    moRef, alone: moAlone, richer: "\nFILE ",
	})

	for _, b := range bundles {
		var st int
		var out string
		if b.v2 {
			st, out = v2Upload(t, hs.URL, b.zip, b.v2DebugF, strings.Fields(b.ref)[3], "ELF")
		} else {
			ct, body := v1Body(t, b.zip, b.fields)
			st, out = do(t, "POST", hs.URL+"/symbols/upload?key="+testSecret, ct, body)
		}
		if st != 200 {
			t.Errorf("%s: %d %q", b.name, st, out)
			continue
		}
		h := strings.Fields(b.ref)
		p, _ := symstore.BreakpadFile(s.Dir(), h[4], h[3], ".sym")
		got, err := os.ReadFile(p)
		if err != nil || string(got) != b.ref {
			t.Errorf("%s: stored %s (%v): %d bytes, want the pair's %d bytes", b.name, p, err, len(got), len(b.ref))
			continue
		}
		if !strings.Contains(b.ref, b.richer) {
			t.Errorf("%s: the pair's .sym has no %q", b.name, b.richer)
		}
		if b.alone == nil {
			continue
		}
		// The main file alone gives less (and is stored over the pair's:
		// upload the pair again afterwards).
		ct, body := v1Body(t, b.alone, b.fields)
		if st, out := do(t, "POST", hs.URL+"/symbols/upload?key="+testSecret, ct, body); st != 200 {
			t.Errorf("%s: the main file alone: %d %q", b.name, st, out)
			continue
		}
		if alone, _ := os.ReadFile(p); strings.Contains(string(alone), b.richer) {
			t.Errorf("%s: the main file alone has %q too: the test shows nothing", b.name, b.richer)
		}
	}
}

// v2Upload runs sym-upload-v2's create, PUT and complete for file.
func v2Upload(t testing.TB, url string, file []byte, debugFile, debugID, typ string) (int, string) {
	t.Helper()
	st, b := do(t, "POST", url+"/v1/uploads:create?key="+testSecret, "", nil)
	m, k := reUpload.FindStringSubmatch(b), reKey.FindStringSubmatch(b)
	if st != 200 || m == nil || k == nil {
		t.Fatalf("create: %d %q", st, b)
	}
	if st, b := do(t, "PUT", m[1], "", file); st != 200 {
		t.Fatalf("PUT: %d %q", st, b)
	}
	return do(t, "POST", url+"/v1/uploads/"+k[1]+":complete?key="+testSecret, "application/json",
		[]byte(`{"symbol_id":{"debug_file":"`+debugFile+`","debug_id":"`+debugID+`"},"symbol_upload_type":"`+typ+`"}`))
}

// TestMachO: a Mach-O binary uploaded alone is converted.
func TestMachO(t *testing.T) {
	mo := corpus.File(t, "macos/symbolic/crash")
	s, hs, _ := start(t, false)
	b, _ := os.ReadFile(mo)
	ct, body := v1Body(t, b, map[string]string{"code_file": "crash"})
	st, out := do(t, "POST", hs.URL+"/symbols/upload?key="+testSecret, ct, body)
	if st != 200 || !strings.HasPrefix(out, "OK crash/") {
		t.Fatalf("%d %q", st, out)
	}
	id := strings.TrimSpace(strings.TrimPrefix(out, "OK crash/"))
	p, _ := symstore.BreakpadFile(s.Dir(), "crash", id, ".sym")
	if h, err := readHeader(p); err != nil || h.OS != "mac" {
		t.Errorf("stored %s: %+v %v", p, h, err)
	}
}

// TestBadBundles: bundles refused before anything is written.
func TestBadBundles(t *testing.T) {
	s, hs, _ := start(t, false)
	elf := []byte("\x7fELF not really")
	for _, c := range []struct {
		name string
		zip  []byte
		st   int
		msg  string
	}{
		{"traversal", zipOf(t, member{name: "../x", data: string(elf)}), 400, `bundle member "../x"`},
		{"traversal inside", zipOf(t, member{name: "a/../../x", data: string(elf)}), 400, `bundle member "a/../../x"`},
		{"absolute", zipOf(t, member{name: "/etc/x", data: string(elf)}), 400, `bundle member "/etc/x"`},
		{"backslash", zipOf(t, member{name: `..\x`, data: string(elf)}), 400, `bundle member`},
		{"4 GiB declared", zipOf(t, member{name: "threads", data: string(elf), declared: 4 << 30}), 413, "4294967296 bytes declared"},
		{"zip bomb", zipOf(t, member{name: "threads", data: string(elf) + strings.Repeat("\x00", 20<<20)}), 413, "over 100 times"},
		{"inflates past its size", zipOf(t, member{name: "threads", data: string(elf) + strings.Repeat("x", 1000), declared: 10}), 400, "bundle member threads"},
		{"no main file", zipOf(t, member{name: "a", data: string(elf)}, member{name: "b", data: string(elf)}), 400, "none named as the upload's"},
		{"twice", zipOf(t, member{name: "threads", data: string(elf)}, member{name: "THREADS", data: string(elf)}), 400, "twice"},
		{"not native", zipOf(t, member{name: "threads", data: "hello"}), 400, "not an ELF, Mach-O, PE or PDB file"},
		{"too deep", zipOf(t, member{name: strings.Repeat("d/", 20) + "threads", data: string(elf)}), 400, "path elements"},
	} {
		ct, body := v1Body(t, c.zip, map[string]string{"code_file": "threads"})
		st, out := do(t, "POST", hs.URL+"/symbols/upload?key="+testSecret, ct, body)
		if st != c.st || !strings.Contains(out, c.msg) {
			t.Errorf("%s: %d %q, want %d and %q", c.name, st, out, c.st, c.msg)
		}
	}
	if ents, _ := os.ReadDir(s.Dir()); len(ents) != 0 {
		t.Errorf("the store has %d entries after refused bundles", len(ents))
	}
	if ents, _ := os.ReadDir(s.cfg.Incoming); len(ents) != 0 {
		t.Errorf("Incoming has %d entries left after refused bundles", len(ents))
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(s.cfg.Incoming), "x")); err == nil {
		t.Error("written outside Incoming")
	}
}

func FuzzBundleMembers(f *testing.F) {
	f.Add(zipOf(f, member{name: "a", data: "x"}, member{name: "a.dSYM/Contents/Resources/DWARF/a", data: "y"}))
	f.Add(zipOf(f, member{name: "../x", data: "x"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		ms, err := BundleMembers(zr, 1<<20, 4<<20)
		if err != nil {
			return
		}
		var total uint64
		for _, m := range ms {
			p := filepath.Join("/root", filepath.FromSlash(m.Name))
			if !strings.HasPrefix(p, "/root/") || filepath.Clean(p) != p || m.UncompressedSize64 > 1<<20 {
				t.Fatalf("member %q gives path %q", m.Name, p)
			}
			total += m.UncompressedSize64
		}
		if total > 4<<20 {
			t.Fatalf("%d bytes declared", total)
		}
	})
}
