package jsonout

import (
	"bytes"
	"encoding/json"
	"fmt"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/unwind"
)

// unsupported are the paths of rust-minidump's output this package leaves
// null (see the package comment); they are removed from both sides before
// comparing with a snapshot.
var unsupported = []string{
	"crash_info.instruction",
	"crash_info.memory_accesses",
	"crash_info.possible_bit_flips",
}

// walk processes a corpus dump with optional symbol directories.
func walk(t *testing.T, dumpRel string, symRel ...string) (*stackwalk.ProcessState, *minidump.File) {
	t.Helper()
	f, err := minidump.Open(corpus.File(t, dumpRel))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	var opt stackwalk.Options
	if len(symRel) > 0 {
		var dirs []string
		for _, r := range symRel {
			dirs = append(dirs, corpus.File(t, r))
		}
		opt.Symbols = symbreakpad.NewDirs(dirs...)
	}
	st, err := stackwalk.Process(f, opt)
	if err != nil {
		t.Fatal(err)
	}
	return st, f
}

// snapshot returns the document of an insta snapshot (after its header).
func snapshot(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(corpus.File(t, "rust-minidump/snapshots/"+name))
	if err != nil {
		t.Fatal(err)
	}
	// The header is "---", three lines, "---".
	parts := bytes.SplitN(b, []byte("---\n"), 3)
	if len(parts) != 3 {
		t.Fatalf("%s: no snapshot header", name)
	}
	return parts[2]
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decoding %q...: %v", b[:min(len(b), 80)], err)
	}
	return v
}

func drop(v any, path string) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	head, rest, more := strings.Cut(path, ".")
	if !more {
		delete(m, head)
		return
	}
	drop(m[head], rest)
}

// diff lists the paths where got and want differ.
func diff(path string, got, want any, out *[]string) {
	if len(*out) > 20 {
		return
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: got %v, want an object", path, got))
			return
		}
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			gv, gok := g[k]
			wv, wok := w[k]
			switch {
			case !gok:
				*out = append(*out, fmt.Sprintf("%s.%s: missing", path, k))
			case !wok:
				*out = append(*out, fmt.Sprintf("%s.%s: not in rust-minidump's output", path, k))
			default:
				diff(path+"."+k, gv, wv, out)
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			*out = append(*out, fmt.Sprintf("%s: got %d entries, want %d", path, len(g), len(w)))
			return
		}
		for i := range w {
			diff(fmt.Sprintf("%s[%d]", path, i), g[i], w[i], out)
		}
	default:
		if !reflect.DeepEqual(got, want) {
			*out = append(*out, fmt.Sprintf("%s: got %v, want %v", path, got, want))
		}
	}
}

// TestSnapshots compares the output for rust-minidump's test dumps with its
// own snapshots, everything but the unsupported fields.
func TestSnapshots(t *testing.T) {
	tests := []struct {
		dump     string
		symbols  []string
		snapshot string
	}{
		{"rust-minidump/testdata/test.dmp", nil, "test_minidump_stackwalk__json-pretty.snap"},
		{"rust-minidump/testdata/test.dmp", []string{"rust-minidump/testdata/symbols"}, "test_minidump_stackwalk__json-pretty-symbols.snap"},
		{"rust-minidump/testdata/linux-mini.dmp", nil, "test_minidump_stackwalk__linux_json_pretty.snap"},
		{"rust-minidump/testdata/pipeline-inlines-macos-segv.dmp", []string{"rust-minidump/testdata/symbols"}, "test_minidump_stackwalk__macos_inlines_json_pretty.snap"},
	}
	for _, tc := range tests {
		t.Run(tc.snapshot, func(t *testing.T) {
			st, _ := walk(t, tc.dump, tc.symbols...)
			var buf bytes.Buffer
			if err := Write(&buf, st, true); err != nil {
				t.Fatal(err)
			}
			got, want := decode(t, buf.Bytes()), decode(t, snapshot(t, tc.snapshot))
			dropRepeatedCopy(want)
			for _, p := range unsupported {
				drop(got, p)
				drop(want, p)
			}
			var out []string
			diff("", got, want, &out)
			for _, d := range out {
				t.Error(d)
			}
		})
	}
}

