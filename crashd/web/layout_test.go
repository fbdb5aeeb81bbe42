package web

import (
	"html"
	"html/template"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gobreakpad/gobreakpad/crashd/index"
)

// renderPage executes a page's template over data as the handlers do.
func renderPage(t *testing.T, page string, data any, query url.Values) string {
	t.Helper()
	tm, err := parseTemplates()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := tm[page].ExecuteTemplate(&b, "layout", layout{Page: page, Query: query, Data: data}); err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	return b.String()
}

// TestLayoutHTML pins what docs/crashd.md "Layout" fixed, in the HTML:
// the filter menus ("any" selected by default, the crashes without a
// value never), offsets as Breakpad prints them, nouns agreeing with
// their counts, the count change in words, "new" once per row, and break
// opportunities in signatures.
func TestLayoutHTML(t *testing.T) {
	has := func(t *testing.T, page, html string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(html, w) {
				t.Errorf("%s lacks %q", page, w)
			}
		}
	}
	lacks := func(t *testing.T, page, html string, bad ...string) {
		t.Helper()
		for _, b := range bad {
			if strings.Contains(html, b) {
				t.Errorf("%s has %q", page, b)
			}
		}
	}
	now := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)

	t.Run("home", func(t *testing.T) {
		home := func(filter map[string]string, total int) string {
			return renderPage(t, "home", &HomeData{Period: 7, Filter: filter,
				Options: map[string][]index.Bucket{"cpu": {{Value: "amd64", Count: 4}, {Value: "", Count: 3}}},
				Top: index.Top{Total: total, Since: now.Add(-7 * 24 * time.Hour), Until: now, Rows: []index.TopRow{
					{Rank: 1, Signature: "Guard::~Guard(int, char)", Count: 9, New: true, FirstSeen: now},
					{Rank: 2, Signature: "f", Count: 2, PrevRank: 1, PrevCount: 5},
					{Rank: 3, Signature: "g", Count: 1, PrevCount: 0}}}}, nil)
		}
		h := home(map[string]string{}, 1)
		has(t, "home", h, `<select id="f-cpu" name="cpu"><option value="" selected>any</option>`,
			`<option value="amd64">amd64 (4)</option>`, `<option value="" disabled>(none) (3)</option>`,
			"1 crash from", "vs previous 7 days", "up 9 from 0", "down 3 from 5",
			"▼ 1", "returning", "Guard::<wbr>~Guard(<wbr>int,<wbr> char)")
		lacks(t, "home", h, "(was 0, rank", "rank —", "(3)</option><option value=\"\" selected")
		if n := strings.Count(h, ">new<"); n != 1 {
			t.Errorf("home: %d times \"new\", want 1 (one new row, said once)", n)
		}
		h = home(map[string]string{"cpu": "amd64"}, 2)
		has(t, "home cpu=amd64", h, `<option value="">any</option>`, `<option value="amd64" selected>amd64 (4)</option>`, "2 crashes from")
		h = home(map[string]string{"cpu": "arm64"}, 0)
		has(t, "home cpu=arm64", h, `<option value="">any</option>`, `<option value="arm64" selected>arm64</option>`, "0 crashes from")
		cpu := h[strings.Index(h, `<select id="f-cpu"`):]
		if cpu = cpu[:strings.Index(cpu, "</select>")]; strings.Count(cpu, " selected") != 1 {
			t.Errorf("home cpu=arm64: the cpu menu %s has not one option selected", cpu)
		}
	})

	t.Run("report", func(t *testing.T) {
		frames := []Frame{
			{N: 0, Module: "inline_chain", Function: "painter::Paint(grid::Grid*, int)", FunctionOffset: "0x0000000000000030", File: "/src/inline_chain.cc", Line: 12,
				Inlines: []Frame{{N: 0, Inline: true, Module: "inline_chain", Function: "grid::Poke", File: "/src/inline_grid.h", Line: 26, Trust: "inline"}}},
			{N: 1, Module: "libc.so.6", ModuleOffset: "0x0000000000027249", Offset: "0x00007f0000027249", Trust: "cfi"},
			{N: 2, Offset: "0x0000000000000000", Trust: "scan"},
		}
		h := renderPage(t, "report", &Report{CrashID: "x", Crashing: &Thread{Frames: frames},
			Threads: []Thread{{Index: 1, Frames: frames[:1]}}, MoreThreads: 1, MoreModules: 1, MoreNotes: 2, Notes: []string{"n"}}, url.Values{})
		has(t, "report", h, `<span class="off">+0x30</span>`, `<span class="off">+0x27249</span>`, `<span class="off">0x0</span>`,
			"painter::<wbr>Paint(<wbr>grid::<wbr>Grid*,<wbr> int)", "/<wbr>src/<wbr>inline_chain.cc:12",
			`<tbody><tr class="inline"><td class="num">0</td>`, "1 frame</summary>", "1 more thread not shown", "1 more module not shown", "2 more notes not shown")
		lacks(t, "report", h, "000000", "1 frames", "1 more threads")
	})

	t.Run("signature", func(t *testing.T) {
		h := renderPage(t, "signature", &SignatureData{Signature: "Guard::~Guard", Period: 7, Count: 1,
			Stack: &Stack{Frames: []string{"m!f", "m+0x0000000000001234"}, Crashes: 1, Sampled: 1}}, url.Values{})
		has(t, "signature", h, "<li>m+0x1234</li>", "1 of the 1 newest crash.", "Guard::<wbr>~Guard")
		lacks(t, "signature", h, "0x0000000000001234")
	})

	t.Run("search", func(t *testing.T) {
		for n, want := range map[int]string{0: "0</span> crashes", 1: "1</span> crash in", 2: "2</span> crashes"} {
			h := renderPage(t, "search", &SearchData{Query: map[string]string{}, Total: n, Limit: 50,
				Rows: []index.Row{{Crash: index.Crash{ID: "x", Signature: "Guard::~Guard"}}}}, url.Values{})
			has(t, "search", h, want, `<td class="sig"><a href="/signature?signature=Guard%3A%3A~Guard">Guard::<wbr>~Guard</a></td>`)
		}
	})
}

