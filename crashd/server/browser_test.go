package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/collector"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// chromiumPath returns Debian's chromium ($GOBREAKPAD_CHROMIUM, else
// /usr/bin/chromium), skipping the test without it.
func chromiumPath(t *testing.T) string {
	p := os.Getenv("GOBREAKPAD_CHROMIUM")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(p); err != nil {
		t.Skipf("no Chromium at %s (apt-get install chromium, or set GOBREAKPAD_CHROMIUM): skipping the browser test", p)
	}
	return p
}

// newBrowser starts a headless Chromium with a fresh profile; the
// returned context runs actions in its one tab. Cleanup stops it.
func newBrowser(t *testing.T, path string) context.Context {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 900),
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		bcancel()
		acancel() // stops the browser process it started
	})
	if err := chromedp.Do(bctx); err != nil {
		t.Skipf("Chromium at %s does not start: %v", path, err)
	}
	return bctx
}

// hostile is the payload put into function names and annotations: each
// part would run script if it reached the page unescaped.
const hostile = `<script>window.__pwned=1</script>"'><img src=x onerror="window.__pwned=2"><svg onload="window.__pwned=3">` + "\x01\x1b[31m\u202e"

// hostileSymbols copies test_app.pdb's symbols (minidump2.dmp's) with
// every function named hostile, and one 64 KiB name, and every FILE
// record a hostile source-server path (hg:, git:) or a javascript: URL.
func hostileSymbols(t *testing.T, corpusDir string) string {
	src, err := filepath.Glob(filepath.Join(corpusDir, "breakpad/processor/symbols/test_app.pdb/*/test_app.sym"))
	if err != nil || len(src) != 1 {
		t.Skipf("corpus: test_app.sym: %v", err)
	}
	b, err := os.ReadFile(src[0])
	if err != nil {
		t.Fatal(err)
	}
	id := filepath.Base(filepath.Dir(src[0]))
	dir := t.TempDir()
	out := filepath.Join(dir, "test_app.pdb", id)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if f := strings.SplitN(line, " ", 5); f[0] == "FUNC" && len(f) == 5 {
			name := fmt.Sprintf("f%d%s", n, hostile)
			if n%2 == 1 {
				name += strings.Repeat("W", 64<<10)
			}
			n++
			line = strings.Join(f[:4], " ") + " " + name
		}
		if f := strings.SplitN(line, " ", 3); f[0] == "FILE" && len(f) == 3 {
			switch n, _ := strconv.Atoi(f[1]); n % 3 {
			case 0:
				f[2] = "git:github.com/o/r:src/" + hostile + ".cc:rev"
			case 1:
				f[2] = "hg:hg.mozilla.org/mozilla-central:" + hostile + "/a.cpp:rev\"onmouseover=\"window.__pwned=4"
			default:
				f[2] = "javascript:window.__pwned=5//" + hostile
			}
			line = strings.Join(f, " ")
		}
		w.WriteString(line + "\n")
	}
	if err := os.WriteFile(filepath.Join(out, "test_app.sym"), w.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestBrowser drives Debian's Chromium through crashd's pages over crashes
// uploaded to the real collector and processed: top crashers → signature
// → report → raw dump (refused without view_rawdump, downloaded with it),
// a search and its permalink, reprocessing; the numbers on the pages are
// checked against the index. Hostile names and annotations must render
// as text, with no script run (CSP bypassed, so the escaping alone is
// tested). With $GOBREAKPAD_SCREENSHOTS set to a directory it saves a
// screenshot of each page there (tools/crashd/screenshots.sh). Every
// page is checked at a desktop and a phone width (checkLayout): no
// horizontal overflow of the document, cells under their headers.
func TestBrowser(t *testing.T) {
	chromium := chromiumPath(t)
	dir := corpus.Dir(t)
	inlineDir := filepath.Join(dir, "generated/inline_chain-x64-O2") // gdb's truth: 3 inlined frames
	syms := []string{hostileSymbols(t, dir), filepath.Join(dir, "breakpad/processor/symbols"), filepath.Join(inlineDir, "symbols")}
	cfg := testConfig(t, syms)
	viewer, vt, _ := auth.NewToken("viewer", auth.ScopeViewPII)
	admin, at, _ := auth.NewToken("admin", auth.ScopeAdmin)
	full, ft, _ := auth.NewToken("triager", auth.ScopeViewPII, auth.ScopeViewRawDump, auth.ScopeReprocess)
	cfg.SymbolServer.Tokens = []auth.Token{vt, ft, at}
	cfg.Collector.PersonalData = &collector.PersonalData{Restrict: []string{"Email"}}
	ts := startServer(t, cfg)
	defer ts.stop()

	// Uploads: some dumps several times, so that ranks differ.
	type up struct {
		dump  string
		times int
		ptype string
	}
	ups := []up{
		{"linux_null_read_av", 5, "content"}, {"linux_inline", 4, "parent"}, {"null_read_av", 3, "gpu"},
		{"linux_overflow", 2, "content"}, {"ascii_read_av", 2, "parent"}, {"linux_divide_by_zero", 1, "content"},
		{"write_av_non_null", 1, "parent"}, {"linux_raise_sigabrt", 1, "content"},
	}
	dumps := map[crash.ID]string{}
	var ids []crash.ID
	for i, u := range ups {
		p := filepath.Join(dir, "breakpad/processor", u.dump+".dmp")
		for k := range u.times {
			id, err := upload(t, ts.URL, p, map[string]string{"ProductName": "Triage", "Version": fmt.Sprintf("1.%d", (i+k)%3),
				"ProcessType": u.ptype, "Email": "person@example.com"})
			if err != nil {
				t.Fatal(err)
			}
			dumps[id] = p
			ids = append(ids, id)
		}
	}
	inlineID, err := upload(t, ts.URL, filepath.Join(inlineDir, "crash.dmp"), map[string]string{"ProductName": "Triage", "Version": "1.0", "ProcessType": "gpu"})
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, inlineID)
	bad := filepath.Join(dir, "breakpad/processor/minidump2.dmp")
	hostileID, err := upload(t, ts.URL, bad, map[string]string{"ProductName": "Triage", "Version": "9.9", "ProcessType": hostile,
		"Comments": hostile + strings.Repeat("L", 64<<10), "x<script>window.__pwned=5</script>": "annotation named with a script"})
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, hostileID)
	ctx := context.Background()
	ix := ts.srv.Index()
	deadline := time.Now().Add(2 * time.Minute)
	for _, id := range ids {
		for {
			c, err := ix.Get(ctx, string(id))
			if err == nil && c.Status == index.Processed {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("crash %s not processed: %+v %v", id, c, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	tri := ix.(index.Triage)

	b := newBrowser(t, chromium)
	shots := os.Getenv("GOBREAKPAD_SCREENSHOTS")
	// look checks the layout of the page shown at a desktop's and a
	// phone's width (layout_test.go), saving screenshots with shots set;
	// lookHostile lets the tables of hostile strings scroll sideways.
	look := func(name string, height int64) { t.Helper(); checkLayout(t, b, name, height, true, shots) }
	lookHostile := func(name string, height int64) { t.Helper(); checkLayout(t, b, name, height, false, shots) }
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		c, cancel := context.WithTimeout(b, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(c, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		c, cancel := context.WithTimeout(b, 30*time.Second)
		defer cancel()
		s, err := chromedp.Run(c, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return strings.TrimSpace(s)
	}
	location := func() string {
		s, err := chromedp.Run(b, chromedp.Location())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// click follows a link or submits a form: it marks the document,
	// clicks, and waits for a new document showing waitSel.
	click := func(what, sel, waitSel string) {
		t.Helper()
		do(what, chromedp.Evaluate[chromedp.Void](`window.__old = true`), chromedp.Click(chromedp.CSS(sel)))
		for end := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			// Errors while the page changes (the target navigated) mean "not yet".
			c, cancel := context.WithTimeout(b, 5*time.Second)
			fresh, err := chromedp.Run(c, chromedp.Evaluate[bool](`window.__old !== true && document.readyState === 'complete'`))
			cancel()
			if err == nil && fresh {
				break
			}
			if time.Now().After(end) {
				t.Fatalf("%s: no new page after clicking %s (%v)", what, sel, err)
			}
		}
		do(what, chromedp.WaitVisible(chromedp.CSS(waitSel)))
	}
	login := func(token, next string) {
		t.Helper()
		do("login", chromedp.Navigate(ts.URL+next), chromedp.WaitVisible(chromedp.CSS("#token")),
			chromedp.SendKeys(chromedp.CSS("#token"), token))
		click("login", "#login", "main h1")
	}

	// Nothing without a token: the pages send the browser to the login.
	do("home without a token", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#token")))
	look("login", 500)
	login(viewer, "/")
	if loc := location(); loc != ts.URL+"/" {
		t.Fatalf("after the login: %s", loc)
	}
	do("home", chromedp.WaitVisible(chromedp.CSS("table.top")))
	look("home", 900)
	rows, err := chromedp.Run(b, chromedp.Evaluate[[][]string](`Array.from(document.querySelectorAll('table.top tbody tr')).map(r => [r.querySelector('td.sig a').textContent, r.querySelector('td.count').textContent])`))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	top, err := tri.TopCrashers(ctx, index.Filter{Since: now.Add(-7 * 24 * time.Hour), Until: now}, 50)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(top.Rows) || len(rows) < 5 {
		t.Fatalf("home lists %d signatures, the index %d", len(rows), len(top.Rows))
	}
	for i, r := range top.Rows {
		if rows[i][0] != r.Signature || rows[i][1] != fmt.Sprint(r.Count) {
			t.Errorf("home row %d: %q, index: %q %d", i+1, rows[i], r.Signature, r.Count)
		}
	}
	if top.Rows[0].Count != 5 {
		t.Errorf("top signature: %+v (linux_null_read_av was sent 5 times)", top.Rows[0])
	}

	// Top crashers → signature.
	click("signature", "table.top tbody tr:first-child td.sig a", "#sig-count")
	look("signature", 1100)
	_, total, _ := tri.Find(ctx, index.FindQuery{Filter: index.Filter{Signature: top.Rows[0].Signature, Since: now.Add(-28 * 24 * time.Hour)}})
	if got := text("#sig-count"); got != fmt.Sprint(total) || total != 5 {
		t.Errorf("signature page count %s, index %d", got, total)
	}
	// → report.
	click("report", "table.reports a.crash", "#crash-reason")
	look("report", 1400)
	id, err := crash.Parse(strings.TrimPrefix(location(), ts.URL+"/report/"))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := ix.Get(ctx, string(id))
	if got := text("#crash-reason"); got != c.CrashReason || c.Signature != top.Rows[0].Signature {
		t.Errorf("report page crash reason %q, index %q", got, c.CrashReason)
	}
	if body := text("main"); !strings.Contains(body, "person@example.com") || !strings.Contains(body, "Downloads need the view_rawdump scope") {
		t.Errorf("viewer's report: personal annotation missing or downloads offered")
	}
	// → raw dump: refused without the scope.
	do("dump refused", chromedp.Navigate(ts.URL+"/report/"+string(id)+"/dump"), chromedp.WaitVisible(chromedp.CSS("body")))
	if body := text("body"); !strings.Contains(body, "view_rawdump") {
		t.Errorf("raw dump without the scope: %q", body)
	}
	// Log out, log in with the scopes, download it.
	do("report again", chromedp.Navigate(ts.URL+"/report/"+string(id)), chromedp.WaitVisible(chromedp.CSS("#crash-reason")))
	click("logout", "form[action='/logout'] button", "#token")
	login(full, "/report/"+string(id))
	downloads := t.TempDir()
	if _, err := chromedp.CallBrowser(b, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads}); err != nil {
		t.Fatal(err)
	}
	do("download", chromedp.Click(chromedp.CSS("a.download")))
	want, _ := os.ReadFile(dumps[id])
	got := filepath.Join(downloads, string(id)+".dump.dmp")
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		b, err := os.ReadFile(got)
		if err == nil && bytes.Equal(b, want) {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("download %s: %d bytes, want %d (%v)", got, len(b), len(want), err)
		}
	}
	// Reprocess.
	click("reprocess", "#reprocess", "p.ok")

	// A report with inlined frames: their rows sit in the frames table.
	do("inline report", chromedp.Navigate(ts.URL+"/report/"+string(inlineID)), chromedp.WaitVisible(chromedp.CSS("#crash-reason")))
	if n, err := chromedp.Run(b, chromedp.Evaluate[int](`document.querySelectorAll('table.frames tr.inline').length`)); err != nil || n == 0 {
		t.Errorf("report of inline_chain-x64-O2's crash: %d inlined frames shown (%v)", n, err)
	}
	look("report-inline", 1000)

	// Search, then its permalink.
	do("search", chromedp.Navigate(ts.URL+"/search"), chromedp.WaitVisible(chromedp.CSS("#s-os")),
		chromedp.SendKeys(chromedp.CSS("#s-os"), "Linux"), chromedp.SendKeys(chromedp.CSS("#s-process_type"), "content"))
	click("search", "#search", "#total")
	look("search", 1000)
	_, want2, _ := tri.Find(ctx, index.FindQuery{Filter: index.Filter{OS: "Linux", ProcessType: "content"}})
	if got := text("#total"); got != fmt.Sprint(want2) || want2 != 9 {
		t.Errorf("search: %s crashes, index %d (9 sent)", got, want2)
	}
	click("permalink", "#permalink", "#total")
	if loc := location(); !strings.Contains(loc, "os=Linux") || !strings.Contains(loc, "process_type=content") || text("#total") != fmt.Sprint(want2) {
		t.Errorf("permalink %s: %s crashes", loc, text("#total"))
	}
	// Search by a part of a signature (~, in another case): the total
	// against the crashes whose signature holds it, counted here.
	all, _, err := tri.Find(ctx, index.FindQuery{Limit: index.MaxLimit})
	if err != nil || len(all) == 0 {
		t.Fatalf("find: %d crashes, %v", len(all), err)
	}
	sig := ""
	for _, r := range all {
		// A plain one (not the hostile crash's).
		if len(r.Signature) >= 6 && len(r.Signature) < 200 && strings.IndexFunc(r.Signature, func(c rune) bool { return c < ' ' || c > '~' || c == '<' }) < 0 {
			sig = r.Signature
			break
		}
	}
	if sig == "" {
		t.Fatal("no plain signature to search by a part of")
	}
	part := strings.ToUpper(sig[len(sig)/3 : len(sig)/3+min(6, len(sig)/3)])
	wantPart := 0
	for _, r := range all {
		if strings.Contains(strings.ToLower(r.Signature), strings.ToLower(part)) {
			wantPart++
		}
	}
	do("search ~", chromedp.Navigate(ts.URL+"/search"), chromedp.WaitVisible(chromedp.CSS("#s-signature")),
		chromedp.SendKeys(chromedp.CSS("#s-signature"), "~"+part))
	click("search ~", "#search", "#total")
	if got := text("#total"); got != fmt.Sprint(wantPart) || wantPart == 0 {
		t.Errorf("search signature=~%s: %s crashes, %d hold it", part, got, wantPart)
	}
	do("symbols", chromedp.Navigate(ts.URL+"/symbols"), chromedp.WaitVisible(chromedp.CSS("table.missing")))
	look("symbols", 900)
	missing, err := chromedp.Run(b, chromedp.Evaluate[[][]string](`Array.from(document.querySelectorAll('table.missing tbody tr')).map(r => Array.from(r.cells).map(c => c.textContent))`))
	if err != nil {
		t.Fatal(err)
	}
	mods, _, err := ix.MissingSymbols(ctx, index.MissingQuery{Limit: 100})
	if err != nil || len(mods) == 0 || len(missing) != len(mods) {
		t.Fatalf("symbols page lists %d missing modules, the index %d (%v)", len(missing), len(mods), err)
	}
	for i, m := range mods {
		if missing[i][0] != m.DebugFile || missing[i][1] != m.DebugID || missing[i][3] != fmt.Sprint(m.Crashes) {
			t.Errorf("missing symbols row %d: %q, index %+v", i+1, missing[i], m)
		}
	}

	// Escaping: with the page's CSP bypassed, nothing hostile may run.
	// The check itself can fail: the same payload in a page of its own runs.
	if _, err := chromedp.Call(b, page.SetBypassCSP, page.SetBypassCSPParams{Enabled: true}); err != nil {
		t.Fatal(err)
	}
	pwned := func() bool {
		v, err := chromedp.Run(b, chromedp.Evaluate[bool](`typeof window.__pwned !== 'undefined'`))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	do("control", chromedp.Navigate("data:text/html,"+strings.ReplaceAll(hostile, "#", "%23")), chromedp.Sleep(300*time.Millisecond))
	if !pwned() {
		t.Fatal("the control page's script did not run: the detector is blind")
	}
	hc, _ := ix.Get(ctx, string(hostileID))
	if !strings.Contains(hc.Signature, "window.__pwned=1") {
		t.Fatalf("hostile crash's signature %q: the hostile symbols were not used", hc.Signature)
	}
	for _, p := range []string{"/report/" + string(hostileID), "/signature?signature=" + url.QueryEscape(hc.Signature), "/?days=1", "/search?version=9.9",
		"/?process_type=" + url.QueryEscape(hostile)} {
		do(p, chromedp.Navigate(ts.URL+p), chromedp.WaitVisible(chromedp.CSS("main h1")), chromedp.Sleep(200*time.Millisecond))
		if pwned() {
			t.Errorf("%s: script ran", p)
		}
		body := text("main")
		if !strings.Contains(body, "window.__pwned=1") {
			t.Errorf("%s: the hostile text is not shown as text", p)
		}
		if strings.HasPrefix(p, "/report/") || strings.HasPrefix(p, "/search") {
			if !strings.Contains(body, `<script>window.__pwned=1</script>"'><img src=x onerror="window.__pwned=2">`) {
				t.Errorf("%s: the hostile text is not shown as text", p)
			}
		}
		if strings.HasPrefix(p, "/signature") {
			lookHostile("signature-hostile", 1100)
		}
		if strings.HasPrefix(p, "/report/") {
			if !strings.Contains(body, "more bytes)") || !strings.Contains(body, `\u0001\u001b[31m\u202e`) {
				t.Errorf("%s: 64 KiB strings not clipped or control characters not shown", p)
			}
			lookHostile("report-hostile", 1000)
			// Source links from the hostile FILE records: only to the
			// source hosts, over https (crashd/sourcelink).
			links, err := chromedp.Run(b, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('main a.source')).map(a => a.href)`))
			if err != nil {
				t.Fatal(err)
			}
			if len(links) == 0 {
				t.Errorf("%s: no source link from the hostile symbols' FILE records", p)
			}
			for _, l := range links {
				if !strings.HasPrefix(l, "https://github.com/o/r/blob/rev/src/") && !strings.HasPrefix(l, "https://hg.mozilla.org/mozilla-central/file/rev%22onmouseover%3D%22window.__pwned%3D4/") {
					t.Errorf("%s: source link %q", p, l)
				}
			}
		}
	}

	// The tokens page, as an admin, with a token just made.
	do("report to log out from", chromedp.Navigate(ts.URL+"/symbols"), chromedp.WaitVisible(chromedp.CSS("table.missing")))
	click("logout", "form[action='/logout'] button", "#token")
	login(admin, "/tokens")
	do("new token", chromedp.SendKeys(chromedp.CSS("#name"), "ci-uploads"), chromedp.Click(chromedp.CSS("input[name=scope][value=upload_symbols]")))
	click("create token", "form[action='/tokens'] button[type=submit]", "#secret")
	look("tokens", 900)
}