// dropRepeatedCopy removes from a rust-minidump report the last frame of
// each thread when it is a scanned copy of the frame before it (the same
// address, that frame not the context's): the copy of libdyld's start
// macOS's dyld leaves at start's stack pointer, which this walker passes
// over (unwind/amd64's repeatsReturnAddress, docs/compat.md row R19). The
// JSON has no stack pointers; the walker's own test of the rule checks
// them (stackwalk's TestRepeatedReturnAddressCorpus).
func dropRepeatedCopy(report any) {
	doc, _ := report.(map[string]any)
	threads, _ := doc["threads"].([]any)
	for _, th := range append(threads, doc["crashing_thread"]) {
		th, _ := th.(map[string]any)
		frames, _ := th["frames"].([]any)
		if len(frames) < 2 {
			continue
		}
		last, _ := frames[len(frames)-1].(map[string]any)
		prev, _ := frames[len(frames)-2].(map[string]any)
		if last["trust"] == "scan" && prev["trust"] != "context" && last["offset"] == prev["offset"] {
			th["frames"] = frames[:len(frames)-1]
			th["frame_count"] = json.Number(fmt.Sprint(len(frames) - 1))
		}
	}
}

// TestCompactBytes checks the compact form byte for byte against
// rust-minidump's --json snapshot of test.dmp.
func TestCompactBytes(t *testing.T) {
	st, _ := walk(t, "rust-minidump/testdata/test.dmp")
	var buf bytes.Buffer
	if err := Write(&buf, st, false); err != nil {
		t.Fatal(err)
	}
	want := bytes.TrimSpace(snapshot(t, "test_minidump_stackwalk__json.snap"))
	if got := bytes.TrimSpace(buf.Bytes()); !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Errorf("compact output differs at byte %d:\n got %q\nwant %q", i, got[i:min(len(got), i+80)], want[i:min(len(want), i+80)])
	}
}

// TestPrettyBytes checks the pretty form byte for byte where the snapshot
// holds nothing this package leaves out.
func TestPrettyBytes(t *testing.T) {
	st, _ := walk(t, "rust-minidump/testdata/test.dmp", "rust-minidump/testdata/symbols")
	var buf bytes.Buffer
	if err := Write(&buf, st, true); err != nil {
		t.Fatal(err)
	}
	want := snapshot(t, "test_minidump_stackwalk__json-pretty-symbols.snap")
	if got := buf.Bytes(); !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
		t.Errorf("pretty output differs from the snapshot")
	}
}

