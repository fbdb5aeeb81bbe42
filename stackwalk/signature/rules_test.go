package signature

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testGenerator builds a Generator from lists given inline, as Socorro's
// tests do (setup_config_c_sig_tool): irrelevant "ignored1", prefixes
// "pre1" and "pre2", line numbers for "fnNeedNumber", sentinel "sentinel".
func testGenerator(t *testing.T, irrelevant, prefix []string) *Generator {
	t.Helper()
	if irrelevant == nil {
		irrelevant = []string{"ignored1"}
	}
	if prefix == nil {
		prefix = []string{"pre1", "pre2"}
	}
	g, err := New(&Lists{
		Irrelevant:  irrelevant,
		Prefix:      prefix,
		LineNumbers: []string{"fnNeedNumber"},
		Sentinels:   []string{"sentinel"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Socorro's test_normalize_cpp_function cases (line 23).
func TestNormalizeCPP(t *testing.T) {
	g := testGenerator(t, nil, nil)
	for _, c := range []struct{ in, want string }{
		{"fn", "fn"},
		{"fnNeedNumber", "fnNeedNumber:23"},
		{"f( *s)", "f"},
		{"f( &s)", "f"},
		{"f( *s , &n)", "f"},
		{"f3(s,t,u)", "f3"},
		{"operator()(s,t,u)", "operator()"},
		{"::(anonymous namespace)::f3(s,t,u)", "::(anonymous namespace)::f3"},
		{"mozilla::layers::D3D11YCbCrImage::GetAsSourceSurface()", "mozilla::layers::D3D11YCbCrImage::GetAsSourceSurface"},
		{"mozilla::layers::BasicImageLayer::Paint(mozilla::gfx::DrawTarget*, mozilla::gfx::PointTyped<mozilla::gfx::UnknownUnits, float> const&, mozilla::layers::Layer*)", "mozilla::layers::BasicImageLayer::Paint"},
		{"void nsDocumentViewer::DestroyPresShell()", "nsDocumentViewer::DestroyPresShell"},
		{"bool CCGraphBuilder::BuildGraph(class js::SliceBudget& const)", "CCGraphBuilder::BuildGraph"},
		{"f<3>(s,t,u)", "f<T>"},
		{"Alpha<Bravo<Charlie>, Delta>::Echo<Foxtrot>", "Alpha<T>::Echo<T>"},
		{"thread_start<unsigned int (__cdecl*)(void* __ptr64)>", "thread_start<T>"},
		{"class JSObject* DoCallback<JSObject*>(class JS::CallbackTracer*, class JSObject**, const char*)", "DoCallback<T>"},
		{"JS::Heap<JSObject*>::operator JSObject* const &()", "JS::Heap<T>::operator JSObject* const&"},
		{"JSObject::allocKindForTenure const", "JSObject::allocKindForTenure"},
		{"mozilla::jni::GlobalRef<mozilla::jni::Object>::operator=(mozilla::jni::Ref<mozilla::jni::Object, _jobject*> const&)&", "mozilla::jni::GlobalRef<T>::operator="},
		{"mozilla::Maybe<unsigned long>::value() const &", "mozilla::Maybe<T>::value"},
		{"`anonymous namespace'::foo", "(anonymous namespace)::foo"},
		{"(anonymous namespace)::foo", "(anonymous namespace)::foo"},
		{"mozilla::SpinEventLoopUntil(nsTSubstring<T> const&, (anonymous namespace)::ParentImpl::ShutdownBackgroundThread::<T>&&, nsIThread*)", "mozilla::SpinEventLoopUntil"},
		{"ShutdownWorkThreads::$_52::__invoke", "ShutdownWorkThreads::$::__invoke"},
		{"js::jit::CodePosition::operator<(js::jit::CodePosition) const", "js::jit::CodePosition::operator<"},
		{"js::jit::CodePosition::operator<=>(js::jit::CodePosition const&) const", "js::jit::CodePosition::operator<=>"},
		// Socorro's special cases of collapse_types.
		{"IPC::ParamTraits<mozilla::net::NetAddr>::Write", "IPC::ParamTraits<mozilla::net::NetAddr>::Write"},
		{"<name omitted>", "<name omitted>"},
		{"<unknown in foo.dll>", "<unknown in foo.dll>"},
		// PGO cold blocks.
		{"somefunc(int arg1, int arg2) [clone .cold.111]", "somefunc "},
	} {
		if got := g.normalizeCPP(c.in, 23); got != c.want {
			t.Errorf("normalizeCPP(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Socorro's test_normalize_rust_function cases.
func TestNormalizeRust(t *testing.T) {
	g := testGenerator(t, nil, nil)
	for _, c := range []struct{ in, want string }{
		{"expect_failed::h7f635057bfba806a", "expect_failed"},
		{"expect_failed::h7f6350::blah", "expect_failed::h7f6350::blah"},
		{"static void servo_arc::Arc<style::gecko_properties::ComputedValues>::drop_slow<style::gecko_properties::ComputedValues>()", "servo_arc::Arc<T>::drop_slow<T>"},
		{"static void core::ptr::drop_in_place<style::stylist::CascadeData>(struct style::stylist::CascadeData*)", "core::ptr::drop_in_place<T>"},
		{"<rayon_core::job::HeapJob<BODY> as rayon_core::job::Job>::execute", "<rayon_core::job::HeapJob<BODY> as rayon_core::job::Job>::execute"},
	} {
		if got := g.normalizeRust(c.in, 23); got != c.want {
			t.Errorf("normalizeRust(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Go names: receivers kept, type arguments elided.
func TestNormalizeGo(t *testing.T) {
	g := testGenerator(t, nil, nil)
	for _, c := range []struct{ file, in, want string }{
		{"/src/main.go", "main.(*server).handle", "main.(*server).handle"},
		{"/src/main.go", "main.main.func1", "main.main.func1"},
		{"/src/x.go", "example.com/m/cache.(*Map[go.shape.string,go.shape.int]).Get", "example.com/m/cache.(*Map[...]).Get"},
		{"/src/x.go", "example.com/m/sets.Union[go.shape.int]", "example.com/m/sets.Union[...]"},
		{"", "github.com/x/y.(*T).M", "github.com/x/y.(*T).M"},
	} {
		if got := g.normalizeFrame(Frame{Function: c.in, File: c.file}); got != c.want {
			t.Errorf("normalizeFrame(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Socorro's test_normalize_frame cases, with gobreakpad's module@0xOFFSET
// for frames without symbols (Socorro's module-only form with BareModules).
func TestNormalizeFrame(t *testing.T) {
	g := testGenerator(t, nil, nil)
	bare := testGenerator(t, nil, nil)
	bare.BareModules = true
	for _, c := range []struct {
		f          Frame
		want, bare string
	}{
		{Frame{Module: "module", File: "source/", Line: 23, ModuleOffset: 0xfff}, "source#23", ""},
		{Frame{Module: "module", File: `source\`, Line: 23, ModuleOffset: 0xfff}, "source#23", ""},
		{Frame{Module: "module", File: "/a/b/c/source", Line: 23, ModuleOffset: 0xfff}, "source#23", ""},
		{Frame{Module: "module", File: `\a\b\c\source`, Line: 23, ModuleOffset: 0xfff}, "source#23", ""},
		{Frame{Module: "module", File: `\a\b\c\source`, ModuleOffset: 0xfff}, "module@0xfff", "module"},
		{Frame{Module: "module", ModuleOffset: 0xfff}, "module@0xfff", "module"},
		{Frame{Module: "module", Function: "expect_failed::h7f635057bfba806a", File: "hg:hg.mozilla.org/a/b:servio/wrapper.rs:44444444444", Line: 23}, "expect_failed", ""},
		{Frame{Unloaded: "unmod", Offset: 0x5387}, "(unloaded unmod)", ""},
		{Frame{Module: "module]", ModuleOffset: 0xfff}, "module@0xfff", "module"},
		{Frame{Module: "[module]", ModuleOffset: 0xfff}, "module@0xfff", "module"},
		{Frame{Module: "[[[module]]", ModuleOffset: 0xfff}, "module@0xfff", "module"},
		{Frame{Offset: 0x0000000000032ec0}, "@0x32ec0", ""},
		{Frame{}, "@0x0", ""},
	} {
		if got := g.normalizeFrame(c.f); got != c.want {
			t.Errorf("normalizeFrame(%+v) = %q, want %q", c.f, got, c.want)
		}
		want := c.bare
		if want == "" {
			want = c.want
		}
		if got := bare.normalizeFrame(c.f); got != want {
			t.Errorf("BareModules: normalizeFrame(%+v) = %q, want %q", c.f, got, want)
		}
	}
}

// frames makes one function frame per name.
func frames(names ...string) []Frame {
	out := make([]Frame, len(names))
	for i, n := range names {
		out[i] = Frame{Module: "m", Function: n}
	}
	return out
}

func letters(s string) []string { return strings.Split(s, "") }

// Socorro's test_generate_1 to test_generate_4 and
// test_generate_with_merged_dll.
func TestGenerate(t *testing.T) {
	abc, def := []string{"a", "b", "c"}, []string{"d", "e", "f"}
	g := testGenerator(t, abc, def)
	gen := func(g *Generator, names []string) string {
		return g.Generate(Crash{HasThread: true, Frames: frames(names...)}).Signature
	}
	if got := gen(g, letters("abcdefghijklmnopqrstuvwxyz")); got != "d | e | f | g" {
		t.Errorf("simple: %q", got)
	}
	if got := gen(g, letters("abcdaeafagahijklmnopqrstuvwxyz")); got != "d | e | f | g" {
		t.Errorf("irrelevant between prefixes: %q", got)
	}

	long := letters("abcdefghijklmnopqrstuvwxyz")
	for i := 3; i <= 7; i++ {
		long[i] = strings.Repeat(long[i], 70)
	}
	want := strings.Join([]string{strings.Repeat("d", 70), strings.Repeat("e", 70), strings.Repeat("f", 70), strings.Repeat("g", 70)}, " | ")
	if got := gen(g, long); got != want[:MaxLength-3]+"..." {
		t.Errorf("long: %q", got)
	}

	sent := letters("abcdefghabcfaeabdijklmnopqrstuvwxyz")
	sent[7] = "sentinel"
	if got := gen(g, sent); got != "sentinel" {
		t.Errorf("sentinel: %q", got)
	}
	g2 := testGenerator(t, append(abc, "sentinel"), def)
	if got := gen(g2, sent); got != "f | e | d | i" {
		t.Errorf("irrelevant sentinel: %q", got)
	}

	if got := gen(g, []string{"a", "d", "foo32.dll", "foo32.dll", "foo32.dll", "g"}); got != "d | foo32.dll | g" {
		t.Errorf("merged dll: %q", got)
	}
	g3 := testGenerator(t, abc, append(def, `foo32\.dll.*`))
	if got := gen(g3, []string{"foo32.dll", "foo32.dll", "g"}); got != "foo32.dll | g" {
		t.Errorf("merged dll at the top: %q", got)
	}
}

// The empty cases and Socorro's whitespace, printable and length rules.
func TestGenerateEdges(t *testing.T) {
	g := testGenerator(t, []string{"ignored1"}, nil)
	for _, c := range []struct {
		crash Crash
		want  string
	}{
		{Crash{}, "EMPTY: no frame data available"},
		{Crash{HasThread: true}, "EMPTY: no frame data available"},
		{Crash{HasThread: true, Frames: frames("ignored1", "ignored1")}, "ignored1"},
		{Crash{HasThread: true, Frames: frames("f\tg")}, "fg"},
		{Crash{HasThread: true, Frames: frames("caf\u00e9")}, "caf"},
		{Crash{HasThread: true, OS: "Windows NT", Frames: []Frame{{Module: "KERNEL32.DLL", ModuleOffset: 0x10}}}, "kernel32.dll@0x10"},
	} {
		if got := g.Generate(c.crash).Signature; got != c.want {
			t.Errorf("Generate(%+v) = %q, want %q", c.crash, got, c.want)
		}
	}
}

// The markers, from Socorro's OOMSignature, StackOverflowSignature,
// BadHardware and AbortSignature rules.
func TestMarkers(t *testing.T) {
	g := Default()
	top := frames("crash_here", "main")
	for _, c := range []struct {
		crash Crash
		want  string
	}{
		{Crash{HasThread: true, Frames: top, Reason: "EXCEPTION_STACK_OVERFLOW"}, "stackoverflow | crash_here"},
		{Crash{HasThread: true, Frames: top, Reason: "STATUS_NO_MEMORY"}, "OOM | unknown | crash_here"},
		{Crash{HasThread: true, Frames: top, Reason: "STATUS_FATAL_MEMORY_EXHAUSTION"}, "OOM | unknown | crash_here"},
		{Crash{HasThread: true, Frames: top, HasOOMAllocationSize: true, OOMAllocationSize: 262144}, "OOM | small"},
		{Crash{HasThread: true, Frames: top, HasOOMAllocationSize: true, OOMAllocationSize: 262145}, "OOM | large | crash_here"},
		{Crash{HasThread: true, Frames: top, LargeAllocationFailure: true}, "OOM | large | crash_here"},
		{Crash{HasThread: true, Frames: frames("mozalloc_handle_oom", "moz_xmalloc")}, "OOM | unknown | mozalloc_handle_oom"},
		// An OOM handler skipped as irrelevant still marks the crash.
		{Crash{HasThread: true, Frames: frames("std::alloc::rust_oom", "alloc::alloc::handle_alloc_error", "mylib::grow")}, "OOM | unknown | mylib::grow"},
		{Crash{HasThread: true, Frames: top, Reason: "STATUS_DEVICE_DATA_ERROR"}, "bad hardware | crash_here"},
		{Crash{HasThread: true, Frames: top, Reason: "STATUS_DEVICE_DATA_ERROR", HasOOMAllocationSize: true, OOMAllocationSize: 1 << 20}, "OOM | large | bad hardware | crash_here"},
		{Crash{HasThread: true, Frames: top, Reason: "EXCEPTION_STACK_OVERFLOW", AbortMessage: "boom"}, "stackoverflow | Abort | boom | crash_here"},
		{Crash{HasThread: true, Frames: top, AbortMessage: "###!!! ABORT: file foo.cpp:12"}, "Abort | crash_here"},
		{Crash{HasThread: true, Frames: top, AbortMessage: "[1234] ###!!! ABORT: Bad thing: file foo.cpp:12"}, "Abort | Bad thing | crash_here"},
		{Crash{HasThread: true, Frames: top, Reason: "SIGSEGV /SEGV_MAPERR"}, "crash_here"},
	} {
		if got := g.Generate(c.crash).Signature; got != c.want {
			t.Errorf("Generate(%+v) = %q, want %q", c.crash, got, c.want)
		}
	}
}

// Each default list does its job on frames of Linux, Windows, macOS, Rust
// and Go crashes.
func TestDefaultLists(t *testing.T) {
	g := Default()
	for _, c := range []struct {
		name   string
		frames []Frame
		want   string
	}{
		// Irrelevant frames are skipped; prefix frames are kept and the
		// walk goes on; the first other frame ends the signature.
		{"linux abort", []Frame{
			{Module: "libc.so.6", Function: "__pthread_kill_implementation"},
			{Module: "libc.so.6", Function: "raise"},
			{Module: "libc.so.6", Function: "abort"},
			{Module: "app", Function: "Parser::fail(int)", File: "/src/p.cc", Line: 10},
			{Module: "app", Function: "main", File: "/src/main.cc", Line: 3},
		}, "raise | abort | Parser::fail"},
		{"linux i386 abort in __kernel_vsyscall", []Frame{
			{Module: "linux-gate.so", Function: "__kernel_vsyscall"},
			{Module: "libc.so.6", Function: "__pthread_kill_implementation"},
			{Module: "libc.so.6", Function: "raise"},
			{Module: "libc.so.6", Function: "abort"},
			{Module: "app", Function: "Parser::fail(int)", File: "/src/p.cc", Line: 10},
		}, "raise | abort | Parser::fail"},
		{"linux i386 vDSO without symbols", []Frame{
			{Module: "linux-gate.so", ModuleOffset: 0x5e9},
			{Module: "libc.so.6", Function: "read"},
			{Module: "app", Function: "waiter_pipe"},
		}, "read"},
		{"linux assert (sentinel)", []Frame{
			{Module: "libc.so.6", Function: "raise"},
			{Module: "libc.so.6", Function: "abort"},
			{Module: "libc.so.6", Function: "__assert_fail_base"},
			{Module: "libc.so.6", Function: "__assert_fail"},
			{Module: "app", Function: "check(int)"},
		}, "check"},
		{"linux libc without symbols", []Frame{
			{Module: "libc.so.6", ModuleOffset: 0x9f2a1},
			{Module: "app", Function: "std::vector<int, std::allocator<int> >::push_back(int const&)"},
			{Module: "app", Function: "fill"},
		}, "libc.so.6@0x9f2a1 | std::vector<T>::push_back"},
		{"windows fail-fast", []Frame{
			{Module: "ntdll.dll", Function: "KiUserExceptionDispatcher"},
			{Module: "ntdll.dll", Function: "RtlDispatchException"},
			{Module: "KERNELBASE.dll", Function: "RaiseException"},
			{Module: "app.exe", Function: "`anonymous namespace'::Crash(void)"},
		}, "(anonymous namespace)::Crash"},
		{"windows dll without symbols", []Frame{
			{Module: "nvwgf2umx.dll", ModuleOffset: 0x1234},
			{Module: "nvwgf2umx.dll", ModuleOffset: 0x5678},
			{Module: "app.exe", Function: "Render"},
		}, "nvwgf2umx.dll@0x1234 | nvwgf2umx.dll@0x5678 | Render"},
		{"windows memcpy", []Frame{
			{Module: "vcruntime140.dll", Function: "memcpy"},
			{Module: "app.exe", Function: "Buffer::Append(char const *,unsigned __int64)"},
		}, "memcpy | Buffer::Append"},
		{"macos", []Frame{
			{Module: "libsystem_kernel.dylib", Function: "__pthread_kill"},
			{Module: "libsystem_pthread.dylib", Function: "pthread_kill"},
			{Module: "libsystem_c.dylib", Function: "abort"},
			{Module: "libobjc.A.dylib", Function: "objc_msgSend"},
			{Module: "App", Function: "-[AppDelegate crash:]"},
		}, "pthread_kill | abort | objc_msgSend | -[AppDelegate crash:]"},
		{"macos signal trampoline (sentinel, irrelevant)", []Frame{
			{Module: "App", Function: "handler"},
			{Module: "libsystem_platform.dylib", Function: "_sigtramp"},
			{Module: "App", Function: "work"},
		}, "work"},
		{"rust panic", []Frame{
			{Module: "app", Function: "std::sys::pal::unix::abort_internal", File: "/rustc/abc/library/std/src/sys/pal/unix/mod.rs"},
			{Module: "app", Function: "std::panicking::rust_panic_with_hook", File: "/rustc/abc/library/std/src/panicking.rs"},
			{Module: "app", Function: "core::panicking::panic_fmt", File: "/rustc/abc/library/core/src/panicking.rs"},
			{Module: "app", Function: "core::panicking::panic_bounds_check", File: "/rustc/abc/library/core/src/panicking.rs"},
			{Module: "app", Function: "app::parse::h0123456789abcdef", File: "/src/app/src/parse.rs"},
		}, "app::parse"},
		{"rust 1.34 panic without module", []Frame{
			{Module: "app", Function: "panic", File: "git:github.com/rust-lang/rust:src/libcore/panicking.rs:abc"},
			{Module: "app", Function: "app::run", File: "/src/app/src/main.rs"},
		}, "app::run"},
		{"go nil dereference", []Frame{
			{Module: "app", Function: "runtime.raise", File: "/go/src/runtime/sys_linux_amd64.s"},
			{Module: "app", Function: "runtime.dieFromSignal", File: "/go/src/runtime/signal_unix.go"},
			{Module: "app", Function: "runtime.crash", File: "/go/src/runtime/signal_unix.go"},
			{Module: "app", Function: "runtime.fatalpanic", File: "/go/src/runtime/panic.go"},
			{Module: "app", Function: "runtime.gopanic", File: "/go/src/runtime/panic.go"},
			{Module: "app", Function: "runtime.panicmem", File: "/go/src/runtime/panic.go"},
			{Module: "app", Function: "runtime.sigpanic", File: "/go/src/runtime/signal_unix.go"},
			{Module: "app", Function: "main.(*store).put", File: "/src/app/store.go"},
			{Module: "app", Function: "main.main", File: "/src/app/main.go"},
		}, "main.(*store).put"},
		{"go concurrent map writes", []Frame{
			{Module: "app", Function: "runtime.fatal", File: "/go/src/runtime/panic.go"},
			{Module: "app", Function: "runtime.mapassign_faststr", File: "/go/src/runtime/map_faststr.go"},
			{Module: "app", Function: "main.worker", File: "/src/app/main.go"},
		}, "runtime.mapassign_faststr | main.worker"},
		{"address only", []Frame{
			{Offset: 0x7fff12345678},
			{Module: "app", Function: "run"},
		}, "run"},
		{"null call", []Frame{
			{Offset: 0},
			{Module: "app", Function: "call_through(void (*)())"},
		}, "@0x0 | call_through"},
	} {
		got := g.Generate(Crash{HasThread: true, Frames: c.frames}).Signature
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	// Line numbers.
	lines, err := New(&Lists{LineNumbers: []string{"js_Interpret"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := lines.Generate(Crash{HasThread: true, Frames: []Frame{{Function: "js_Interpret(JSContext*)", Line: 1234}}}).Signature; got != "js_Interpret:1234" {
		t.Errorf("line numbers: %q", got)
	}
}

func TestLoadDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name+".txt"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(IrrelevantList, "# comment\n\n  my_crash_helper  \n")
	frs := Crash{HasThread: true, Frames: frames("my_crash_helper", "real_bug")}

	l := DefaultLists()
	n := len(l.Irrelevant)
	if err := l.LoadDir(dir, true); err != nil {
		t.Fatal(err)
	}
	if len(l.Irrelevant) != n+1 || l.Irrelevant[n] != "my_crash_helper" || len(l.Prefix) == 0 {
		t.Fatalf("extend: %d irrelevant (was %d), %d prefix", len(l.Irrelevant), n, len(l.Prefix))
	}
	g, err := New(l)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Generate(frs).Signature; got != "real_bug" {
		t.Errorf("extended lists: %q", got)
	}
	if DefaultLists().Irrelevant[n-1] != l.Irrelevant[n-1] || len(DefaultLists().Irrelevant) != n {
		t.Errorf("LoadDir changed the defaults")
	}

	l = DefaultLists()
	if err := l.LoadDir(dir, false); err != nil {
		t.Fatal(err)
	}
	if len(l.Irrelevant) != 1 {
		t.Errorf("replace: %d irrelevant entries", len(l.Irrelevant))
	}

	write(PrefixList, "ok\nbad(\n")
	err = DefaultLists().LoadDir(dir, true)
	if err == nil || !strings.Contains(err.Error(), PrefixList+".txt:2") {
		t.Errorf("bad regular expression: error %v, want one naming %s.txt:2", err, PrefixList)
	}
	if err := DefaultLists().LoadDir(t.TempDir(), true); err == nil {
		t.Errorf("a directory without lists loaded")
	}
	// Sentinels are plain text: "(" is no error there.
	if _, err := ParseList(strings.NewReader("f(\n"), SentinelsList+".txt"); err != nil {
		t.Errorf("sentinels: %v", err)
	}
}

func TestAnnotate(t *testing.T) {
	top := frames("crash_here")
	for _, c := range []struct {
		a    map[string]string
		want string
	}{
		{map[string]string{"OOMAllocationSize": "1024"}, "OOM | small"},
		{map[string]string{"OOMAllocationSize": " 1048576 "}, "OOM | large | crash_here"},
		{map[string]string{"OOMAllocationSize": "lots"}, "crash_here"},
		{map[string]string{"JSLargeAllocationFailure": "Reporting"}, "OOM | large | crash_here"},
		{map[string]string{"AbortMessage": "out of cheese"}, "Abort | out of cheese | crash_here"},
		{map[string]string{"other": "x"}, "crash_here"},
		{nil, "crash_here"},
	} {
		crash := Crash{HasThread: true, Frames: top}
		crash.Annotate(c.a)
		if got := Default().Generate(crash).Signature; got != c.want {
			t.Errorf("Annotate(%v): %q, want %q", c.a, got, c.want)
		}
	}
}

// TestExtended: "" is the defaults; a directory extends them; a directory
// without lists is an error.
func TestExtended(t *testing.T) {
	if g, err := Extended(""); err != nil || g != Default() {
		t.Fatalf(`Extended(""): %p, %v; want Default()`, g, err)
	}
	dir := t.TempDir()
	if _, err := Extended(dir); err == nil {
		t.Errorf("a directory without lists: no error")
	}
	if err := os.WriteFile(filepath.Join(dir, IrrelevantList+".txt"), []byte("my_crash_helper\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := Extended(dir)
	if err != nil {
		t.Fatal(err)
	}
	frs := Crash{HasThread: true, Frames: frames("raise", "abort", "my_crash_helper", "real_bug")}
	if got := g.Generate(frs).Signature; got != "raise | abort | real_bug" {
		t.Errorf("extended lists: %q", got)
	}
}
