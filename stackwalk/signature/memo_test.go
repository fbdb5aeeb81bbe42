package signature

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestMatcherRemembers: a matcher answers as its expression does, from
// memory the second time, past its bound (it starts over) and for strings
// too long to remember.
func TestMatcherRemembers(t *testing.T) {
	g := Default()
	long := strings.Repeat("x", memoKeyMax) + "abort"
	names := []string{"abort", "raise", "__GI_raise", "main", "RtlUserThreadStart", "mozalloc_abort(char const*)",
		"free", "", "operator new(unsigned long)", long}
	for pass := range 2 {
		for _, m := range []*matcher{g.irrelevant, g.prefix, g.lineNumbers, g.oom} {
			for _, s := range names {
				if got, want := m.MatchString(s), m.re.MatchString(s); got != want {
					t.Fatalf("pass %d: %q: matcher says %v, the expression %v", pass, s, got, want)
				}
			}
			if len(m.seen) > memoEntries {
				t.Fatalf("%d answers remembered, bound %d", len(m.seen), memoEntries)
			}
		}
	}
	if !g.irrelevant.MatchString("__GI_raise") || g.irrelevant.MatchString("main") {
		t.Error("the default irrelevant list does not say __GI_raise is irrelevant and main is not")
	}
	// Past the bound: it starts over, answers unchanged.
	m, err := newMatcher(regexp.Compile(`^fn1`))
	if err != nil {
		t.Fatal(err)
	}
	for pass := range 2 {
		for i := range memoEntries + 10 {
			s := fmt.Sprintf("fn%d", i)
			if got, want := m.MatchString(s), strings.HasPrefix(s, "fn1"); got != want {
				t.Fatalf("pass %d: %q: %v, want %v", pass, s, got, want)
			}
			if len(m.seen) > memoEntries {
				t.Fatalf("%d answers remembered, bound %d", len(m.seen), memoEntries)
			}
		}
	}
	var none *matcher
	if none.MatchString("abort") {
		t.Error("a nil matcher matched")
	}
}
