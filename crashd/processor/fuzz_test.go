package processor

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// FuzzProcess processes a crash whose dump, dump name list and raw crash
// are arbitrary bytes (what a client sent, as the collector stored it):
// Process must not panic and must give a processed crash that marshals.
func FuzzProcess(f *testing.F) {
	if p := filepath.Join(corpus.Path(), "breakpad/processor/linux_null_read_av.dmp"); fileExists(p) {
		b, _ := os.ReadFile(p)
		f.Add(b, []byte(`["upload_file_minidump"]`), []byte(`{"ProductName":"F"}`))
	}
	f.Add([]byte("MDMP\x93\xa7\x00\x00"), []byte(`["upload_file_minidump","other"]`), []byte(`{}`))
	f.Add([]byte{}, []byte(`not json`), []byte(`[1]`))
	f.Fuzz(func(t *testing.T, dump, names, raw []byte) {
		ctx := context.Background()
		store := blob.NewMem()
		id := crash.New(time.Unix(1700000000, 0), 0)
		store.Put(ctx, crash.RawCrashKey(id), raw)
		store.Put(ctx, crash.DumpNamesKey(id), names)
		store.Put(ctx, crash.DumpKey(id, crash.MinidumpField), dump)
		store.Put(ctx, crash.DumpKey(id, "other"), dump)
		p := &Processor{store: store, now: time.Now}
		p.cfg.defaults()
		pc, err := p.Process(ctx, id, nil)
		if err != nil {
			return // the dump name list is not JSON: a store-level error
		}
		b, err := Marshal(pc)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(b) {
			t.Fatalf("processed crash is not JSON: %.200s", b)
		}
	})
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
