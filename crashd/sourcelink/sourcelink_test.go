package sourcelink

import (
	"net/url"
	"strings"
	"testing"
)

// TestSourceServerPaths: the hg:/git: paths of Mozilla's dump_syms, with
// the inputs of Socorro's tests (webapp/crashstats/crashstats/tests/test_utils.py,
// socorro/signature/tests, socorro/tests/processor/rules/test_breakpad.py)
// and the links Crash Stats' VCS_MAPPINGS make of them.
func TestSourceServerPaths(t *testing.T) {
	sha := strings.Repeat("36d62ce2ec2925f4", 8) // 128 hex digits
	for _, c := range []struct {
		file       string
		line       int
		show, link string
	}{
		{"hg:hg.mozilla.org/releases/mozilla-release:memory/mozjemalloc/jemalloc.c:44234f451065", 1234,
			"memory/mozjemalloc/jemalloc.c", "https://hg.mozilla.org/releases/mozilla-release/file/44234f451065/memory/mozjemalloc/jemalloc.c#l1234"},
		{"hg:hg.mozilla.org/releases/mozilla-esr52:js/src/jit/MIR.h:755067c14b06", 7,
			"js/src/jit/MIR.h", "https://hg.mozilla.org/releases/mozilla-esr52/file/755067c14b06/js/src/jit/MIR.h#l7"},
		{"git:github.com/rust-lang/rust:src/libstd/panicking.rs:91856ed52c58aa5ba66a015354d1cc69e9779bdf", 576,
			"src/libstd/panicking.rs", "https://github.com/rust-lang/rust/blob/91856ed52c58aa5ba66a015354d1cc69e9779bdf/src/libstd/panicking.rs#L576"},
		{"git:github.com/rust-lang/rust:src/libcore/cmp.rs:4d90ac38c0b61bb69470b61ea2cccea0df48d9e5", 1,
			"src/libcore/cmp.rs", "https://github.com/rust-lang/rust/blob/4d90ac38c0b61bb69470b61ea2cccea0df48d9e5/src/libcore/cmp.rs#L1"},
		{"git:gitlab.com/group/sub/proj:src/a b.c:abc", 3, "src/a b.c", "https://gitlab.com/group/sub/proj/-/blob/abc/src/a%20b.c#L3"},
		// Crash Stats shows "fname" for a VCS it has no mapping for; we
		// show the path in the repository, unlinked.
		{"git:git.m.org/repo/name:dname/fname:rev", 576, "dname/fname", ""},
		{"hg:hg.m.org/repo/name:dname/fname:rev", 576, "dname/fname", ""},
		// Generated sources: the SHA-512 directory is not shown; no link
		// (Crash Stats links its own /sources/highlight/ page).
		{"s3:gecko-generated-sources:" + sha + "/ipc/ipdl/PCompositorBridgeChild.cpp:", 1495, "ipc/ipdl/PCompositorBridgeChild.cpp", ""},
		// No line, no revision, no repository: no link.
		{"hg:hg.mozilla.org/mozilla-central:a.c:rev", 0, "a.c", ""},
		{"hg:hg.mozilla.org/mozilla-central:a.c:", 3, "a.c", ""},
		{"hg:hg.mozilla.org:a.c:rev", 3, "a.c", ""},
		// Not source-server paths.
		{"/foo/bar/file.c", 576, "/foo/bar/file.c", ""},
		{`c:\build\src\a.cpp`, 9, `c:\build\src\a.cpp`, ""},
		{"hg:hg.mozilla.org/000", 9, "hg:hg.mozilla.org/000", ""},
	} {
		show, link := (*Linker)(nil).Link(Frame{File: c.file, Line: c.line})
		if show != c.show || link != c.link {
			t.Errorf("%s line %d:\n got %q %q\nwant %q %q", c.file, c.line, show, link, c.show, c.link)
		}
	}
}

