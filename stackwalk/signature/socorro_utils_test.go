package signature

import (
	"strings"
	"testing"
)

// Socorro's signature utility tests (socorro/signature/tests/test_utils.py),
// translated for the helpers gobreakpad has: drop_bad_characters (printable),
// parse_source_file (sourceFile), find_enclosed_slices (replaceEnclosed),
// collapse_types, collapse_arguments (through normalizeCPP) and
// drop_prefix_and_return_type. int_or_none, get_crashing_thread,
// override_values, parse_crashid and strip_leading_zeros handle Python
// dictionaries and strings gobreakpad has as typed values.

func TestSocorroUtilsPrintable(t *testing.T) {
	checkEach(t, "printable", printable, []inWant{
		{"", ""},
		{"", ""},
		{"123", "123"},
		{"123", "123"},
		{"1\u00c6\u008a23", "123"},
		{"1\u018a23", "123"},
		{"\r\n\t1 23", "1 23"},
		{"\r\n\t1 23", "1 23"},
		{"\x00\x081 23", "1 23"},
		{"\x00\x081 23", "1 23"},
	})
}

func TestSocorroUtilsSourceFile(t *testing.T) {
	checkEach(t, "sourceFile", sourceFile, []inWant{
		{"hg:hg.mozilla.org/releases/mozilla-release:js/src/vm/JSFunction.cpp:7d280b7e277b82ef282325fefb601c10698e075b", "js/src/vm/JSFunction.cpp"},
		{"git:github.com/rust-lang/rust:src/libcore/cmp.rs:4d90ac38c0b61bb69470b61ea2cccea0df48d9e5", "src/libcore/cmp.rs"},
		{"f:\\dd\\vctools\\crt\\crtw32\\mbstring\\mbsnbico.c", "\\dd\\vctools\\crt\\crtw32\\mbstring\\mbsnbico.c"},
		{"d:\\w7rtm\\com\\rpc\\ndrole\\udt.cxx", "\\w7rtm\\com\\rpc\\ndrole\\udt.cxx"},
		{"/build/firefox-Kq_6Wg/firefox-54.0+build3/memory/mozjemalloc/jemalloc.c", "/build/firefox-Kq_6Wg/firefox-54.0+build3/memory/mozjemalloc/jemalloc.c"},
	})
}

// find_enclosed_slices: each slice found is shown between { and }.
func TestSocorroUtilsEnclosedSlices(t *testing.T) {
	for _, c := range []struct {
		in          string
		open, close byte
		slices      [][2]int
	}{
		{"", '(', ')', [][2]int{}},
		{"(anonymous namespace)::foo", '(', ')', [][2]int{{0, 21}}},
		{"operator()(s,t,u)", '(', ')', [][2]int{{8, 10}, {10, 17}}},
		{"testVal", '(', ')', [][2]int{}},
		{"f( *s)", '(', ')', [][2]int{{1, 6}}},
		{"Foo<bar", '<', '>', [][2]int{{3, 7}}},
		{"Foo<bar <baz> >", '<', '>', [][2]int{{3, 15}}},
		{"Foo<bar<baz>", '<', '>', [][2]int{{3, 12}}},
		{"mozilla::SpinEventLoopUntil(nsTSubstring<T> const&, (anonymous namespace)::ParentImpl::ShutdownBackgroundThread::<T>&&, nsIThread*)", '(', ')', [][2]int{{27, 131}}},
		{"<rayon_core::job::HeapJob<BODY> as rayon_core::job::Job>::execute", '<', '>', [][2]int{{0, 56}}},
		{"IPC::ParamTraits<nsTSubstring<char> >::Write(IPC::Message *,nsTSubstring<char> const &)", '<', '>', [][2]int{{16, 37}, {72, 78}}},
	} {
		var want strings.Builder
		prev := 0
		for _, s := range c.slices {
			want.WriteString(c.in[prev:s[0]] + "{" + c.in[s[0]:s[1]] + "}")
			prev = s[1]
		}
		want.WriteString(c.in[prev:])
		got := replaceEnclosed(c.in, c.open, c.close, func(_, inside string) string { return "{" + inside + "}" })
		if got != want.String() {
			t.Errorf("slices of %q: %q, want %q", c.in, got, want.String())
		}
	}
}

