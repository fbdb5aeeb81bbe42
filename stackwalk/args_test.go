package stackwalk

import (
	"slices"
	"testing"
)

func TestParseX86ArgList(t *testing.T) {
	for _, c := range []struct {
		name   string
		member bool
		args   []string
		ok     bool
	}{
		{"c1(int, bool)", false, []string{"int", "bool"}, true},
		{"Guard::~Guard()", true, []string{""}, true}, // rust-minidump counts one, unnamed
		{"f(std::map<int, char>, void (*)(int, int))", false, []string{"std::map<int, char>", "void (*)(int, int)"}, true},
		{"main", false, nil, false},
		{"bad(a>b)", false, nil, false},
	} {
		member, args, ok := parseX86ArgList(c.name)
		if ok != c.ok || member != c.member || !slices.Equal(args, c.args) {
			t.Errorf("%s: %v %q %v, want %v %q %v", c.name, member, args, ok, c.member, c.args, c.ok)
		}
	}
}