// TestFrames checks frame conversion on a hand-made state: inline frames fold
// into the physical frame after them, frame numbers count physical frames,
// offsets are relative to the function and module, and a frame outside every
// module lists the unloaded modules that covered it (sorted, deduplicated).
func TestFrames(t *testing.T) {
	mod := &stackwalk.Module{Base: 0x400000, Size: 0x10000, CodeFile: "/usr/bin/app", CodeID: "ABCD", DebugFile: "app", DebugID: "ABCD0"}
	st := &stackwalk.ProcessState{
		System:           stackwalk.SystemInfo{OS: "Linux", OSShort: "linux", OSVersion: "0.0.0 Linux 6.1.0-9-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.27-1 (2023-05-08) x86_64", CPU: "amd64", CPUCount: 2},
		Crashed:          true,
		ExceptionCode:    11,
		ExceptionFlags:   1,
		CrashAddress:     0x45,
		ExceptionAddress: 0x45,
		RequestingThread: 0,
		Modules:          []*stackwalk.Module{mod},
		UnloadedModules: []*stackwalk.Module{
			{Base: 0x700000, Size: 0x1000, CodeFile: `C:\x\many.dll`},
			{Base: 0x700100, Size: 0x1000, CodeFile: `C:\x\many.dll`},
			{Base: 0x700000, Size: 0x1000, CodeFile: `C:\x\many.dll`},
			{Base: 0x6ff000, Size: 0x2000, CodeFile: `C:\x\alpha.dll`},
		},
		Threads: []*stackwalk.CallStack{{
			ThreadID: 7,
			Frames: []*stackwalk.StackFrame{
				{Instruction: 0x401010, Module: mod, Function: "inner", FunctionBase: 0x401008, SourceFile: "a.h", SourceLine: 3, Trust: unwind.TrustInline},
				{Instruction: 0x401010, Module: mod, Function: "middle", FunctionBase: 0x401004, SourceFile: "b.h", SourceLine: 9, Trust: unwind.TrustInline},
				{Instruction: 0x401010, Module: mod, Function: "outer", FunctionBase: 0x401000, SourceFile: "c.c", SourceLine: 20, Trust: unwind.TrustContext},
				{Instruction: 0x402000, Module: mod, Trust: unwind.TrustCFI},
				{Instruction: 0x700800, Trust: unwind.TrustScan},
			},
		}},
	}
	var buf bytes.Buffer
	if err := Write(&buf, st, false); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		CrashInfo struct {
			Type, Address  string
			CrashingThread int `json:"crashing_thread"`
		} `json:"crash_info"`
		SystemInfo struct {
			OSVer string `json:"os_ver"`
		} `json:"system_info"`
		Threads []struct {
			FrameCount int `json:"frame_count"`
			Frames     []struct {
				Frame          int
				Function       *string
				FunctionOffset *string `json:"function_offset"`
				Module         *string
				ModuleOffset   *string `json:"module_offset"`
				Offset         string
				Line           *int
				Trust          string
				MissingSymbols bool `json:"missing_symbols"`
				Inlines        []struct {
					Function, File string
					Line           int
				}
				UnloadedModules []struct {
					Module  string
					Offsets []string
				} `json:"unloaded_modules"`
			}
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.CrashInfo.Type != "SIGSEGV / SEGV_MAPERR" || doc.CrashInfo.Address != "0x0000000000000045" || doc.CrashInfo.CrashingThread != 0 {
		t.Errorf("crash_info = %+v", doc.CrashInfo)
	}
	if want := "6.1.0-9-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.27-1 (2023-05-08)"; doc.SystemInfo.OSVer != want {
		t.Errorf("os_ver = %q, want %q", doc.SystemInfo.OSVer, want)
	}
	if len(doc.Threads) != 1 || doc.Threads[0].FrameCount != 3 || len(doc.Threads[0].Frames) != 3 {
		t.Fatalf("threads = %+v", doc.Threads)
	}
	fr := doc.Threads[0].Frames
	f0 := fr[0]
	if f0.Frame != 0 || *f0.Function != "outer" || *f0.FunctionOffset != "0x0000000000000010" || *f0.Module != "app" ||
		*f0.ModuleOffset != "0x0000000000001010" || f0.Offset != "0x0000000000401010" || *f0.Line != 20 || f0.Trust != "context" || f0.MissingSymbols {
		t.Errorf("frame 0 = %+v", f0)
	}
	if len(f0.Inlines) != 2 || f0.Inlines[0].Function != "inner" || f0.Inlines[0].Line != 3 || f0.Inlines[1].Function != "middle" || f0.Inlines[1].File != "b.h" {
		t.Errorf("frame 0 inlines = %+v", f0.Inlines)
	}
	if f1 := fr[1]; f1.Frame != 1 || f1.Function != nil || f1.FunctionOffset != nil || !f1.MissingSymbols || f1.Trust != "cfi" || f1.Inlines != nil || f1.Line != nil {
		t.Errorf("frame 1 = %+v", f1)
	}
	f2 := fr[2]
	if f2.Module != nil || f2.ModuleOffset != nil || f2.Trust != "scan" {
		t.Errorf("frame 2 = %+v", f2)
	}
	want := `[{alpha.dll [0x0000000000001800]} {many.dll [0x0000000000000700 0x0000000000000800]}]`
	if got := fmt.Sprint(f2.UnloadedModules); got != want {
		t.Errorf("frame 2 unloaded modules = %s, want %s", got, want)
	}
}

func TestNoCrash(t *testing.T) {
	st := &stackwalk.ProcessState{RequestingThread: -1, System: stackwalk.SystemInfo{OS: "Windows NT", OSShort: "windows", CPU: "x86", OSVersion: "5.1.2600 Service Pack 2"}}
	var buf bytes.Buffer
	if err := Write(&buf, st, false); err != nil {
		t.Fatal(err)
	}
	want := `{"crash_info":{"address":null,"adjusted_address":null,"assertion":null,"crash_inconsistencies":null,"crashing_thread":null,"instruction":null,"instruction_pointer_update":null,"memory_accesses":null,"possible_bit_flips":null,"type":null},"handles":null,"linux_memory_map_count":null,"lsb_release":null,"mac_boot_args":null,"mac_crash_info":null,"main_module":0,"modules":[],"modules_contains_cert_info":false,"pid":null,"proc_limits":null,"process_uptime":null,"soft_errors":null,"status":"OK","system_info":{"cpu_arch":"x86","cpu_count":0,"cpu_info":null,"cpu_microcode_version":null,"os":"Windows NT","os_ver":"5.1.2600 Service Pack 2"},"thread_count":0,"threads":[],"unloaded_modules":[]}`
	if got := strings.TrimSpace(buf.String()); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if err := Write(&buf, nil, false); err == nil {
		t.Error("Write(nil state) succeeded")
	}
}

func TestOSVersion(t *testing.T) {
	tests := []struct {
		platform     minidump.PlatformID
		version, csd string
		want         string
	}{
		{0x8201, "0.0.0", "Linux 4.9.60-linuxkit-aufs #1 SMP Mon Nov 6 16:00:12 UTC 2017 x86_64", "4.9.60-linuxkit-aufs #1 SMP Mon Nov 6 16:00:12 UTC 2017"},
		{0x8201, "0.0.0", "Linux 5.10 #2 aarch64 Linux/GNU", "5.10 #2"},
		{0x8201, "0.0.0", "", "0.0.0"},
		{0x8201, "4.9.0", "Linux 4.9.0 x", "4.9.0 Linux 4.9.0 x"},
		{2, "5.1.2600", "Service Pack 2", "5.1.2600 Service Pack 2"},
		{0x8101, "11.6.7", "20G630", "11.6.7 20G630"},
	}
	for _, tc := range tests {
		if got := osVersion(tc.platform, tc.version, tc.csd); got != tc.want {
			t.Errorf("osVersion(%#x, %q, %q) = %q, want %q", tc.platform, tc.version, tc.csd, got, tc.want)
		}
	}
	if got := rustOSName(0); got != "0x0x000000" {
		t.Errorf("rustOSName(0) = %q", got)
	}
}

func FuzzParseText(f *testing.F) {
	f.Add([]byte("Linux 5.10 #2 aarch64 Linux/GNU"))
	f.Add([]byte(`[{"InitErrors":[{"StopProcessFailed":{"Stop":"EPERM"}}]},1.5e3]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseJSON(b)
		s := string(b)
		osVersion(0x8201, "0.0.0", s)
	})
}

func BenchmarkWrite(b *testing.B) {
	path := corpus.File(b, "rust-minidump/testdata/pipeline-inlines-macos-segv.dmp")
	syms := corpus.File(b, "rust-minidump/testdata/symbols")
	f, err := minidump.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	st, err := stackwalk.Process(f, stackwalk.Options{Symbols: symbreakpad.NewDirs(syms)})
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		buf.Reset()
		if err := Write(&buf, st, true); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}

// TestCorpus writes every stackwalk case's dump (walked without symbols) and
// checks the document's invariants: valid JSON, one entry per thread of the
// dump, physical frames numbered from zero, a crash type for every crash.
func TestCorpus(t *testing.T) {
	dir := corpus.Dir(t)
	cases, err := os.ReadFile(dir + "/cases.tsv")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(cases)), "\n") {
		fields := strings.Split(line, "\t")
		if len(fields) < 2 {
			continue
		}
		name, dumpRel := fields[0], fields[1]
		t.Run(name, func(t *testing.T) {
			f, err := minidump.Open(dir + "/" + dumpRel)
			if err != nil {
				t.Skipf("not a readable minidump: %v", err)
			}
			defer f.Close()
			st, err := stackwalk.Process(f, stackwalk.Options{})
			if err != nil {
				t.Skipf("stackwalk: %v", err)
			}
			var buf bytes.Buffer
			if err := Write(&buf, st, false); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				CrashInfo struct {
					Type           *string
					CrashingThread *int `json:"crashing_thread"`
				} `json:"crash_info"`
				ThreadCount int `json:"thread_count"`
				Threads     []struct {
					FrameCount int `json:"frame_count"`
					Frames     []struct{ Frame int }
				}
			}
			if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
				t.Fatalf("invalid JSON: %v", err)
			}
			if doc.ThreadCount != len(doc.Threads) {
				t.Errorf("thread_count %d, %d threads", doc.ThreadCount, len(doc.Threads))
			}
			if ts, err := f.ThreadList(); err == nil && len(ts) != len(doc.Threads) {
				t.Errorf("%d threads, the dump has %d", len(doc.Threads), len(ts))
			}
			for i, th := range doc.Threads {
				if th.FrameCount != len(th.Frames) {
					t.Errorf("thread %d: frame_count %d, %d frames", i, th.FrameCount, len(th.Frames))
				}
				for j, fr := range th.Frames {
					if fr.Frame != j {
						t.Errorf("thread %d: frame %d numbered %d", i, j, fr.Frame)
						break
					}
				}
			}
			if st.Crashed && (doc.CrashInfo.Type == nil || *doc.CrashInfo.Type == "") {
				t.Error("crash without a type")
			}
			if c := doc.CrashInfo.CrashingThread; c != nil && (*c < 0 || *c >= len(doc.Threads)) {
				t.Errorf("crashing_thread %d out of range", *c)
			}
			n++
		})
	}
	t.Logf("%d corpus dumps written", n)
}