func TestSocorroUtilsCollapseTypes(t *testing.T) {
	checkEach(t, "collapseTypes", collapseTypes, []inWant{
		{"", ""},
		{"HeapFree", "HeapFree"},
		{"Foo<bar>", "Foo<T>"},
		{"<bar>Foo", "<T>Foo"},
		{"<bar>", "<T>"},
		{"Foo<bar", "Foo<T>"},
		{"Foo<bar <baz> >", "Foo<T>"},
		{"Foo<bar<baz>", "Foo<T>"},
		{"CLayeredObjectWithCLS<CCryptoSession>::Release()", "CLayeredObjectWithCLS<T>::Release()"},
		{"core::ptr::drop_in_place<style::stylist::CascadeData>", "core::ptr::drop_in_place<T>"},
		{"<rayon_core::job::HeapJob<BODY> as rayon_core::job::Job>::execute", "<rayon_core::job::HeapJob<BODY> as rayon_core::job::Job>::execute"},
		{"<name omitted>", "<name omitted>"},
		{"IPC::ParamTraits<nsTSubstring<char> >::Write(IPC::Message *,nsTSubstring<char> const &)", "IPC::ParamTraits<nsTSubstring<T> >::Write(IPC::Message *,nsTSubstring<T> const &)"},
		{"<unknown in ntdll.pdb>", "<unknown in ntdll.pdb>"},
	})
}

// collapse_arguments, through the whole C++ normalization (the cases have
// nothing else to normalize).
func TestSocorroUtilsCollapseArguments(t *testing.T) {
	g := testGenerator(t, nil, nil)
	checkEach(t, "normalizeCPP", func(s string) string { return g.normalizeCPP(s, 1) }, []inWant{
		{"", ""},
		{"testVal", "testVal"},
		{"f( *s)", "f"},
		{"f( &s)", "f"},
		{"f( *s , &n)", "f"},
		{"f3(s,t,u)", "f3"},
		{"(anonymous namespace)::foo", "(anonymous namespace)::foo"},
		{"CCGraphBuilder::BuildGraph(class js::SliceBudget& const)", "CCGraphBuilder::BuildGraph"},
		{"operator()(s,t,u)", "operator()"},
		{"mozilla::SpinEventLoopUntil(nsTSubstring<T> const&, (anonymous namespace)::ParentImpl::ShutdownBackgroundThread::<T>&&, nsIThread*)", "mozilla::SpinEventLoopUntil"},
	})
}

