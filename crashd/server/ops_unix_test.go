//go:build unix

package server

import (
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// TestFileModes: after a crash is uploaded and processed, nothing in the
// data directory (blobs, queue, index, symbols) is readable by others;
// with data_group_readable the group may read, others still not.
func TestFileModes(t *testing.T) {
	dump := corpus.File(t, "breakpad/processor/linux_null_read_av.dmp")
	for _, group := range []bool{false, true} {
		cfg := testConfig(t, nil)
		cfg.DataGroupReadable = group
		ts := startServer(t, cfg)
		id, err := upload(t, ts.URL, dump, map[string]string{"ProductName": "Modes"})
		if err != nil {
			ts.stop()
			t.Fatal(err)
		}
		waitProcessed(t, ts.URL, id, time.Minute)
		ts.stop()
		forbidden := fs.FileMode(0o077)
		if group {
			forbidden = 0o027
		}
		n := 0
		err = filepath.WalkDir(cfg.Data, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := e.Info()
			if err != nil {
				return err
			}
			if info.Mode()&fs.ModeSymlink == 0 && info.Mode().Perm()&forbidden != 0 {
				t.Errorf("group readable %v: %s is %v", group, p, info.Mode().Perm())
			}
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n < 10 {
			t.Errorf("only %d files and directories checked", n)
		}
	}
}
