package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
)

// TestSocorroInvocation runs Socorro's MinidumpStackwalkRule command line
// (rust-minidump's flags) on corpus dumps against a Breakpad-layout store
// served on a loopback port: the report it writes into --output-file is
// the --json report of a walk with the same symbols from the local stores.
func TestSocorroInvocation(t *testing.T) {
	prog := cmdtest.Build(t, ".")
	for _, c := range readCases(t, remoteCases) {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			raw := filepath.Join(dir, "raw.json")
			// Socorro's raw crash: annotations, one naming the main
			// module's certificate as a JSON string inside the JSON.
			local := cmdtest.RunClean(t, prog, nil, append([]string{"--json", c.dump}, c.paths...)...)
			var doc struct {
				Modules []struct {
					Filename    string  `json:"filename"`
					CertSubject *string `json:"cert_subject"`
				} `json:"modules"`
			}
			if err := json.Unmarshal([]byte(local.Stdout), &doc); err != nil || len(doc.Modules) == 0 {
				t.Fatalf("--json: %v\n%s", err, local.Stderr)
			}
			main := doc.Modules[0].Filename
			sig, _ := json.Marshal(map[string][]string{"Some Signer": {main}})
			rawJSON, _ := json.Marshal(map[string]string{"ProductName": "Test", "ModuleSignatureInfo": string(sig)})
			if err := os.WriteFile(raw, rawJSON, 0o644); err != nil {
				t.Fatal(err)
			}
			want := cmdtest.RunClean(t, prog, nil, append([]string{"--json", "--evil-json=" + raw, c.dump}, c.paths...)...)
			if want.Code != 0 || !strings.Contains(want.Stdout, `"cert_subject":"Some Signer"`) || want.Stdout == local.Stdout {
				t.Fatalf("--evil-json did not name the certificate: exit %d\n%s", want.Code, want.Stderr)
			}

			srv := serveStores(t, c.paths...)
			defer srv.Close()
			cache, tmp := filepath.Join(dir, "cache"), filepath.Join(dir, "tmp")
			out, log := filepath.Join(dir, "out.json"), filepath.Join(dir, "log.txt")
			r := cmdtest.RunClean(t, prog, nil, "--evil-json="+raw, "--symbols-cache="+cache, "--symbols-tmp="+tmp,
				"--no-color", "--output-file="+out, "--log-file="+log, "--symbols-url="+srv.URL, "--json", "--verbose=error", c.dump)
			if r.Code != 0 || r.Stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want.Stdout {
				t.Errorf("--output-file differs from --json:\ngot  %.600s\nwant %.600s", got, want.Stdout)
			}
			if _, err := os.Stat(log); err != nil {
				t.Errorf("--log-file: %v", err)
			}
			if srv.n.Load() == 0 {
				t.Error("no request reached the store")
			}
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				t.Errorf("left in --symbols-tmp: %v", ents)
			}
			if ents, _ := os.ReadDir(cache); len(ents) == 0 {
				t.Error("nothing in --symbols-cache")
			}
		})
	}
}
