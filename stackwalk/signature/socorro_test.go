package signature

import (
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/stackwalk"
)

// Socorro's signature test suite (socorro/signature/tests/test_rules.py and
// test_signature_generator.py), the cases not already in rules_test.go,
// translated: their inputs and expected signatures. Where gobreakpad
// differs on purpose the case says so and docs/compat.md lists it.

// sframe is one frame of Socorro's JSON fixtures.
func sframe(module, function, file string, line int, moduleOffset uint64) Frame {
	return Frame{Module: module, Function: function, File: file, Line: line, ModuleOffset: moduleOffset, Offset: 0x77000000 + moduleOffset}
}

// framesFromJSONDump is Socorro's FRAMES_FROM_JSON_DUMP with frame 1 and 3
// replaced (WITH_TEMPLATES, ..._AND_SPECIAL_CASE use it so).
func framesFromJSONDump(f1, f2, f3 string) []Frame {
	return []Frame{
		sframe("ntdll.dll", "NtWaitForMultipleObjects", "", 0, 0x2015d),
		sframe("KERNELBASE.dll", f1, "", 0, 0x115f6),
		sframe("kernel32.dll", f2, "", 0, 0x119f7),
		sframe("user32.dll", f3, "", 0, 0x20869),
		sframe("user32.dll", "MsgWaitForMultipleObjects", "", 0, 0x20b68),
		sframe("NPSWF32_14_0_0_125.dll", "F_1152915508_____", "F117835525_____", 118, 0x36a13b),
		sframe("NPSWF32_14_0_0_125.dll", "F2166389_____", "F_851861807_____", 552, 0x35faf5),
		sframe("NPSWF32_14_0_0_125.dll", "F_917831355_____", "F_851861807_____", 488, 0x360a7b),
		sframe("NPSWF32_14_0_0_125.dll", "F1315696776_____", "F_851861807_____", 439, 0x35e2fd),
		sframe("NPSWF32_14_0_0_125.dll", "F_1428703866_____", "F_766591945_____", 203, 0x35bf21),
	}
}

// TestSocorroSignatureGenerationRule: TestSignatureGenerationRule's C
// stacks, with the default lists (test_c_stack_trace: user32's
// RealMsgWaitForMultipleObjectsEx is irrelevant, as in Socorro's list) and
// with Socorro's "<name omitted>" and IPC::ParamTraits prefixes added for
// the special case (gobreakpad's defaults leave Mozilla's IPC frames out).
func TestSocorroSignatureGenerationRule(t *testing.T) {
	plain := framesFromJSONDump("WaitForMultipleObjectsEx", "WaitForMultipleObjectsExImplementation", "RealMsgWaitForMultipleObjectsEx")
	r := Default().Generate(Crash{HasThread: true, OS: "Windows NT", Frames: plain})
	if want := "MsgWaitForMultipleObjects | F_1152915508_____"; r.Signature != want {
		t.Errorf("test_c_stack_trace: %q, want %q", r.Signature, want)
	}
	wantFrames := "NtWaitForMultipleObjects | WaitForMultipleObjectsEx | WaitForMultipleObjectsExImplementation | " +
		"RealMsgWaitForMultipleObjectsEx | MsgWaitForMultipleObjects | F_1152915508_____ | F2166389_____ | " +
		"F_917831355_____ | F1315696776_____ | F_1428703866_____"
	if got := strings.Join(r.Frames, " | "); got != wantFrames {
		t.Errorf("test_c_stack_trace proto signature:\n%s\nwant\n%s", got, wantFrames)
	}

	templates := framesFromJSONDump("Alpha<Bravo<Charlie>, Delta>::Echo<Foxtrot>", "WaitForMultipleObjectsExImplementation", "RealMsgWaitForMultipleObjectsEx(void **fakeargs)")
	r = Default().Generate(Crash{HasThread: true, OS: "Windows NT", Frames: templates})
	if want := "Alpha<T>::Echo<T>"; r.Signature != want {
		t.Errorf("test_action_2_with_templates: %q, want %q", r.Signature, want)
	}
	if r.Frames[1] != "Alpha<T>::Echo<T>" || r.Frames[3] != "RealMsgWaitForMultipleObjectsEx" {
		t.Errorf("test_action_2_with_templates: normalized frames %q", r.Frames)
	}

	l := DefaultLists()
	l.Prefix = append(l.Prefix, `IPC::ParamTraits`)
	g, err := New(l)
	if err != nil {
		t.Fatal(err)
	}
	special := framesFromJSONDump("<name omitted>", "IPC::ParamTraits<mozilla::net::NetAddr>::Write", "RealMsgWaitForMultipleObjectsEx(void **fakeargs)")
	want := "<name omitted> | IPC::ParamTraits<mozilla::net::NetAddr>::Write | MsgWaitForMultipleObjects | F_1152915508_____"
	if got := g.Generate(Crash{HasThread: true, OS: "Windows NT", Frames: special}).Signature; got != want {
		t.Errorf("test_action_2_with_templates_and_special_case: %q, want %q", got, want)
	}

	// test_lower_case_modules: three frames known by their address only,
	// then a Windows module without symbols (lowercased; Socorro's bare
	// module name with BareModules).
	lower := []Frame{{Offset: 0x5e39bf21}, {Offset: 0x5e39bf21}, {Offset: 0x5e39bf21}, {Module: "USER2.dll", ModuleOffset: 0x20869, Offset: 0x77370869}}
	bare, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	bare.BareModules = true
	r = bare.Generate(Crash{HasThread: true, OS: "Windows NT", Frames: lower})
	if r.Signature != "user2.dll" || strings.Join(r.Frames, " | ") != "@0x5e39bf21 | @0x5e39bf21 | @0x5e39bf21 | user2.dll" {
		t.Errorf("test_lower_case_modules: %q from %q", r.Signature, r.Frames)
	}
	if got := Default().Generate(Crash{HasThread: true, OS: "Windows NT", Frames: lower}).Signature; got != "user2.dll@0x20869" {
		t.Errorf("test_lower_case_modules, module@offset: %q", got)
	}
}

