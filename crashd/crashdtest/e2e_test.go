package crashdtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// corpusCase is one line of the corpus' cases.tsv: a dump and the symbol
// paths it is walked with.
type corpusCase struct {
	name, dump string
	symbols    []string
}

func corpusCases(t *testing.T) []corpusCase {
	dir := corpus.Dir(t)
	f, err := os.Open(filepath.Join(dir, "cases.tsv"))
	if err != nil {
		t.Skipf("corpus without cases.tsv: %v", err)
	}
	defer f.Close()
	var out []corpusCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 3 || strings.HasPrefix(cols[0], "#") || strings.HasPrefix(cols[0], "perf") {
			continue // perf: 65 MB of symbols, the benchmark's, not this test's
		}
		c := corpusCase{name: cols[0], dump: filepath.Join(dir, cols[1])}
		if len(cols) > 3 {
			for _, s := range strings.Fields(cols[3]) {
				c.symbols = append(c.symbols, filepath.Join(dir, s))
			}
		}
		if st, err := os.Stat(c.dump); err != nil || st.Size() > 25<<20 {
			continue
		}
		out = append(out, c)
	}
	return out
}

// client is one real client, or a request shaped as one, uploading a dump
// and returning the crash id the server gave.
type client struct {
	name string
	send func(t *testing.T, base string, c corpusCase, dump []byte) (string, error)
}

var breakpadAnswer = regexp.MustCompile(`^Successfully sent the minidump file.\nResponse:\nCrashID=bp-(\S+)\n\n$`)

func minidumpUploadClient(name, bin string) client {
	return client{name, func(t *testing.T, base string, c corpusCase, _ []byte) (string, error) {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "-p", "E2E", "-v", "1.0", c.dump, base+"/submit")
		cmd.Env = append(os.Environ(), "http_proxy=", "HTTP_PROXY=")
		out, err := cmd.Output()
		m := breakpadAnswer.FindSubmatch(out)
		if err != nil || m == nil {
			return "", fmt.Errorf("%s: %v: %q", name, err, out)
		}
		return string(m[1]), nil
	}}
}

func requestClient(name string, build func(base string, dump []byte) (*http.Request, error), parse func(string) (string, bool)) client {
	return client{name, func(t *testing.T, base string, c corpusCase, dump []byte) (string, error) {
		req, err := build(base, dump)
		if err != nil {
			return "", err
		}
		resp, err := Do(req.WithContext(t.Context()))
		if err != nil {
			return "", fmt.Errorf("%s: %v", name, err)
		}
		id, ok := parse(resp.Body)
		if resp.Status != 200 || !ok {
			return "", fmt.Errorf("%s: answered %d %q", name, resp.Status, resp.Body)
		}
		return id, nil
	}}
}

// sentryProject, sentryKey and sentryProduct are the Sentry project crashd
// is configured with for the sentry-native client.
const (
	sentryProject = "42"
	sentryKey     = "e2epublickey"
	sentryProduct = "E2E-sentry"
)

