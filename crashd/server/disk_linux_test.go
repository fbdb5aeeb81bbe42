package server

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/scaletest"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// heartbeat returns /__heartbeat__'s status and the names of its errors.
func heartbeat(t *testing.T, url string) (int, []string) {
	t.Helper()
	resp, err := http.Get(url + "/__heartbeat__")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Errors []struct{ Name, Msg string } `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range body.Errors {
		names = append(names, e.Name)
	}
	return resp.StatusCode, names
}

// TestDiskFull: crashd on a small tmpfs. Stopped, the disk filled below
// min_free_bytes, crashd starts all the same: the heartbeat answers 503
// naming "disk", an upload 503 with Retry-After (nothing stored); space
// freed, both recover by themselves and a crash is stored and processed.
func TestDiskFull(t *testing.T) {
	dump := corpus.File(t, "breakpad/processor/linux_null_read_av.dmp")
	mnt := filepath.Join(t.TempDir(), "data")
	unmount, err := scaletest.MountTmpfs(mnt, 96<<20)
	if err != nil {
		t.Skip("a full disk needs a tmpfs of its own:", err)
	}
	defer func() {
		if err := unmount(); err != nil {
			t.Error(err)
		}
	}()
	cfg := testConfig(t, nil)
	cfg.Data = mnt
	cfg.MinFreeBytes, cfg.MinFreePercent = 32<<20, 0
	ts := startServer(t, cfg)
	id, err := upload(t, ts.URL, dump, map[string]string{"ProductName": "Disk"})
	if err != nil {
		ts.stop()
		t.Fatal(err)
	}
	waitProcessed(t, ts.URL, id, time.Minute)
	ts.stop()

	// Filled to 16 MiB free, under the 32 kept free.
	free, _, err := blob.FreeSpace(mnt)
	if err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(mnt, "filler")
	if _, err := scaletest.Fill(filler, int64(free)-16<<20); err != nil {
		t.Fatal(err)
	}
	ts = startServer(t, cfg)
	defer ts.stop()
	if code, names := heartbeat(t, ts.URL); code != 503 || len(names) != 1 || names[0] != "disk" {
		t.Errorf("heartbeat on a full disk: %d %v", code, names)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("ProductName", "Disk")
	fw, _ := mw.CreateFormFile(crash.MinidumpField, "x.dmp")
	b, _ := os.ReadFile(dump)
	fw.Write(b)
	mw.Close()
	resp, err := http.Post(ts.URL+"/submit", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || len(msg) == 0 {
		t.Errorf("upload on a full disk: %s, Retry-After %q, %q", resp.Status, resp.Header.Get("Retry-After"), msg)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, names := heartbeat(t, ts.URL)
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("heartbeat after space returned: %d %v", code, names)
		}
		time.Sleep(100 * time.Millisecond)
	}
	id, err = upload(t, ts.URL, dump, map[string]string{"ProductName": "Disk"})
	if err != nil {
		t.Fatal(err)
	}
	waitProcessed(t, ts.URL, id, time.Minute)
}