// TestSocorroEmpty: test_empty_dicts and test_action_3: crash data without
// threads (and without a crashing thread) is signed "EMPTY: no frame data
// available", Socorro's pipeline reading a missing crashing thread as 0.
func TestSocorroEmpty(t *testing.T) {
	r := Default().Generate(Crash{})
	if r.Signature != "EMPTY: no frame data available" || len(r.Frames) != 0 {
		t.Errorf("test_empty_dicts: %q, frames %q", r.Signature, r.Frames)
	}
	if got := Default().Process(nil).Signature; got != "EMPTY: no frame data available" {
		t.Errorf("no process: %q", got)
	}
	if got := Default().Generate(Crash{HasThread: true}).Signature; got != "EMPTY: no frame data available" {
		t.Errorf("test_action_3: %q", got)
	}
}

// TestSocorroThreadZero: a dump without a crashing or requesting thread is
// signed by its thread 0 (Socorro's get_crashing_thread reads rust-minidump's
// null crashing_thread as 0); a requesting thread past the threads has no
// frames.
func TestSocorroThreadZero(t *testing.T) {
	app := &stackwalk.Module{Base: 0x400000, Size: 0x10000, CodeFile: "/usr/bin/app"}
	thread := func(fn string) *stackwalk.CallStack {
		return &stackwalk.CallStack{Frames: []*stackwalk.StackFrame{{Instruction: 0x401000, Module: app, Function: fn}}}
	}
	st := &stackwalk.ProcessState{RequestingThread: -1, Threads: []*stackwalk.CallStack{thread("main_loop"), thread("worker")}}
	if got := Of(st); got != "main_loop" {
		t.Errorf("no requesting thread: %q, want thread 0's main_loop", got)
	}
	st.RequestingThread = 1
	if got := Of(st); got != "worker" {
		t.Errorf("requesting thread 1: %q", got)
	}
	st.RequestingThread = 5
	if got := Of(st); got != "EMPTY: no frame data available" {
		t.Errorf("requesting thread past the threads: %q", got)
	}
	st.RequestingThread, st.Threads = -1, nil
	if got := Of(st); got != "EMPTY: no frame data available" {
		t.Errorf("no threads: %q", got)
	}
}