// newCrashOf waits (up to 2 minutes) until /api/crashes?product=product
// lists a crash not in known and returns it.
func newCrashOf(t *testing.T, srv *Crashd, product string, known map[string]bool) (string, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		resp, err := srv.Get(t.Context(), "/api/crashes?limit=1000&product="+product)
		if err != nil {
			return "", err
		}
		var res struct {
			Crashes []struct {
				ID string `json:"crash_id"`
			} `json:"crashes"`
		}
		if resp.Status != 200 || json.Unmarshal([]byte(resp.Body), &res) != nil {
			return "", fmt.Errorf("GET /api/crashes: %d %q", resp.Status, resp.Body)
		}
		for _, c := range res.Crashes {
			if !known[c.ID] {
				return c.ID, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "", fmt.Errorf("no new crash of product %s in the index after 2 minutes", product)
}

// TestEndToEnd uploads the corpus' dumps to a real crashd on a loopback
// port with real clients — Google Breakpad's own minidump_upload (when
// built: tools/breakpad/build-upload.sh), ours — and with requests shaped as
// Crashpad, Electron's crashReporter and sentry-native's crashpad backend
// send them, the clients taking the dumps in turn; every crash must be
// processed into the frames minidump_stackwalk --json gives for its dump
// with the same symbols. -short takes every sixth dump.
func TestEndToEnd(t *testing.T) {
	bin := Build(t)
	cases := corpusCases(t)
	if testing.Short() {
		var some []corpusCase
		for i := 0; i < len(cases); i += 6 {
			some = append(some, cases[i])
		}
		cases = some
	}
	if len(cases) == 0 {
		t.Skip("no corpus cases")
	}
	// One crashd with every case's symbol paths; the reference walks get
	// the same list.
	seen := map[string]bool{}
	var symbols []string
	for _, c := range cases {
		for _, s := range c.symbols {
			if !seen[s] {
				seen[s] = true
				symbols = append(symbols, s)
			}
		}
	}
	sort.Strings(symbols)
	srv := Start(t, Options{Bin: bin, Symbols: symbols, Args: e2eServerArgs(t)})

	stackwalk := cmdtest.Build(t, "github.com/gobreakpad/gobreakpad/cmd/minidump_stackwalk")
	ours := cmdtest.Build(t, "github.com/gobreakpad/gobreakpad/cmd/minidump_upload")
	var clients []client
	if os.Getenv(cmdtest.BreakpadMinidumpUpload.Env) != "" || fileExists(cmdtest.BreakpadMinidumpUpload.Default) {
		clients = append(clients, minidumpUploadClient("breakpad-minidump_upload", cmdtest.BreakpadMinidumpUpload.Path(t)))
	} else {
		t.Logf("Google Breakpad's minidump_upload not built: that client is left out (run %s or set $%s)", cmdtest.BreakpadMinidumpUpload.Build, cmdtest.BreakpadMinidumpUpload.Env)
	}
	clients = append(clients, minidumpUploadClient("minidump_upload", ours))
	clients = append(clients, shapedClients()...)

	type upload struct {
		c      corpusCase
		client string
		id     string
	}
	var ups []upload
	sentryCrashes := map[string]bool{}
	for i, c := range cases {
		cl := clients[i%len(clients)]
		dump, err := os.ReadFile(c.dump)
		if err != nil {
			t.Fatal(err)
		}
		id, err := cl.send(t, srv.URL, c, dump)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if cl.name == "sentry-native" {
			// Sentry's endpoint answers the event id; the crash is the one
			// new crash of the project's product.
			if id, err = newCrashOf(t, srv, sentryProduct, sentryCrashes); err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			sentryCrashes[id] = true
		}
		ups = append(ups, upload{c, cl.name, id})
	}
	if t.Failed() {
		t.Fatalf("uploads failed; server log:\n%s", tail(srv.Log()))
	}

	// The reference walks, two at a time, while crashd processes.
	refs := make([]any, len(ups))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, u := range ups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			args := append([]string{"--json", u.c.dump}, symbols...)
			r := cmdtest.RunClean(t, stackwalk, nil, args...)
			if r.Code != 0 && r.Stdout == "" {
				// A dump nothing can be read from (the corpus has such):
				// crashd must say it failed, or give no frames.
				refs[i] = unreadable(strings.TrimSpace(r.Stderr))
				return
			}
			var v any
			if err := json.Unmarshal([]byte(r.Stdout), &v); err != nil {
				t.Errorf("%s: minidump_stackwalk --json: exit %d, %v\n%s", u.c.name, r.Code, err, r.Stderr)
				return
			}
			refs[i] = frames(v)
		}()
	}
	wg.Wait()

	perClient := map[string]int{}
	nframes := 0
	for i, u := range ups {
		cr := srv.WaitProcessed(t, u.id, 2*time.Minute)
		if why, ok := refs[i].(unreadable); ok {
			var v any
			json.Unmarshal(cr.JSONDump, &v)
			if f, _ := frames(v).(map[string]any); cr.Status != "failed" && len(f) > 0 {
				t.Errorf("%s (%s): minidump_stackwalk reads nothing (%s); crashd: status %s with frames %v", u.c.name, u.client, why, cr.Status, f)
				continue
			}
			t.Logf("%s (%s): unreadable, as minidump_stackwalk says (%s); crashd: status %s, notes %s", u.c.name, u.client, why, cr.Status, cr.Raw["notes"])
			perClient[u.client]++
			continue
		}
		if cr.Status != "processed" {
			t.Errorf("%s (%s, %s): status %q: %s", u.c.name, u.client, u.id, cr.Status, cr.Raw["notes"])
			continue
		}
		var v any
		if err := json.Unmarshal(cr.JSONDump, &v); err != nil {
			t.Errorf("%s (%s): json_dump: %v", u.c.name, u.client, err)
			continue
		}
		got := frames(v)
		if refs[i] == nil {
			continue // the reference walk failed: reported above
		}
		if !reflect.DeepEqual(got, refs[i]) {
			a, _ := json.MarshalIndent(got, "", " ")
			b, _ := json.MarshalIndent(refs[i], "", " ")
			t.Errorf("%s (%s, crash %s): frames differ from minidump_stackwalk --json\ncrashd:\n%.3000s\nminidump_stackwalk:\n%.3000s", u.c.name, u.client, u.id, a, b)
			continue
		}
		perClient[u.client]++
		nframes += countFrames(got)
	}
	if nframes == 0 {
		t.Error("no frame compared")
	}
	t.Logf("%d dumps uploaded and processed into minidump_stackwalk's frames (%d frames), by client: %v", len(ups), nframes, perClient)
}

