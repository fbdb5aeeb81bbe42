package server

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/alert"
	"github.com/gobreakpad/gobreakpad/crashd/sourcelink"
)

func TestConfig(t *testing.T) {
	cfg := Default()
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "crashd.json")
	os.WriteFile(path, []byte(`{"listen": ":9000", "symbols": ["/a"], "timeout": "90s", "retry_delay": 5,
		"collector": {"max_body_size": 1000, "throttle": [{"name": "all", "result": "accept"}]}}`), 0o644)
	if err := cfg.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != ":9000" || !slices.Equal(cfg.Symbols, []string{"/a"}) || time.Duration(cfg.Timeout) != 90*time.Second ||
		time.Duration(cfg.RetryDelay) != 5*time.Second || cfg.Collector.MaxBodySize != 1000 || cfg.Data != "crashd-data" {
		t.Errorf("after the file: %+v", cfg)
	}
	env := map[string]string{
		"CRASHD_LISTEN": "127.0.0.1:1", "CRASHD_SYMBOLS_URL": "http://x, http://y", "CRASHD_WORKERS": "3",
		"CRASHD_QUEUE_SYNC": "true", "CRASHD_ACK_WAIT": "1m", "CRASHD_ROLES": "web,processor",
		"CRASHD_INDEXED_ANNOTATIONS": "ReleaseChannel, Email",
		"CRASHD_WEBHOOKS":            `[{"url": "https://hooks.example.com/x", "events": ["spike"]}]`, "CRASHD_SPIKE_FACTOR": "4",
	}
	if err := cfg.FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:1" || !slices.Equal(cfg.SymbolsURL, []string{"http://x", "http://y"}) || cfg.Workers != 3 ||
		!cfg.QueueSync || time.Duration(cfg.AckWait) != time.Minute || cfg.Has(RoleCollector) || !cfg.Has(RoleWeb) ||
		!slices.Equal(cfg.IndexedAnnotations, []string{"ReleaseChannel", "Email"}) || len(cfg.Webhooks) != 1 ||
		!slices.Equal(cfg.Webhooks[0].Events, []string{"spike"}) || cfg.SpikeFactor != 4 {
		t.Errorf("after the environment: %+v", cfg)
	}
	if err := cfg.Check(); err != nil || cfg.Webhooks[0].Name != "hooks.example.com" {
		t.Error(err, cfg.Webhooks)
	}
	for k, v := range map[string]string{"CRASHD_WORKERS": "many", "CRASHD_TIMEOUT": "soon", "CRASHD_QUEUE_SYNC": "perhaps", "CRASHD_WEBHOOKS": "https://x"} {
		c := Default()
		if err := c.FromEnv(func(n string) (string, bool) { return v, n == k }); err == nil {
			t.Errorf("%s=%s accepted", k, v)
		}
	}
	os.WriteFile(path, []byte(`{"listn": ":9000"}`), 0o644)
	if err := cfg.LoadFile(path); err == nil {
		t.Error("an unknown field was accepted")
	}
	bad := Default()
	bad.Roles = []string{"janitor"}
	if bad.Check() == nil {
		t.Error("role janitor accepted")
	}
	bad = Default()
	bad.Webhooks = []alert.Webhook{{URL: "file:///etc/passwd"}}
	if bad.Check() == nil {
		t.Error("a file: webhook accepted")
	}
	for _, tc := range []struct {
		roles []string
		has   string
		want  bool
	}{
		{Default().Roles, RoleSymbols, true},
		{[]string{RoleAll}, RoleProcessor, true},
		{[]string{RoleCollector, RoleSymbols}, RoleSymbols, true},
		{[]string{RoleCollector}, RoleSymbols, false},
		{[]string{RoleWeb}, RoleCollector, false},
	} {
		c := Default()
		c.Roles = tc.roles
		if err := c.Check(); err != nil || c.Has(tc.has) != tc.want {
			t.Errorf("roles %v: has %s = %v (%v), want %v", tc.roles, tc.has, c.Has(tc.has), err, tc.want)
		}
	}
	for _, f := range []func(*Config){
		func(c *Config) { c.Blobs = "s3" },
		func(c *Config) { c.NATSURL, c.NATSCluster = "nats://a:4222", []string{"nats-route://b:6222"} },
		func(c *Config) { c.RetentionDays = -1 },
	} {
		c := Default()
		f(&c)
		if c.Check() == nil {
			t.Errorf("accepted: %+v", c)
		}
	}
	names := EnvNames()
	if !slices.Contains(names, "CRASHD_SYMBOLS_CACHE") || slices.Contains(names, "CRASHD_COLLECTOR") {
		t.Errorf("EnvNames: %v", names)
	}
}