// TestSocorroNullCall: a call through a null function pointer, frame 0 at
// address 0 and outside every module, is "@0x0", which Socorro's prefix
// list (and gobreakpad's) keeps: "@0x0 | call_through".
func TestSocorroNullCall(t *testing.T) {
	frames := []Frame{{Offset: 0}, {Module: "app", Function: "call_through(void (*)())"}, {Module: "app", Function: "main"}}
	if got := Default().Generate(Crash{HasThread: true, Frames: frames}).Signature; got != "@0x0 | call_through" {
		t.Errorf("null call: %q, want %q", got, "@0x0 | call_through")
	}
}

// TestSocorroFrameNormalization: test_fix_missing_module,
// test_create_frame_list(_with_inlines) and the normalize_frame cases not
// in TestNormalizeFrame.
func TestSocorroFrameNormalization(t *testing.T) {
	// test_fix_missing_module.
	for _, c := range []struct{ f, want Frame }{
		{Frame{}, Frame{}},
		{Frame{Function: "panic"}, Frame{Function: "panic"}},
		{Frame{Function: "begin_panic_fmt", File: "git:github.com/rust-lang/rust:src/libstd/panicking.rs:91856ed52c58aa5ba66a015354d1cc69e9779bdf"},
			Frame{Function: "std::panicking::begin_panic_fmt", File: "git:github.com/rust-lang/rust:src/libstd/panicking.rs:91856ed52c58aa5ba66a015354d1cc69e9779bdf"}},
	} {
		if got := fixRustModule(c.f); got != c.want {
			t.Errorf("fixRustModule(%+v) = %+v, want %+v", c.f, got, c.want)
		}
	}

	// test_create_frame_list: module names are not lowercased but on
	// Windows; inline frames come before their caller, as the walk lists
	// them (test_create_frame_list_with_inlines).
	g := testGenerator(t, nil, nil)
	fl := []Frame{
		sframe("ntdll.dll", "NtWaitForMultipleObjects", "", 0, 0x2015d),
		sframe("KERNELBASE.dll", "inline_a", "some_file.rs", 59, 0x115f6),
		sframe("KERNELBASE.dll", "inline_b", "some_file.rs", 299, 0x115f6),
		sframe("KERNELBASE.dll", "WaitForMultipleObjectsEx", "", 0, 0x115f6),
		sframe("kernel32.dll", "WaitForMultipleObjectsExImplementation", "", 0, 0x119f7),
	}
	r := g.Generate(Crash{HasThread: true, Frames: fl})
	if got := strings.Join(r.Frames, ","); got != "NtWaitForMultipleObjects,inline_a,inline_b,WaitForMultipleObjectsEx,WaitForMultipleObjectsExImplementation" {
		t.Errorf("test_create_frame_list_with_inlines: %s", got)
	}

	// normalize_frame: "[module" and an unloaded module with offsets.
	bare := testGenerator(t, nil, nil)
	bare.BareModules = true
	if got := bare.normalizeFrame(Frame{Module: "[module", File: `\a\b\c\source`, ModuleOffset: 0xfff}); got != "module" {
		t.Errorf(`"[module": %q`, got)
	}
	if got := g.normalizeFrame(Frame{Unloaded: "unmod", Offset: 0x5387}); got != "(unloaded unmod)" {
		t.Errorf("unloaded with offsets: %q", got)
	}
	if got := g.normalizeFrame(Frame{}); got != "@0x0" {
		t.Errorf("a frame at address 0: %q", got)
	}
}

// TestSocorroGenerate: test_generate_2a (Socorro's CSignatureTool alone does
// not cut; the pipeline's SigTruncate does, as Generate) and test_generate_4
// without its conditional sentinel: "sentinel2" is no sentinel of the lists,
// so the signature is "d | e | f | g". Socorro's tuple sentinels
// ("sentinel2" only when "ff" is among the frames) exist in its code, not in
// its list files; gobreakpad's lists cannot express them (docs/compat.md).
func TestSocorroGenerate(t *testing.T) {
	g := testGenerator(t, []string{"a", "b", "c"}, []string{"d", "e", "f"})
	a := letters("abcdefghabcfaeabdijklmnopqrstuvwxyz")
	a[7] = "sentinel2"
	if got := g.Generate(Crash{HasThread: true, Frames: frames(a...)}).Signature; got != "d | e | f | g" {
		t.Errorf("test_generate_4: %q", got)
	}
	a[22] = "ff"
	if got := g.Generate(Crash{HasThread: true, Frames: frames(a...)}).Signature; got != "d | e | f | g" {
		t.Errorf("test_generate_4 with ff (Socorro: sentinel2, a conditional sentinel): %q", got)
	}
	// test_generate_with_merged_dll, second half, with Socorro's lists as
	// given: "foo32.dll" is a prefix because the prefix "f" matches it.
	if got := g.Generate(Crash{HasThread: true, Frames: frames("foo32.dll", "foo32.dll", "g")}).Signature; got != "foo32.dll | g" {
		t.Errorf("merged dll, prefix f: %q", got)
	}
}