// frames is the part of a rust-minidump JSON report this test compares:
// every thread's frames and the crashing thread's.
func frames(v any) any {
	m, _ := v.(map[string]any)
	out := map[string]any{}
	if ts, ok := m["threads"].([]any); ok {
		var all []any
		for _, th := range ts {
			tm, _ := th.(map[string]any)
			all = append(all, tm["frames"])
		}
		out["threads"] = all
	}
	if ct, ok := m["crashing_thread"].(map[string]any); ok {
		out["crashing_thread"] = ct["frames"]
	}
	return out
}

// countFrames counts the frames of frames' result, every thread's.
func countFrames(f any) int {
	n := 0
	m, _ := f.(map[string]any)
	ts, _ := m["threads"].([]any)
	for _, t := range ts {
		fs, _ := t.([]any)
		n += len(fs)
	}
	return n
}

// unreadable is the reference of a dump minidump_stackwalk reads nothing
// from: its error.
type unreadable string

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

var hyphenatedUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// sentryEventID reads the answer of crashd's Sentry endpoint, the event id
// as a hyphenated UUID, which is the crash id's.
func sentryEventID(body string) (string, bool) {
	s := strings.TrimSpace(body)
	var obj struct {
		ID string `json:"id"`
	}
	if json.Unmarshal([]byte(s), &obj) == nil && obj.ID != "" {
		s = obj.ID
	}
	return s, hyphenatedUUID.MatchString(s)
}

// e2eServerArgs are crashd's arguments beyond --listen, --data and
// --symbols: a configuration file (JSON, crashd/server's Config) giving the
// Sentry project its key and product.
func e2eServerArgs(t *testing.T) []string {
	p := filepath.Join(t.TempDir(), "crashd.json")
	conf, _ := json.Marshal(map[string]any{
		"collector": map[string]any{
			"sentry": []map[string]any{{"id": sentryProject, "keys": []string{sentryKey}, "product": sentryProduct}},
		},
	})
	if err := os.WriteFile(p, conf, 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"--config", p}
}

// shapedClients are the requests shaped as Crashpad, Electron's
// crashReporter and sentry-native's crashpad backend send them.
func shapedClients() []client {
	return []client{
		requestClient("crashpad", func(base string, dump []byte) (*http.Request, error) {
			c := &Crashpad{URL: base + "/submit", Annotations: map[string]string{"prod": "E2E", "ver": "1.0", "guid": NewUUID(), "ptype": "browser"}, Minidump: dump}
			return c.Request(context.Background())
		}, CrashID),
		requestClient("electron", func(base string, dump []byte) (*http.Request, error) {
			e := Electron{SubmitURL: base + "/submit", ProductName: "E2E", CompanyName: "gobreakpad", AppVersion: "1.0", Minidump: dump, Extra: map[string]string{"channel": "test"}}
			return e.Crashpad().Request(context.Background())
		}, CrashID),
		requestClient("sentry-native", func(base string, dump []byte) (*http.Request, error) {
			c := SentryCrashpad(SentryDSN{Base: base, Project: sentryProject, PublicKey: sentryKey}, dump, NewUUID(), map[string]string{"release": "e2e@1.0"})
			return c.Request(context.Background())
		}, sentryEventID),
	}
}
