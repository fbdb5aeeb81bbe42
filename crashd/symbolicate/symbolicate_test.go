package symbolicate

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/symbols/symsrc"
)

// A module with an inlined call chain (outer → middle → inner) and a
// function without lines, written for these tests.
const testSym = `MODULE Linux x86_64 D48F191186D67E69DF025AD71FB91E1F0 testproj
INFO CODE_ID 9119F4D4D686697EDF025AD71FB91E1F
FILE 0 /src/testproj/main.rs
FILE 1 /src/testproj/helper.rs
INLINE_ORIGIN 0 testproj::helper::middle
INLINE_ORIGIN 1 testproj::helper::inner
FUNC 5380 100 0 testproj::main
INLINE 0 4 0 0 53a0 20
INLINE 1 2 1 1 53a8 10
5380 20 1 0
53a0 8 7 1
53a8 10 9 1
53b8 8 3 1
53c0 40 5 0
PUBLIC 6000 0 no_lines
`

// A Windows module: its INFO CODE_ID names the PE file Eliot answers.
const winSym = `MODULE windows x86_64 F86EB934B42FBB79B2595AA25907695C1 ntdll.pdb
INFO CODE_ID 5E4C2B591F4000 ntdll.dll
PUBLIC 1008 0 LdrpGetModuleName
`