// TestSocorroMarkers: the marker rules' cases (TestStackOverflowSignature,
// TestOOMSignature, TestBadHardware, TestAbortSignature) through the whole
// pipeline over a one-frame stack "hello".
func TestSocorroMarkers(t *testing.T) {
	hello := frames("hello")
	size := func(n uint64) Crash {
		return Crash{HasThread: true, Frames: hello, OOMAllocationSize: n, HasOOMAllocationSize: true}
	}
	for _, c := range []struct {
		name  string
		crash Crash
		want  string
	}{
		{"stackoverflow no match", Crash{HasThread: true, Frames: hello, Reason: "FOO"}, "hello"},
		{"stackoverflow", Crash{HasThread: true, Frames: hello, Reason: "EXCEPTION_STACK_OVERFLOW"}, "stackoverflow | hello"},
		{"oom no match", Crash{HasThread: true, Frames: hello}, "hello"},
		{"oom size 17", size(17), "OOM | small"},
		{"oom size 17000000", size(17000000), "OOM | large | hello"},
		// Socorro's predicate tests the size for truth: 0 is no OOM by itself.
		{"oom size 0", size(0), "hello"},
		{"oom fragment NS_ABORT_OOM", Crash{HasThread: true, Frames: frames("NS_ABORT_OOM", "this")}, "OOM | unknown | NS_ABORT_OOM"},
		{"oom fragment mozalloc_handle_oom", Crash{HasThread: true, Frames: frames("mozalloc_handle_oom", "this")}, "OOM | unknown | mozalloc_handle_oom"},
		{"oom fragment CrashAtUnhandlableOOM", Crash{HasThread: true, Frames: frames("CrashAtUnhandlableOOM")}, "OOM | unknown | CrashAtUnhandlableOOM"},
		{"oom reason FOO", Crash{HasThread: true, Frames: hello, Reason: "FOO"}, "hello"},
		{"oom STATUS_NO_MEMORY", Crash{HasThread: true, Frames: hello, Reason: "STATUS_NO_MEMORY"}, "OOM | unknown | hello"},
		{"oom STATUS_FATAL_MEMORY_EXHAUSTION", Crash{HasThread: true, Frames: hello, Reason: "STATUS_FATAL_MEMORY_EXHAUSTION"}, "OOM | unknown | hello"},
		{"oom js large allocation", Crash{HasThread: true, Frames: hello, LargeAllocationFailure: true}, "OOM | large | hello"},
		{"bad hardware FOO", Crash{HasThread: true, Frames: hello, Reason: "FOO"}, "hello"},
		{"bad hardware read", Crash{HasThread: true, Frames: hello, Reason: "EXCEPTION_IN_PAGE_ERROR_READ / STATUS_DEVICE_DATA_ERROR"}, "bad hardware | hello"},
		{"bad hardware exec", Crash{HasThread: true, Frames: hello, Reason: "EXCEPTION_IN_PAGE_ERROR_EXEC / STATUS_DEVICE_DATA_ERROR"}, "bad hardware | hello"},
		{"bad hardware write", Crash{HasThread: true, Frames: hello, Reason: "EXCEPTION_IN_PAGE_ERROR_WRITE / STATUS_DEVICE_DATA_ERROR"}, "bad hardware | hello"},
		{"abort", Crash{HasThread: true, Frames: hello, AbortMessage: "something"}, "Abort | something | hello"},
		{"abort empty", Crash{HasThread: true, Frames: hello, AbortMessage: ""}, "hello"},
		{"abort unknown", Crash{HasThread: true, Frames: hello, AbortMessage: "unknown"}, "Abort | unknown | hello"},
		{"abort long", Crash{HasThread: true, Frames: hello, AbortMessage: strings.Repeat("a", 81)}, "Abort | " + strings.Repeat("a", 77) + "... | hello"},
		{"abort prefix", Crash{HasThread: true, Frames: hello, AbortMessage: "[5392] ###!!! ABORT: foo bar line 42"}, "Abort | foo bar line 42 | hello"},
		{"abort file", Crash{HasThread: true, Frames: hello, AbortMessage: "[7616] ###!!! ABORT: unsafe destruction: file c:/builds/moz2_slave/m-rel-w32-00000000000000000000/build/src/dom/plugins/ipc/PluginModuleParent.cpp, line 777"}, "Abort | unsafe destruction | hello"},
		{"abort no content", Crash{HasThread: true, Frames: hello, AbortMessage: "[204] ###!!! ABORT: file ?, "}, "Abort | hello"},
		{"abort no content 2", Crash{HasThread: true, Frames: hello, AbortMessage: "[4648] ###!!! ABORT: file resource:///modules/sessionstore/SessionStore.jsm, line 1459"}, "Abort | hello"},
		{"abort font", Crash{HasThread: true, Frames: hello, AbortMessage: "unable to find a usable font (\u5fae\u8f6f\u96c5\u9ed1)"}, "Abort | unable to find a usable font | hello"},
		{"abort non-ascii", Crash{HasThread: true, Frames: hello, AbortMessage: "\u018a unknown"}, "Abort | unknown | hello"},
	} {
		if got := Default().Generate(c.crash).Signature; got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestSocorroTidy: TestSigPrintableCharsOnly, TestSigFixWhitespace and
// TestSigTruncate through the pipeline, where printable-only runs first: a
// tab or newline is dropped, not made a space, as in Socorro's pipeline
// (its whitespace rule alone would make "all good").
func TestSocorroTidy(t *testing.T) {
	checkEach(t, "tidy", tidy, []inWant{
		{"everything | fine", "everything | fine"},
		{"libxul.so\x00 | frame2", "libxul.so | frame2"},
		{"libxul.so\U0001f600 | frame2", "libxul.so | frame2"},
		{"all   good", "all good"},
		{"all   good     ", "all good"},
		{"    all   good  ", "all good"},
		{"all\tgood", "allgood"},
		{"all\n\ngood", "allgood"},
		{"all  |  good", "all | good"},
		{strings.Repeat("0", 100), strings.Repeat("0", 100)},
		{strings.Repeat("9", 256), strings.Repeat("9", 252) + "..."},
	})
}

// TestSocorroSigLists: test_siglists.py. Every embedded list has entries, none
// empty or a comment; a valid list reads its entries in order; an invalid
// regular expression is an error naming the file and the line, counted from
// 1 (Socorro's message counts from 0: "at line 3" for the fourth line).
func TestSocorroSigLists(t *testing.T) {
	l := DefaultLists()
	for _, name := range []string{IrrelevantList, PrefixList, SentinelsList, LineNumbersList} {
		entries := *l.list(name)
		if len(entries) == 0 {
			t.Errorf("%s: empty", name)
		}
		for _, e := range entries {
			if e == "" || strings.HasPrefix(e, "#") {
				t.Errorf("%s: entry %q", name, e)
			}
		}
	}
	valid := "# Test Signatures List.\n# Contains a few valid regular expressions.\n\nfooBarStuff\nmoz::.*\n@0x[0-9a-fA-F]{2,}\n"
	got, err := ParseList(strings.NewReader(valid), "test-valid-sig-list.txt")
	if err != nil || strings.Join(got, "\n") != "fooBarStuff\nmoz::.*\n@0x[0-9a-fA-F]{2,}" {
		t.Errorf("valid list: %q, %v", got, err)
	}
	invalid := "# Test Signatures List.\n# Contains an invalid regular expression.\n\nlol[wut\\]\n"
	if _, err := ParseList(strings.NewReader(invalid), "test-invalid-sig-list.txt"); err == nil || !strings.Contains(err.Error(), "test-invalid-sig-list.txt:4:") {
		t.Errorf("invalid list: error %v, want one naming test-invalid-sig-list.txt:4", err)
	}
}