func TestSocorroUtilsDropPrefixAndReturnType(t *testing.T) {
	checkEach(t, "dropPrefixAndReturnType", dropPrefixAndReturnType, []inWant{
		{"`anonymous namespace'::xClose", "`anonymous namespace'::xClose"},
		{"bool CCGraphBuilder::BuildGraph(class js::SliceBudget & const)", "CCGraphBuilder::BuildGraph(class js::SliceBudget & const)"},
		{"int nsHtml5Tokenizer::stateLoop<nsHtml5SilentPolicy>(int, char16_t, int, char16_t*, bool, int, int)", "nsHtml5Tokenizer::stateLoop<nsHtml5SilentPolicy>(int, char16_t, int, char16_t*, bool, int, int)"},
		{"js::ObjectGroup* DoCallback<js::ObjectGroup*>(JS::CallbackTracer*, js::ObjectGroup**, char const*)", "DoCallback<js::ObjectGroup*>(JS::CallbackTracer*, js::ObjectGroup**, char const*)"},
		{"js::Shape* js::Allocate<js::Shape, (js::AllowGC)1>(JSContext*)", "js::Allocate<js::Shape, (js::AllowGC)1>(JSContext*)"},
		{"long sandbox::TargetNtCreateFile( *, void * *, unsigned long, struct _OBJECT_ATTRIBUTES *, struct _IO_STATUS_BLOCK *, union _LARGE_INTEGER *, unsigned long, unsigned long, unsigned long, unsigned long, void *, unsigned long)", "sandbox::TargetNtCreateFile( *, void * *, unsigned long, struct _OBJECT_ATTRIBUTES *, struct _IO_STATUS_BLOCK *, union _LARGE_INTEGER *, unsigned long, unsigned long, unsigned long, unsigned long, void *, unsigned long)"},
		{"static `anonymous-namespace'::reflectStatus `anonymous namespace'::internal_ReflectHistogramAndSamples(struct JSContext *, class JS::Handle<JSObject *>, class base::Histogram *, const class base::Histogram::SampleSet & const)", "`anonymous namespace'::internal_ReflectHistogramAndSamples(struct JSContext *, class JS::Handle<JSObject *>, class base::Histogram *, const class base::Histogram::SampleSet & const)"},
		{"static bool `anonymous namespace'::TypeAnalyzer::specializePhis()", "`anonymous namespace'::TypeAnalyzer::specializePhis()"},
		{"static char * dtoa(struct DtoaState *, union U, int, int, int *, int *, char * *)", "dtoa(struct DtoaState *, union U, int, int, int *, int *, char * *)"},
		{"static class js::HashSet<js::Shape *,js::ShapeHasher,js::SystemAllocPolicy> * HashChildren(class js::Shape *, class js::Shape *)", "HashChildren(class js::Shape *, class js::Shape *)"},
		{"static class mozilla::dom::Element * GetPropagatedScrollbarStylesForViewport(class nsPresContext *, struct mozilla::ScrollbarStyles *)", "GetPropagatedScrollbarStylesForViewport(class nsPresContext *, struct mozilla::ScrollbarStyles *)"},
		{"static const class SkTMaskGamma<3,3,3> & const cached_mask_gamma(float, float, float)", "cached_mask_gamma(float, float, float)"},
		{"static short ssl_Poll(struct PRFileDesc *, short, short *)", "ssl_Poll(struct PRFileDesc *, short, short *)"},
		{"static struct already_AddRefed<nsIAsyncShutdownClient> `anonymous namespace'::GetShutdownPhase()", "`anonymous namespace'::GetShutdownPhase()"},
		{"static struct Index * sqlite3FindIndex(struct sqlite3 *, const char *, const char *)", "sqlite3FindIndex(struct sqlite3 *, const char *, const char *)"},
		{"static unsigned int pr_root(void *)", "pr_root(void *)"},
		{"static void * Allocator<MozJemallocBase>::malloc(unsigned __int64)", "Allocator<MozJemallocBase>::malloc(unsigned __int64)"},
		{"static void * * NewUNumberFormat(struct JSContext *, class JS::Handle<js::NumberFormatObject *>)", "NewUNumberFormat(struct JSContext *, class JS::Handle<js::NumberFormatObject *>)"},
		{"void mozilla::layers::MLGDeviceD3D11::~MLGDeviceD3D11()", "mozilla::layers::MLGDeviceD3D11::~MLGDeviceD3D11()"},
		{"void * arena_t::MallocSmall(unsigned int, bool)", "arena_t::MallocSmall(unsigned int, bool)"},
		{"bool prefs_parser::prefs_parser_parse(char *, prefs_parser::PrefValueKind, char *, unsigned __int64,  *,  *)", "prefs_parser::prefs_parser_parse(char *, prefs_parser::PrefValueKind, char *, unsigned __int64,  *,  *)"},
		{"float geckoservo::glue::Servo_AnimationValue_GetOpacity(struct style::gecko_bindings::structs::root::RawServoAnimationValue *)", "geckoservo::glue::Servo_AnimationValue_GetOpacity(struct style::gecko_bindings::structs::root::RawServoAnimationValue *)"},
		{"static <NoType> std::panicking::begin_panic<str*>(struct str*, struct (str*, u32, u32) *)", "std::panicking::begin_panic<str*>(struct str*, struct (str*, u32, u32) *)"},
		{"static core::result::Result style::properties::PropertyDeclaration::to_css(struct nsstring::nsAString *)", "style::properties::PropertyDeclaration::to_css(struct nsstring::nsAString *)"},
		{"static struct atomic_refcell::AtomicRefMut<style::data::ElementData> style::gecko::wrapper::{{impl}}::ensure_data(struct style::gecko::wrapper::GeckoElement *)", "style::gecko::wrapper::{{impl}}::ensure_data(struct style::gecko::wrapper::GeckoElement *)"},
		{"static union core::option::Option<usize> encoding_rs::Encoder::max_buffer_length_from_utf16_without_replacement(unsigned __int64)", "encoding_rs::Encoder::max_buffer_length_from_utf16_without_replacement(unsigned __int64)"},
		{"static unsigned __int64 style::gecko::pseudo_element::PseudoElement::index()", "style::gecko::pseudo_element::PseudoElement::index()"},
		{"static void alloc::boxed::{{impl}}::call_box<(),closure>(struct closure *, <NoType>)", "alloc::boxed::{{impl}}::call_box<(),closure>(struct closure *, <NoType>)"},
		{"static void core::option::expect_failed()", "core::option::expect_failed()"},
		{"struct style::gecko_bindings::sugar::ownership::Strong<style::gecko_bindings::structs::root::RawServoStyleSheetContents> geckoservo::glue::Servo_StyleSheet_Empty(style::gecko_bindings::structs::root::mozilla::css::SheetParsingMode)", "geckoservo::glue::Servo_StyleSheet_Empty(style::gecko_bindings::structs::root::mozilla::css::SheetParsingMode)"},
		{"unsigned int encoding_glue::mozilla_encoding_encode_from_utf16(struct encoding_rs::Encoding * *, unsigned short *, unsigned int, struct nsstring::nsACString *)", "encoding_glue::mozilla_encoding_encode_from_utf16(struct encoding_rs::Encoding * *, unsigned short *, unsigned int, struct nsstring::nsACString *)"},
		{"void geckoservo::glue::Servo_MaybeGCRuleTree(struct style::gecko_bindings::bindings::RawServoStyleSet *)", "geckoservo::glue::Servo_MaybeGCRuleTree(struct style::gecko_bindings::bindings::RawServoStyleSet *)"},
		{"[thunk]:CShellItem::QueryInterface`adjustor{12}' (_GUID const&, void**)", "[thunk]:CShellItem::QueryInterface`adjustor{12}' (_GUID const&, void**)"},
		{"nsXPConnect::InitStatics() [clone .cold.638]", "nsXPConnect::InitStatics() [clone .cold.638]"},
		{"js::AssertObjectIsSavedFrameOrWrapper(JSContext*, JS::Handle<JSObject*>) [clone .isra.234] [clone .cold.687]", "js::AssertObjectIsSavedFrameOrWrapper(JSContext*, JS::Handle<JSObject*>) [clone .isra.234] [clone .cold.687]"},
		{"(anonymous namespace)::EnqueueTask(already_AddRefed<nsIRunnable>, int)", "(anonymous namespace)::EnqueueTask(already_AddRefed<nsIRunnable>, int)"},
	})
}

// inWant is one case of a string function.
type inWant struct{ in, want string }

// checkEach runs f over the cases.
func checkEach(t *testing.T, name string, f func(string) string, cases []inWant) {
	t.Helper()
	for _, c := range cases {
		if got := f(c.in); got != c.want {
			t.Errorf("%s(%q) =\n%q, want\n%q", name, c.in, got, c.want)
		}
	}
}