func store(t testing.TB) string {
	dir := t.TempDir()
	for _, f := range []struct{ file, id, name, text string }{
		{"testproj", "D48F191186D67E69DF025AD71FB91E1F0", "testproj.sym", testSym},
		{"ntdll.pdb", "F86EB934B42FBB79B2595AA25907695C1", "ntdll.sym", winSym},
	} {
		p := filepath.Join(dir, f.file, f.id, f.name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func service(t testing.TB, cfg Config, paths ...string) *Service {
	src, err := symsrc.Open(symsrc.Config{Paths: paths, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	cfg.Source, cfg.SymFile = src, src.File
	return New(cfg)
}

func post(t *testing.T, h http.HandlerFunc, body string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h(rec, httptest.NewRequest(http.MethodPost, "/symbolicate/v5", strings.NewReader(body)))
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	return rec.Code, strings.TrimSpace(rec.Body.String())
}

// Eliot's own cases (tests/test_symbolicate_resource.py), as inputs and
// the answers it expects.
func TestEliotCases(t *testing.T) {
	s := service(t, Config{}, store(t))
	for _, c := range []struct {
		name, body string
		v4         bool
		code       int
		want       string
	}{
		{"no data", ``, false, 400, `{"title":"Payload is not valid JSON"}`},
		{"not json", `data=wrongtype`, false, 400, `{"title":"Payload is not valid JSON"}`},
		{"empty job", `{}`, false, 400, `{"title":"job 0 is invalid: no stacks specified"}`},
		{"no stacks", `{"modules": [["xul.so", "ABCDE"]]}`, false, 400, `{"title":"job 0 is invalid: no stacks specified"}`},
		{"second job without stacks", `{"jobs": [{"stacks": [[[0, 1000]]], "memoryMap": [["xul.so", "ABCDE"]]}, {"modules": [["xul.so", "ABCDE"]]}]}`, false, 400, `{"title":"job 1 is invalid: no stacks specified"}`},
		{"no memory map", `{"stacks": [[[0, 1]]]}`, false, 400, `{"title":"job 0 is invalid: no memoryMap specified"}`},
		{"bad debug file", `{"stacks": [[[0, 1]]], "memoryMap": [["../x", "AB"]]}`, false, 400, `{"title":"job 0 has invalid modules: module index 0 has an invalid debug_filename"}`},
		{"bad debug id", `{"stacks": [[[0, 1]]], "memoryMap": [["x", "XYZ"]]}`, false, 400, `{"title":"job 0 has invalid modules: module index 0 has an invalid debug_id"}`},
		{"module not a pair", `{"stacks": [[[0, 1]]], "memoryMap": [["x"]]}`, false, 400, `{"title":"job 0 has invalid modules: module index 0 does not have a debug_filename and debug_id"}`},
		{"no stack", `{"stacks": [], "memoryMap": []}`, false, 400, `{"title":"job 0 has invalid stacks: no stacks specified"}`},
		{"index out of modules", `{"stacks": [[[1, 1]]], "memoryMap": [["x", "AB"]]}`, false, 400, `{"title":"job 0 has invalid stacks: stack 0 frame 0 has a module_index that isn't in modules"}`},
		{"float index", `{"stacks": [[[0.5, 1]]], "memoryMap": [["x", "AB"]]}`, false, 400, `{"title":"job 0 has invalid stacks: stack 0 frame 0 has an invalid module_index"}`},
		{"bad offset", `{"stacks": [[[0, -2]]], "memoryMap": [["x", "AB"]]}`, false, 400, `{"title":"job 0 has invalid stacks: stack 0 frame 0 has an invalid module_offset"}`},
		{"frame not a pair", `{"stacks": [[[0]]], "memoryMap": [["x", "AB"]]}`, false, 400, `{"title":"job 0 has invalid stacks: stack 0 frame 0 is not a list of two items"}`},
		{"too many jobs", `{"jobs": [` + strings.Repeat(`{},`, 10) + `{}]}`, false, 400, `{"title":"please limit number of jobs in a single request to <= 10"}`},
		// One module missing, one not named by the stacks (never looked for).
		{"missing and not checked", `{"stacks": [[[0, 1000], [0, 1020]]], "memoryMap": [["nosuch", "D48F191186D67E69DF025AD71FB91E1F0"], ["libc.so", "12345"]]}`, false, 200,
			`{"results":[{"stacks":[[{"frame":0,"module":"nosuch","module_offset":"0x3e8"},{"frame":1,"module":"nosuch","module_offset":"0x3fc"}]],"found_modules":{"libc.so/12345":null,"nosuch/D48F191186D67E69DF025AD71FB91E1F0":false}}]}`},
		{"function and line", `{"jobs": [{"stacks": [[[0, 21376]]], "memoryMap": [["testproj", "D48F191186D67E69DF025AD71FB91E1F0"]]}]}`, false, 200,
			`{"results":[{"stacks":[[{"frame":0,"module":"testproj","module_offset":"0x5380","function":"testproj::main","function_offset":"0x0","file":"/src/testproj/main.rs","line":1}]],"found_modules":{"testproj/D48F191186D67E69DF025AD71FB91E1F0":true}}]}`},
		{"inlines innermost first", `{"jobs": [{"stacks": [[[0, 21418]]], "memoryMap": [["testproj", "d48f191186d67e69df025ad71fb91e1f0"]]}]}`, false, 200,
			`{"results":[{"stacks":[[{"frame":0,"module":"testproj","module_offset":"0x53aa","function":"testproj::main","function_offset":"0x2a","file":"/src/testproj/main.rs","line":4,"inlines":[{"function":"testproj::helper::inner","file":"/src/testproj/helper.rs","line":9},{"function":"testproj::helper::middle","file":"/src/testproj/helper.rs","line":2}]}]],"found_modules":{"testproj/d48f191186d67e69df025ad71fb91e1f0":true}}]}`},
		// A public symbol has no file: no line either; a Windows module is
		// named by its PE file.
		{"line and no file", `{"jobs": [{"stacks": [[[0, 4104], [-1, 77], [0, -1]]], "memoryMap": [["ntdll.pdb", "F86EB934B42FBB79B2595AA25907695C1"]]}]}`, false, 200,
			`{"results":[{"stacks":[[{"frame":0,"module":"ntdll.dll","module_offset":"0x1008","function":"LdrpGetModuleName","function_offset":"0x0"},{"frame":1,"module":"<unknown>","module_offset":"0x4d"},{"frame":2,"module":"ntdll.dll","module_offset":"-0x1"}]],"found_modules":{"ntdll.pdb/F86EB934B42FBB79B2595AA25907695C1":true}}]}`},
		{"v4", `{"stacks": [[[0, 24576], [0, 1], [1, 5]]], "memoryMap": [["testproj", "D48F191186D67E69DF025AD71FB91E1F0"], ["nosuch", "AB"], ["unused", "CD"]], "version": 4}`, true, 200,
			`{"knownModules":[true,false,null],"symbolicatedStacks":[["no_lines (in testproj)","0x1 (in testproj)","0x5 (in nosuch)"]]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := s.ServeV5
			if c.v4 {
				h = s.ServeV4
			}
			code, body := post(t, h, c.body)
			if code != c.code || body != c.want {
				t.Errorf("%d %s\nwant %d %s", code, body, c.code, c.want)
			}
		})
	}
}

func TestCORSAndMethods(t *testing.T) {
	s := New(Config{})
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodOptions, "/symbolicate/v5", nil)
	r.Header.Set("Origin", "https://profiler.firefox.com")
	r.Header.Set("Access-Control-Request-Method", "POST")
	s.Preflight(rec, r)
	h := rec.Header()
	if rec.Code != 200 || h.Get("Access-Control-Allow-Origin") != "*" || h.Get("Access-Control-Allow-Methods") != "POST" ||
		h.Get("Access-Control-Expose-Headers") != "accept, accept-encoding, authorization, content-type, dnt, origin, user-agent, x-csrftoken, x-requested-with" {
		t.Errorf("preflight: %d %v", rec.Code, h)
	}
	rec = httptest.NewRecorder()
	s.ServeV5(rec, httptest.NewRequest(http.MethodGet, "/symbolicate/v5", nil))
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("GET: %d %v", rec.Code, rec.Header())
	}
}

func TestBounds(t *testing.T) {
	s := service(t, Config{MaxBody: 1 << 10, MaxFrames: 3, MaxLookups: 1, MaxModules: 2}, store(t))
	for _, c := range []struct{ body, want string }{
		{`{"stacks": [[[0, 1], [0, 2], [0, 3], [0, 4]]], "memoryMap": [["testproj", "AB"]]}`, "please limit number of frames in a single request to <= 3"},
		{`{"stacks": [[[0, 1], [1, 2]]], "memoryMap": [["a", "AB"], ["b", "AB"]]}`, "please limit number of distinct modules in the stacks of a single request to <= 1"},
		{`{"stacks": [[[0, 1]]], "memoryMap": [["a", "AB"], ["b", "AB"], ["c", "AB"]]}`, "job 0 has invalid modules: more than 2 modules"},
	} {
		code, body := post(t, s.ServeV5, c.body)
		if code != 400 || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s", c.body, code, body)
		}
	}
	code, body := post(t, s.ServeV5, `{"stacks": [[[0, 1]]], "memoryMap": [["`+strings.Repeat("a", 2<<10)+`", "AB"]]}`)
	if code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over MaxBody: %d %s", code, body)
	}
}

// walkJSON is what the test reads of minidump_stackwalk --json.
type walkJSON struct {
	Modules []struct {
		DebugFile string `json:"debug_file"`
		DebugID   string `json:"debug_id"`
		Filename  string `json:"filename"`
	} `json:"modules"`
	Threads []struct {
		Frames []struct {
			Module         *string `json:"module"`
			ModuleOffset   *string `json:"module_offset"`
			Function       *string `json:"function"`
			FunctionOffset *string `json:"function_offset"`
			File           *string `json:"file"`
			Line           *int    `json:"line"`
			Inlines        []struct {
				Function string `json:"function"`
				File     string `json:"file"`
				Line     int    `json:"line"`
			} `json:"inlines"`
		} `json:"frames"`
	} `json:"threads"`
}

func hexInt(t *testing.T, s string) int64 {
	v, err := strconv.ParseInt(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil {
		t.Fatalf("offset %q: %v", s, err)
	}
	return v
}

// TestAgainstStackwalk symbolicates every frame that minidump_stackwalk
// walked in three bundled crashes (Linux with and without inlined calls, a
// Windows program with its PDB's symbols) and expects the walk's own
// function, offset, file, line and inlined calls; modules without symbols
// are reported not found, their frames left bare.
func TestAgainstStackwalk(t *testing.T) {
	prog := cmdtest.Build(t, "github.com/gobreakpad/gobreakpad/cmd/minidump_stackwalk")
	root := filepath.Join("..", "..", "testdata")
	for _, c := range []struct{ dump, syms string }{
		{"truth/cxx/dtor-x64-O2/crash.dmp", "truth/cxx/dtor-x64-O2/symbols"},
		{"walk/crash.dmp", "walk/symbols"},
		{"truth/wincxx/throw-x64-O2/crash.dmp", "truth/wincxx/throw-x64-O2/symbols"},
	} {
		t.Run(c.dump, func(t *testing.T) {
			syms := filepath.Join(root, c.syms)
			r := cmdtest.Run(t, prog, "--json", filepath.Join(root, c.dump), syms)
			if r.Code != 0 {
				t.Fatalf("minidump_stackwalk: %d %s", r.Code, r.Stderr)
			}
			var w walkJSON
			if err := json.Unmarshal([]byte(r.Stdout), &w); err != nil {
				t.Fatal(err)
			}
			s := service(t, Config{}, syms)
			var job Job
			index := map[string]int{}
			for i, m := range w.Modules {
				job.MemoryMap = append(job.MemoryMap, [2]string{m.DebugFile, m.DebugID})
				index[m.Filename] = i
			}
			type want struct {
				fn, off, file string
				line          int
				inlines       []Inline
			}
			var wants []want
			var stack [][2]int64
			for _, th := range w.Threads {
				for _, f := range th.Frames {
					if f.Module == nil || f.ModuleOffset == nil {
						continue
					}
					i, ok := index[*f.Module]
					if !ok {
						t.Fatalf("frame module %q not among the modules", *f.Module)
					}
					stack = append(stack, [2]int64{int64(i), hexInt(t, *f.ModuleOffset)})
					var x want
					if f.Function != nil {
						x.fn, x.off = *f.Function, "0x"+strconv.FormatInt(hexInt(t, *f.FunctionOffset), 16)
					}
					if f.File != nil {
						x.file = *f.File
						if f.Line != nil {
							x.line = *f.Line
						}
					}
					for _, in := range f.Inlines {
						x.inlines = append(x.inlines, Inline{in.Function, in.File, in.Line})
					}
					wants = append(wants, x)
				}
			}
			job.Stacks = [][][2]int64{stack}
			res, err := s.Symbolicate([]Job{job})
			if err != nil {
				t.Fatal(err)
			}
			named, found := 0, 0
			for i, f := range res[0].Stacks[0] {
				x := wants[i]
				got := want{f.Function, f.FunctionOffset, f.File, f.Line, f.Inlines}
				if !reflect.DeepEqual(got, x) {
					t.Errorf("frame %d (%s %s): %+v, minidump_stackwalk %+v", i, f.Module, f.ModuleOffset, got, x)
				}
				m := w.Modules[stack[i][0]]
				if f.Function != "" && f.Module != m.Filename {
					t.Errorf("frame %d: module %q, minidump_stackwalk %q", i, f.Module, m.Filename)
				}
				if f.Function != "" {
					named++
				}
			}
			for k, v := range res[0].FoundModules {
				if v != nil && *v {
					found++
				} else if v != nil && strings.HasPrefix(k, "/") {
					t.Errorf("%s", k)
				}
			}
			if named == 0 || found == 0 {
				t.Errorf("nothing symbolicated: %d frames named, %d modules found", named, found)
			}
			t.Logf("%d frames, %d named, %d of %d modules found", len(stack), named, found, len(res[0].FoundModules))
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"jobs": [{"stacks": [[[0, 21418]]], "memoryMap": [["testproj", "D48F191186D67E69DF025AD71FB91E1F0"]]}]}`), false)
	f.Add([]byte(`{"stacks": [[[0, 1], [-1, -1]]], "memoryMap": [["a", ""]]}`), true)
	f.Add([]byte(`{"jobs": 5}`), false)
	s := New(Config{MaxFrames: 1000, MaxModules: 100})
	f.Fuzz(func(t *testing.T, body []byte, v4 bool) {
		jobs, err := s.Parse(body, v4)
		if err != nil {
			return
		}
		res, err := s.Symbolicate(jobs)
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := json.NewEncoder(&b).Encode(res); err != nil {
			t.Fatal(err)
		}
	})
}

// BenchmarkSymbolicate reports frames symbolicated per second over the
// bundled Windows program's symbols, in requests of 1,000 frames.
func BenchmarkSymbolicate(b *testing.B) {
	syms := filepath.Join("..", "..", "testdata", "walk", "symbols")
	s := service(b, Config{}, syms, store(b))
	var st [][2]int64
	for i := range 1000 {
		st = append(st, [2]int64{int64(i % 2), 0x5380 + int64(i%0x80)})
	}
	job := Job{MemoryMap: [][2]string{{"testproj", "D48F191186D67E69DF025AD71FB91E1F0"}, {"demo", "6F6D6564622D69756C642D69640000000"}}, Stacks: [][][2]int64{st}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Symbolicate([]Job{job}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(st))/b.Elapsed().Seconds(), "frames/s")
}
