package crashdtest

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/collector"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/internal/testkit/cmdtest"
)

// TestClientsToCollector posts one dump with each client to crashd's real
// collector (in this process, on a loopback port) and reads back what it
// stored: the dump byte for byte and the annotations each client sends.
// The end-to-end test does the same through a whole crashd serve.
func TestClientsToCollector(t *testing.T) {
	store := blob.NewMem()
	var mu sync.Mutex
	var published []crash.ID
	col, err := collector.New(collector.Config{
		Sentry: []collector.SentryProject{{ID: sentryProject, Keys: []string{sentryKey}, Product: sentryProduct}},
	}, store, func(_ context.Context, id crash.ID) error {
		mu.Lock()
		published = append(published, id)
		mu.Unlock()
		return nil
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(col.Handler())
	defer srv.Close()

	dump := []byte("MDMP\x93\xa7\x00\x00 a minidump's bytes \r\n--x\r\n\x00\xff")
	path := filepath.Join(t.TempDir(), "crash.dmp")
	os.WriteFile(path, dump, 0o644)
	c := corpusCase{name: "synthetic", dump: path}
	ours := cmdtest.Build(t, "github.com/gobreakpad/gobreakpad/cmd/minidump_upload")
	clients := []client{minidumpUploadClient("minidump_upload", ours)}
	if os.Getenv(cmdtest.BreakpadMinidumpUpload.Env) != "" || fileExists(cmdtest.BreakpadMinidumpUpload.Default) {
		clients = append(clients, minidumpUploadClient("breakpad-minidump_upload", cmdtest.BreakpadMinidumpUpload.Path(t)))
	}
	clients = append(clients, shapedClients()...)
	want := map[string]map[string]string{
		"minidump_upload":          {"prod": "E2E", "ver": "1.0"},
		"breakpad-minidump_upload": {"prod": "E2E", "ver": "1.0"},
		"crashpad":                 {"prod": "E2E", "ver": "1.0", "ptype": "browser", "ProductName": "E2E", "Version": "1.0"},
		"electron":                 {"prod": "Electron", "_productName": "E2E", "_companyName": "gobreakpad", "_version": "1.0", "platform": "linux", "process_type": "browser", "channel": "test"},
		"sentry-native":            {"ProductName": sentryProduct},
	}
	for _, cl := range clients {
		mu.Lock()
		n := len(published)
		mu.Unlock()
		got, err := cl.send(t, srv.URL, c, dump)
		if err != nil {
			t.Errorf("%s: %v", cl.name, err)
			continue
		}
		mu.Lock()
		if len(published) != n+1 {
			t.Errorf("%s: %d crashes published", cl.name, len(published)-n)
			mu.Unlock()
			continue
		}
		id := published[n]
		mu.Unlock()
		if cl.name != "sentry-native" && got != string(id) {
			t.Errorf("%s: answered %s, published %s", cl.name, got, id)
		}
		rawJSON, err := store.Get(t.Context(), crash.RawCrashKey(id))
		if err != nil {
			t.Errorf("%s: raw crash: %v", cl.name, err)
			continue
		}
		var raw crash.RawCrash
		if err := raw.UnmarshalJSON(rawJSON); err != nil {
			t.Errorf("%s: raw crash: %v", cl.name, err)
			continue
		}
		stored, err := store.Get(t.Context(), crash.DumpKey(id, crash.MinidumpField))
		if err != nil || !bytes.Equal(stored, dump) {
			t.Errorf("%s: stored dump %q, %v", cl.name, stored, err)
		}
		for k, v := range want[cl.name] {
			if g := raw.Annotation(k); g != v {
				t.Errorf("%s: annotation %s = %q, want %q (all: %v)", cl.name, k, g, v, raw.Annotations)
			}
		}
		if cl.name == "sentry-native" {
			for _, name := range []string{"__sentry-event", "__sentry-breadcrumb1"} {
				stored, _ := crash.DumpName(name)
				if ok, _ := store.Exists(t.Context(), crash.DumpKey(id, stored)); !ok {
					t.Errorf("sentry-native: attachment %s not stored", name)
				}
			}
		}
		t.Logf("%s: crash %s, payload %s, compressed %s, annotations %v, notes %q", cl.name, id, raw.Metadata.Payload, raw.Metadata.PayloadCompressed, raw.Annotations, raw.Metadata.CollectorNotes)
	}
}
