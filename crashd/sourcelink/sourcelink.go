// Package sourcelink turns a stack frame's source file and line into a
// link to the source, as crashd's report and signature pages show them:
// by configured rules (a file prefix and a URL template) and, without
// configuration, by the source-server paths Mozilla's dump_syms writes
// into FILE records ("hg:hg.mozilla.org/mozilla-central:dom/base/Foo.cpp:REV",
// "git:github.com/rust-lang/rust:library/std/src/panicking.rs:REV"), read
// as Socorro's Crash Stats reads them (webapp/crashstats/crashstats/utils.py,
// enhance_frame, and settings' VCS_MAPPINGS).
//
// File names come from symbol files, which anyone holding an upload token
// writes: a link is only ever an absolute http or https URL whose scheme
// and host are those of a trusted template (a configured rule's or a
// built-in one), every value put into it percent-escaped, and a path with
// a "." or ".." segment gets no link.
package sourcelink

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Rule is a configured source link: a frame whose file starts with Prefix
// links to URL with its placeholders filled: {path} (the file without
// Prefix, backslashes made slashes), {line}, {version} and {product} (the
// crash's product version and name).
type Rule struct {
	Prefix string `json:"prefix"`
	URL    string `json:"url"`
}

// Placeholders are the placeholders a Rule's URL may hold.
var Placeholders = []string{"{path}", "{line}", "{version}", "{product}"}

// Frame is what a link is made of: a frame's file and line and its
// crash's product and version.
type Frame struct {
	File    string
	Line    int
	Product string
	Version string
}

// Linker makes the links of frames. The zero Linker (and a nil one) has no
// configured rules and links source-server paths only.
type Linker struct {
	rules []compiled
}

// compiled is a rule with its URL cut at its placeholders.
type compiled struct {
	Rule
	// parts alternate literal text (even indexes) and placeholders (odd
	// indexes, each one of Placeholders).
	parts []string
}

// compile cuts a rule's URL template at its placeholders, refusing an
// unclosed or unknown one.
func compile(r Rule) (compiled, error) {
	c := compiled{Rule: r}
	rest := r.URL
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return c, fmt.Errorf("url %q: an unclosed {", r.URL)
		}
		name := rest[i : i+j+1]
		if !slices.Contains(Placeholders, name) {
			return c, fmt.Errorf("url %q: unknown placeholder %s (known: %s)", r.URL, name, strings.Join(Placeholders, " "))
		}
		c.parts = append(c.parts, rest[:i], name)
		rest = rest[i+j+1:]
	}
	c.parts = append(c.parts, rest)
	return c, nil
}

// fill writes the template with its placeholders replaced by values
// already escaped.
func (c compiled) fill(path, line, version, product string) string {
	var b strings.Builder
	b.Grow(len(c.URL) + len(path) + len(version) + len(product) + 8)
	for i, p := range c.parts {
		if i%2 == 0 {
			b.WriteString(p)
			continue
		}
		switch p {
		case "{path}":
			b.WriteString(path)
		case "{line}":
			b.WriteString(line)
		case "{version}":
			b.WriteString(version)
		case "{product}":
			b.WriteString(product)
		}
	}
	return b.String()
}

// New checks rules and returns their Linker: each needs a prefix and an
// absolute http or https URL whose scheme and host hold no placeholder and
// which holds no placeholder but Placeholders.
func New(rules []Rule) (*Linker, error) {
	l := &Linker{}
	for i, r := range rules {
		c, err := check(r)
		if err != nil {
			return nil, fmt.Errorf("source_links[%d]: %w", i, err)
		}
		l.rules = append(l.rules, c)
	}
	return l, nil
}

// check compiles r, refusing a rule whose links could leave its host.
func check(r Rule) (compiled, error) {
	if r.Prefix == "" {
		return compiled{}, fmt.Errorf("no prefix")
	}
	c, err := compile(r)
	if err != nil {
		return c, err
	}
	scheme, after, ok := strings.Cut(r.URL, "://")
	if !ok || (scheme != "http" && scheme != "https") {
		return c, fmt.Errorf("url %q: not an http:// or https:// URL", r.URL)
	}
	host, _, _ := strings.Cut(after, "/")
	if host == "" || strings.ContainsAny(host, "{}?#@") {
		return c, fmt.Errorf("url %q: the host must be written out (no placeholder, user or query before the path)", r.URL)
	}
	if _, err := url.Parse(c.fill("p", "1", "v", "x")); err != nil {
		return c, fmt.Errorf("url %q: %w", r.URL, err)
	}
	return c, nil
}

// Link returns the file of f as a page shows it and the link to its line
// ("" for none): the first configured rule whose prefix f.File starts
// with, else the built-in rules for source-server paths (SourcePath). A
// source-server path is shown as its path in the repository whether or
// not it is linked. A frame without a line gets no link.
func (l *Linker) Link(f Frame) (display, href string) {
	display = f.File
	sp, isSP := ParseSourcePath(f.File)
	if isSP {
		display = sp.Display()
	}
	if f.File == "" || f.Line <= 0 {
		return display, ""
	}
	line := strconv.Itoa(f.Line)
	if l != nil {
		for _, r := range l.rules {
			rest, ok := strings.CutPrefix(f.File, r.Prefix)
			if !ok {
				continue
			}
			path, ok := escapePath(strings.ReplaceAll(rest, `\`, "/"))
			if !ok {
				return display, ""
			}
			return display, safe(r.fill(path, line, escapeSegment(f.Version), escapeSegment(f.Product)))
		}
	}
	if isSP {
		return display, sp.URL(f.Line)
	}
	return display, ""
}

// safe returns u when it parses as an absolute http or https URL with a
// host, else "" (a last check: templates are checked by New and values
// escaped).
func safe(u string) string {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.User != nil {
		return ""
	}
	return u
}

// unreserved reports whether c needs no escaping anywhere in a URL
// (RFC 3986's unreserved characters).
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

const hexDigits = "0123456789ABCDEF"

// escapeSegment percent-escapes every byte of s but the unreserved ones:
// the value can neither end a path segment nor start a query or fragment.
func escapeSegment(s string) string {
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		clean = unreserved(s[i])
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// escapePath escapes each "/"-separated segment of p; false when a
// segment is "." or ".." (a link that would leave the directory its
// template names) or p is empty.
func escapePath(p string) (string, bool) {
	p = strings.TrimLeft(p, "/")
	if p == "" {
		return "", false
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if s == "." || s == ".." {
			return "", false
		}
		segs[i] = escapeSegment(s)
	}
	return strings.Join(segs, "/"), true
}