// TestLocked: a second crashd on the same data directory is refused.
func TestLocked(t *testing.T) {
	cfg := testConfig(t, nil)
	ts := startServer(t, cfg)
	defer ts.stop()
	if _, err := New(t.Context(), cfg, nil); !errors.Is(err, ErrLocked) {
		t.Errorf("a second server on the same data directory: %v, want ErrLocked", err)
	}
}

// TestSignatureLists: a lists directory that cannot be read stops the
// start; one that can is used: a crash whose signature is its first frame
// without symbols ("threads@0x1383") gets another when the lists call
// such frames irrelevant. (It checked only that the server started.)
func TestSignatureLists(t *testing.T) {
	cfg := testConfig(t, nil)
	cfg.SignatureLists = filepath.Join(t.TempDir(), "missing")
	if _, err := New(t.Context(), cfg, nil); err == nil {
		t.Error("a missing signature lists directory was accepted")
	}
	c := corpusCaseNamed(t, "gen-threads-x64-O2")
	cfg = testConfig(t, nil)
	cfg.SignatureLists = t.TempDir()
	if err := os.WriteFile(filepath.Join(cfg.SignatureLists, "irrelevant_signature_re.txt"), []byte("my_abort_wrapper\nthreads@0x[0-9a-f]+\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, cfg)
	defer ts.stop()
	id, err := upload(t, ts.URL, c.dump, map[string]string{"ProductName": "Threads", "Version": "1"})
	if err != nil {
		t.Fatal(err)
	}
	got := waitProcessed(t, ts.URL, id, time.Minute)
	if got.Signature == "" || strings.Contains(got.Signature, "threads@0x") {
		t.Errorf("signature %q: the lists' irrelevant frames were not skipped", got.Signature)
	} else {
		t.Logf("signature with the lists: %q", got.Signature)
	}
}

// TestSourceLinksConfig: source_links from the file and from
// CRASHD_SOURCE_LINKS (JSON, as in the file); a rule that could make a
// link other than http(s) fails the check.
func TestSourceLinksConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crashd.json")
	os.WriteFile(path, []byte(`{"source_links": [{"prefix": "/src/", "url": "https://git.example.com/app/blob/{version}/{path}#L{line}"}]}`), 0o644)
	cfg := Default()
	if err := cfg.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	if len(cfg.SourceLinks) != 1 || cfg.SourceLinks[0].Prefix != "/src/" || cfg.Check() != nil {
		t.Errorf("from the file: %+v %v", cfg.SourceLinks, cfg.Check())
	}
	env := `[{"prefix": "C:\\build\\", "url": "https://src.example.com/{product}/{path}?l={line}"}]`
	if err := cfg.FromEnv(func(k string) (string, bool) { return env, k == "CRASHD_SOURCE_LINKS" }); err != nil {
		t.Fatal(err)
	}
	if len(cfg.SourceLinks) != 1 || cfg.SourceLinks[0].Prefix != `C:\build\` || cfg.Check() != nil {
		t.Errorf("from the environment: %+v", cfg.SourceLinks)
	}
	if err := cfg.FromEnv(func(k string) (string, bool) { return "[{", k == "CRASHD_SOURCE_LINKS" }); err == nil {
		t.Error("CRASHD_SOURCE_LINKS that is not JSON accepted")
	}
	for _, u := range []string{"javascript:alert(1)//{path}", "https://x.example/{file}", "https://{product}.example.com/{path}"} {
		c := Default()
		c.SourceLinks = []sourcelink.Rule{{Prefix: "/", URL: u}}
		if c.Check() == nil {
			t.Errorf("source link %q accepted", u)
		}
	}
}
