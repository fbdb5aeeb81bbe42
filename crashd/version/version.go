// Package version orders product versions, for the triage states of
// crashd's signatures: a crash regresses a signature resolved in version
// F when its version is F or later (crashd/index).
//
// Three orders, chosen per product in the configuration:
//
//   - [Mozilla] (the default): Mozilla's version comparator
//     (nsVersionComparator, Services.vc.compare). A version is parts
//     separated by '.'; each part is <number-a><string-b><number-c><string-d>,
//     each piece optional. Missing numbers are 0, a missing string sorts
//     after every present one (so a pre-release is below its release:
//     2.0b3 < 2.0), strings compare bytewise, missing parts are 0 (1.0 ==
//     1.0.0), a part "*" is above every number, and a part "N+" is
//     "(N+1)pre" (Mozilla's old spelling: 1.0+ == 1.1pre).
//     1.0a1 < 1.0b1 < 1.0b2 < 1.0pre < 1.0 < 1.0.1 < 1.1.
//   - [Semver]: Semantic Versioning 2.0.0's precedence (an optional
//     leading 'v'; build metadata ignored); strings that are not semantic
//     versions sort below every one that is, bytewise among themselves.
//   - [String]: bytewise.
//
// Every order takes any bytes: no input panics, numbers of any length
// compare by value without overflow, and the time is linear in the
// lengths. Different spellings may compare equal (1.0 and 1.00 in
// Mozilla's order); each order is otherwise total and deterministic.
package version

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Order is a version ordering.
type Order string

// The orders.
const (
	Mozilla Order = "mozilla"
	Semver  Order = "semver"
	String  Order = "string"
)

// Orders are the known orders, the default first.
var Orders = []Order{Mozilla, Semver, String}

// ParseOrder reads an order's name ("" is Mozilla).
func ParseOrder(s string) (Order, error) {
	if s == "" {
		return Mozilla, nil
	}
	if slices.Contains(Orders, Order(s)) {
		return Order(s), nil
	}
	return "", fmt.Errorf("version order %q: one of mozilla, semver, string", s)
}

// Compare returns -1, 0 or +1 as a is below, equal to or above b in the
// order o (an unknown order compares as Mozilla).
func (o Order) Compare(a, b string) int {
	switch o {
	case String:
		return strings.Compare(a, b)
	case Semver:
		return CompareSemver(a, b)
	}
	return CompareMozilla(a, b)
}

// CompareMozilla compares two versions as Mozilla's version comparator.
func CompareMozilla(a, b string) int {
	for a != "" || b != "" {
		var pa, pb string
		pa, a = cutPart(a)
		pb, b = cutPart(b)
		if c := comparePart(parsePart(pa), parsePart(pb)); c != 0 {
			return c
		}
	}
	return 0
}

func cutPart(s string) (part, rest string) {
	part, rest, _ = strings.Cut(s, ".")
	return part, rest
}

// part is one dotted part: numbers as decimal digit strings without
// leading zeros ("" is 0), inf marking number-a "*"; strings with has*
// false when missing (sorting after every present one).
type part struct {
	a    string
	inf  bool
	b    string
	hasB bool
	c    string
	d    string
	hasD bool
}

func parsePart(s string) part {
	var p part
	if s == "" {
		return p
	}
	if s == "*" {
		p.inf = true
		return p
	}
	p.a, s = cutNumber(s)
	if s == "+" {
		// "N+" is "(N+1)pre".
		p.a = increment(p.a)
		p.b, p.hasB = "pre", true
		return p
	}
	p.b, s = cutString(s)
	p.hasB = p.b != ""
	p.c, s = cutNumber(s)
	p.d, p.hasD = s, s != ""
	return p
}

// cutNumber takes the leading decimal digits of s (a sign as strtol
// would take is part of the string, as garbage), without leading zeros.
func cutNumber(s string) (num, rest string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return strings.TrimLeft(s[:i], "0"), s[i:]
}

// cutString takes the leading non-digits of s.
func cutString(s string) (str, rest string) {
	i := 0
	for i < len(s) && (s[i] < '0' || s[i] > '9') {
		i++
	}
	return s[:i], s[i:]
}

// increment adds one to a digit string without leading zeros.
func increment(n string) string {
	b := []byte(n)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < '9' {
			b[i]++
			return string(b)
		}
		b[i] = '0'
	}
	return "1" + string(b)
}

// compareNumber compares digit strings without leading zeros by value.
func compareNumber(a, b string) int {
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// compareString compares strings where a missing one is above every
// present one.
func compareString(a string, hasA bool, b string, hasB bool) int {
	switch {
	case hasA && hasB:
		return strings.Compare(a, b)
	case hasA:
		return -1
	case hasB:
		return 1
	}
	return 0
}

func comparePart(x, y part) int {
	switch {
	case x.inf && y.inf:
	case x.inf:
		return 1
	case y.inf:
		return -1
	default:
		if c := compareNumber(x.a, y.a); c != 0 {
			return c
		}
	}
	if c := compareString(x.b, x.hasB, y.b, y.hasB); c != 0 {
		return c
	}
	if c := compareNumber(x.c, y.c); c != 0 {
		return c
	}
	return compareString(x.d, x.hasD, y.d, y.hasD)
}

// semver is a parsed semantic version.
type semver struct {
	core [3]string // digit strings without leading zeros
	pre  []string  // pre-release identifiers (nil: a release)
}

// parseSemver reads MAJOR.MINOR.PATCH[-PRE][+BUILD] with an optional
// leading 'v'.
func parseSemver(s string) (semver, bool) {
	var v semver
	s = strings.TrimPrefix(s, "v")
	s, _, _ = strings.Cut(s, "+")
	core, pre, hasPre := strings.Cut(s, "-")
	nums := strings.Split(core, ".")
	if len(nums) != 3 {
		return v, false
	}
	for i, n := range nums {
		if !digits(n) || (len(n) > 1 && n[0] == '0') {
			return v, false
		}
		v.core[i] = strings.TrimLeft(n, "0")
	}
	if hasPre {
		v.pre = strings.Split(pre, ".")
		for _, id := range v.pre {
			if id == "" {
				return v, false
			}
			for i := 0; i < len(id); i++ {
				c := id[i]
				if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-') {
					return v, false
				}
			}
		}
	}
	return v, true
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// CompareSemver compares two versions by Semantic Versioning's
// precedence; what is not a semantic version sorts below every semantic
// version, bytewise among themselves.
func CompareSemver(a, b string) int {
	va, okA := parseSemver(a)
	vb, okB := parseSemver(b)
	switch {
	case !okA && !okB:
		return strings.Compare(a, b)
	case !okA:
		return -1
	case !okB:
		return 1
	}
	for i := range va.core {
		if c := compareNumber(va.core[i], vb.core[i]); c != 0 {
			return c
		}
	}
	switch {
	case va.pre == nil && vb.pre == nil:
		return 0
	case va.pre == nil:
		return 1
	case vb.pre == nil:
		return -1
	}
	for i := 0; i < len(va.pre) && i < len(vb.pre); i++ {
		x, y := va.pre[i], vb.pre[i]
		nx, ny := digits(x), digits(y)
		var c int
		switch {
		case nx && ny:
			c = compareNumber(strings.TrimLeft(x, "0"), strings.TrimLeft(y, "0"))
		case nx:
			c = -1
		case ny:
			c = 1
		default:
			c = strings.Compare(x, y)
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(len(va.pre), len(vb.pre))
}