// TestRules: configured rules and their placeholders, checked at New.
func TestRules(t *testing.T) {
	l, err := New([]Rule{
		{Prefix: "/src/", URL: "https://git.example.com/app/blob/{version}/{path}#L{line}"},
		{Prefix: `c:\build\`, URL: "https://src.example.com/{product}/{version}/{path}?line={line}"},
		{Prefix: "hg:hg.example.com/", URL: "http://h.example.com/x/{path}#{line}"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		f          Frame
		show, link string
	}{
		{Frame{File: "/src/net/http.c", Line: 42, Version: "1.2.3", Product: "App"}, "/src/net/http.c", "https://git.example.com/app/blob/1.2.3/net/http.c#L42"},
		{Frame{File: `c:\build\ui\Window.cpp`, Line: 7, Version: "2.0 beta", Product: "My App"}, `c:\build\ui\Window.cpp`, "https://src.example.com/My%20App/2.0%20beta/ui/Window.cpp?line=7"},
		// The first matching rule wins over the built-in ones.
		{Frame{File: "hg:hg.example.com/r:a/b.c:rev", Line: 1}, "a/b.c", "http://h.example.com/x/r%3Aa/b.c%3Arev#1"},
		// Values cannot leave their place: "?", "#", "/" in the version
		// are escaped; ".." segments give no link.
		{Frame{File: "/src/a.c", Line: 1, Version: "1/../../x?y#z"}, "/src/a.c", "https://git.example.com/app/blob/1%2F..%2F..%2Fx%3Fy%23z/a.c#L1"},
		{Frame{File: "/src/../../etc/passwd", Line: 1}, "/src/../../etc/passwd", ""},
		{Frame{File: "/src/a.c", Line: 0}, "/src/a.c", ""},
		{Frame{File: "/other/a.c", Line: 3}, "/other/a.c", ""},
	} {
		show, link := l.Link(c.f)
		if show != c.show || link != c.link {
			t.Errorf("%+v:\n got %q %q\nwant %q %q", c.f, show, link, c.show, c.link)
		}
	}
	for _, bad := range []Rule{
		{Prefix: "", URL: "https://x.example/{path}"},
		{Prefix: "/", URL: "javascript:alert(1)//{path}"},
		{Prefix: "/", URL: "ftp://x.example/{path}"},
		{Prefix: "/", URL: "https://{product}.example/{path}"},
		{Prefix: "/", URL: "https://x.example/{file}"},
		{Prefix: "/", URL: "https://x.example/{path"},
		{Prefix: "/", URL: "//x.example/{path}"},
		{Prefix: "/", URL: "https://user@x.example/{path}"},
	} {
		if _, err := New([]Rule{bad}); err == nil {
			t.Errorf("rule %+v accepted", bad)
		}
	}
}

// TestHostileFiles: a symbol file's FILE records (hostile by assumption)
// never make a link but http(s) to the template's host, with nothing
// unescaped that could end an attribute.
func TestHostileFiles(t *testing.T) {
	l, err := New([]Rule{{Prefix: "/src/", URL: "https://git.example.com/app/blob/{version}/{path}#L{line}"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{
		`hg:javascript:alert(1)//:x`,
		`git:github.com/o/r:"><script>alert(1)</script>:rev`,
		`git:github.com/o/r:a.c:rev"onmouseover="alert(1)`,
		`git:github.com/../../evil.example/x:a.c:rev`,
		`git:github.com@evil.example/o/r:a.c:rev`,
		`git:github.com/o/r:../../../evil/a.c:rev`,
		"git:github.com/o/r:a\x00\n\u202e.c:rev#x?y",
		`/src/"><img src=x onerror=alert(1)>`,
		`/src/a.c#@evil.example`,
		`/src//\evil.example/a.c`,
	} {
		_, link := l.Link(Frame{File: file, Line: 1, Version: `"'<>`})
		if link == "" {
			continue
		}
		u, err := url.Parse(link)
		if err != nil || u.Scheme != "https" || (u.Host != "github.com" && u.Host != "git.example.com") || u.User != nil {
			t.Errorf("%q: link %q", file, link)
		}
		if strings.ContainsAny(link, "\"'<> \x00\n\\") || strings.Contains(link, "..") {
			t.Errorf("%q: link %q holds unescaped bytes or a dot segment", file, link)
		}
	}
}

func FuzzLink(f *testing.F) {
	f.Add("hg:hg.mozilla.org/mozilla-central:dom/a.cpp:abc", 3, "1.0")
	f.Add("git:github.com/o/r:src/a.rs:abc", 1, "")
	f.Add("/src/a/b.c", 10, "2.0")
	l, err := New([]Rule{{Prefix: "/src/", URL: "https://git.example.com/{product}/{version}/{path}#L{line}"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, file string, line int, version string) {
		_, link := l.Link(Frame{File: file, Line: line, Version: version, Product: version})
		if link == "" {
			return
		}
		u, err := url.Parse(link)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil {
			t.Fatalf("%q: link %q", file, link)
		}
		switch u.Host {
		case "git.example.com", "github.com", "gitlab.com", "hg.mozilla.org":
		default:
			t.Fatalf("%q: link %q to host %q", file, link, u.Host)
		}
		if strings.ContainsAny(link, "\"'<> \\") {
			t.Fatalf("%q: link %q holds unescaped bytes", file, link)
		}
	})
}

// BenchmarkLink: one frame's link (a report page makes one per frame
// shown: up to 200 threads of frames).
func BenchmarkLink(b *testing.B) {
	l, err := New([]Rule{{Prefix: "/src/", URL: "https://git.example.com/app/blob/{version}/{path}#L{line}"}})
	if err != nil {
		b.Fatal(err)
	}
	frames := []Frame{
		{File: "/src/net/http/transport.c", Line: 1234, Version: "1.2.3"},
		{File: "hg:hg.mozilla.org/releases/mozilla-release:memory/mozjemalloc/jemalloc.c:44234f451065", Line: 99},
		{File: "/usr/include/c++/12/bits/stl_vector.h", Line: 7},
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		l.Link(frames[i%len(frames)])
	}
}