func TestLayoutHelpers(t *testing.T) {
	for in, want := range map[string]string{"0x000000000000005e": "0x5e", "0x0000000000000000": "0x0", "0x7fff00001234": "0x7fff00001234",
		"0x": "0x", "0xzz": "0xzz", "": "", "5e": "5e"} {
		if got := hexOff(in); got != want {
			t.Errorf("hexOff(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"m+0x000000000000abcd": "m+0x abcd", "m!f": "m!f", "a+b+0x00000001": "a+b+0x1"} {
		if got := hexTail(in); got != strings.ReplaceAll(want, " ", "") {
			t.Errorf("hexTail(%q) = %q, want %q", in, got, want)
		}
	}
	if got := noun(1, "crash", "crashes") + noun(0, "crash", "crashes") + noun(2, "crash", "crashes"); got != "crashcrashescrashes" {
		t.Errorf("noun: %q", got)
	}
	// A run without a joint gets a break every breakRun characters;
	// text is escaped; spaces reset the run.
	got := string(breakable(strings.Repeat("W", 70) + " <b>\"x\"</b>"))
	want := strings.Repeat("W", 32) + "<wbr>" + strings.Repeat("W", 32) + "<wbr>WWWWWW &lt;b&gt;&#34;x&#34;&lt;/<wbr>b&gt;"
	if got != want {
		t.Errorf("breakable:\n got %s\nwant %s", got, want)
	}
	m := menu([]index.Bucket{{Value: "", Count: 3}, {Value: "a\x01", Count: 1}}, "")
	if len(m) != 3 || !m[0].Selected || m[1].Selected || !m[1].Disabled || m[1].Label != "(none) (3)" || m[2].Label != `a\u0001 (1)` {
		t.Errorf("menu: %+v", m)
	}
}

// BenchmarkBreakable: a C++ signature as the pages write it, and a
// 64 KiB name (cut at 2,000 characters).
func BenchmarkBreakable(b *testing.B) {
	for _, c := range []struct{ name, s string }{
		{"signature", "mozilla::dom::Guard<int>::~Guard(mozilla::dom::Element*, unsigned long) | js::RunScript"},
		{"64KiB", strings.Repeat("W", 64<<10)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				breakable(c.s)
			}
		})
	}
}

// FuzzBreakable: breakable is the template's escaping of clip(s) with
// only <wbr> added, and never lets more than breakRun characters go
// without a break.
func FuzzBreakable(f *testing.F) {
	f.Add("Guard::~Guard(int, char)")
	f.Add("<script>\x00\"'&\xff" + strings.Repeat("W", 100))
	f.Fuzz(func(t *testing.T, s string) {
		got := string(breakable(s))
		if want := template.HTMLEscapeString(clip(s)); strings.ReplaceAll(got, "<wbr>", "") != want {
			t.Fatalf("breakable(%q) = %q, escaped %q", s, got, want)
		}
		for _, part := range strings.Split(got, "<wbr>") {
			for _, w := range strings.Fields(html.UnescapeString(part)) {
				if n := utf8.RuneCountInString(w); n > breakRun {
					t.Fatalf("breakable(%q): %d characters without a break: %q", s, n, w)
				}
			}
		}
	})
}
