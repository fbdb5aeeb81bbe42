package web

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/crashd/sourcelink"
	"github.com/gobreakpad/gobreakpad/crashd/walk"
)

// TestReportFacts (issue 38): frames link their source (a configured
// rule; hg:/git: source-server paths shown as their path), on the report
// and signature pages and in their JSON; a hostile FILE record makes no
// link and nothing unescaped; build id, uptime and install age come from
// the annotations; the user's comments are shown to view_pii alone (page
// and JSON); a stack change recorded by a reprocess is marked.
func TestReportFacts(t *testing.T) {
	f := newFixture(t, false)
	links, err := sourcelink.New([]sourcelink.Rule{{Prefix: "/src/", URL: "https://git.example.com/app/blob/{version}/{path}#L{line}"}})
	if err != nil {
		t.Fatal(err)
	}
	f.webPart.cfg.SourceLinks = links
	ctx := context.Background()
	now := time.Now().UTC()
	id := crash.New(now, 0)
	const comment = "it crashed when I clicked <b>save</b>"
	raw := &crash.RawCrash{UUID: id, SubmittedTimestamp: now, Version: 2, Annotations: map[string]any{
		"ProductName": "App", "Version": "1.2", "BuildID": "20261129080000", "UptimeTS": "3725.5",
		"CrashTime": "1700000000", "InstallTime": "1699913600", "Comments": comment}}
	b, _ := raw.MarshalJSON()
	store := f.webPart.store
	store.Put(ctx, crash.RawCrashKey(id), b)
	hostileFile := `git:github.com/o/r:"><script>alert(1)</script>/a.c:rev"onmouseover="x`
	ct := 0
	frames := `[{"frame":0,"module":"app","function":"crash","file":"/src/net/http.c","line":42,"trust":"context","offset":"0x1",
	  "inlines":[{"function":"inl","file":"hg:hg.mozilla.org/mozilla-central:dom/base/Foo.cpp:abc123","line":7}]},
	 {"frame":1,"module":"app","function":"main","file":"git:github.com/rust-lang/rust:library/std/src/rt.rs:4d90ac38","line":9,"trust":"cfi","offset":"0x2"},
	 {"frame":2,"module":"app","function":"evil","file":` + jsonString(hostileFile) + `,"line":1,"trust":"cfi","offset":"0x3"},
	 {"frame":3,"module":"app","function":"js","file":"javascript:alert(1)","line":1,"trust":"cfi","offset":"0x4"}]`
	change := &crash.StackChange{At: now, PreviousSignature: "app@0x1", FirstSignature: "orig@0x0", Signature: "crash", PreviousFrames: []string{"app+0x1"}, Frames: []string{"app!crash+0x0"}}
	pc := &crash.ProcessedCrash{CrashID: id, ProductName: "App", Version: "1.2", Signature: "sig-links", CrashingThread: &ct, Success: true,
		JSONDump: json.RawMessage(`{"threads":[{"thread_id":1,"frames":` + frames + `}],"crashing_thread":{"thread_id":1,"frames":` + frames + `},"modules":[]}`), StackChange: change}
	b, _ = walk.Marshal(pc)
	store.Put(ctx, crash.ProcessedCrashKey(id), b)
	c := index.Crash{ID: string(id), ReceivedAt: now, ProcessedAt: now, Product: "App", Version: "1.2", OS: "Linux", Signature: "sig-links", Attempts: 1}
	if err := f.ix.Processed(ctx, c); err != nil {
		t.Fatal(err)
	}

	_, page := f.get(t, "/report/"+string(id), f.all)
	page = strings.ReplaceAll(page, "<wbr>", "") // paths break after "/" (brk)
	for _, want := range []string{
		`<a class="source" href="https://git.example.com/app/blob/1.2/net/http.c#L42" rel="noopener noreferrer nofollow">/src/net/http.c:42</a>`,
		`href="https://hg.mozilla.org/mozilla-central/file/abc123/dom/base/Foo.cpp#l7" rel="noopener noreferrer nofollow">dom/base/Foo.cpp:7</a>`,
		`href="https://github.com/rust-lang/rust/blob/4d90ac38/library/std/src/rt.rs#L9" rel="noopener noreferrer nofollow">library/std/src/rt.rs:9</a>`,
		`<dd id="build-id">20261129080000</dd>`, `<dd id="uptime">1 h 2 min`, "(UptimeTS)", `<dd id="install-age">1 d 0 h`, "(CrashTime - InstallTime)",
		`id="stack-changed-mark"`, `id="previous-signature">app@0x1</span>`, `id="first-signature">orig@0x0</span>`, "app+0x1", "app!crash+0x0",
		`id="user-comments">it crashed when I clicked &lt;b&gt;save&lt;/b&gt;</p>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report page (view_pii) lacks %q", want)
		}
	}
	// Hostile files: shown as text, never a link but http(s).
	if strings.Contains(page, "<script>") || strings.Contains(page, `"onmouseover`) {
		t.Error("report page: a hostile file name came out unescaped")
	}
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if u := m[1]; strings.Contains(u, ":") && !strings.HasPrefix(u, "https://") {
			t.Errorf("report page: link %q", u)
		}
	}
	var rep Report
	_, js := f.get(t, "/api/report/"+string(id), f.all)
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	fr := rep.Crashing.Frames
	if fr[0].SourceLink != "https://git.example.com/app/blob/1.2/net/http.c#L42" || fr[1].FileShown != "library/std/src/rt.rs" ||
		fr[0].Inlines[0].FileShown != "dom/base/Foo.cpp" || fr[3].SourceLink != "" || rep.UserComments != comment || rep.BuildID != "20261129080000" ||
		rep.UptimeSeconds == nil || *rep.UptimeSeconds != 3725.5 || rep.InstallAgeSeconds == nil || *rep.InstallAgeSeconds != 86400 ||
		rep.StackChange == nil || rep.StackChange.PreviousSignature != "app@0x1" {
		t.Errorf("JSON: frames %+v; facts %q %v %v %+v", fr, rep.BuildID, rep.UptimeSeconds, rep.InstallAgeSeconds, rep.StackChange)
	}
	if l := fr[2].SourceLink; l != "" && !strings.HasPrefix(l, "https://github.com/o/r/blob/") {
		t.Errorf("hostile file's link %q", l)
	}

	// A reader without view_pii sees no comment, in the page or the JSON
	// (the collector's personal_data need not restrict Comments).
	for _, p := range []string{"/report/" + string(id), "/api/report/" + string(id)} {
		status, body := f.get(t, p, f.reader)
		if status != 200 || strings.Contains(body, "clicked") {
			t.Errorf("%s as a reader: %d, comment shown: %v", p, status, strings.Contains(body, "clicked"))
		}
	}

	// The signature page's common stack links the same way.
	_, sig := f.get(t, "/signature?signature="+url.QueryEscape("sig-links"), f.reader)
	sig = strings.ReplaceAll(sig, "<wbr>", "")
	if !strings.Contains(sig, `href="https://git.example.com/app/blob/1.2/net/http.c#L42"`) || !strings.Contains(sig, ">library/std/src/rt.rs:9</a>") {
		t.Error("signature page: no source links in the common stack")
	}
	if strings.Contains(sig, "<script>") {
		t.Error("signature page: a hostile file name came out unescaped")
	}
}
