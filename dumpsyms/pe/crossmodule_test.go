package pe

import (
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// TestCrossModuleNames: symbolic's crash.pdb (MSVC, link-time code
// generation) names the functions inlined from other modules by
// cross-module item indices (0x8000xxxx), which read through the modules'
// DEBUG_S_CROSSSCOPEIMPORTS/EXPORTS as pdb-addr2line reads them for
// Mozilla's dump_syms; before, 16 INLINE_ORIGIN records were
// "<missing type 0x8000xxxx>".
func TestCrossModuleNames(t *testing.T) {
	text := dumpText(t, corpus.File(t, "windows/symbolic/crash.pdb"), dumpsyms.Options{Inlines: true})
	origins := 0
	for l := range strings.SplitSeq(text, "\n") {
		if !strings.HasPrefix(l, "INLINE_ORIGIN ") {
			continue
		}
		origins++
		if strings.Contains(l, "<missing type") {
			t.Errorf("unresolved: %s", l)
		}
	}
	if origins != 134 {
		t.Errorf("%d INLINE_ORIGIN records, want 134", origins)
	}
	for _, want := range []string{
		" std::basic_string<wchar_t,std::char_traits<wchar_t>,std::allocator<wchar_t> >::c_str() const\n",
		" std::_WChar_traits<wchar_t>::length(wchar_t const*)\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no INLINE_ORIGIN%s", strings.TrimSuffix(want, "\n"))
		}
	}
}
