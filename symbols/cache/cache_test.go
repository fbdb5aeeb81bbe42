package cache

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestWrite(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	p, err := c.Write(strings.NewReader("hello"), 5, "a.pdb", "ID", "a.sym")
	if err != nil || p != filepath.Join(c.Dir, "a.pdb", "ID", "a.sym") {
		t.Fatalf("%s, %v", p, err)
	}
	if got, ok := c.Lookup("a.pdb", "ID", "a.sym"); !ok || got != p {
		t.Errorf("Lookup: %s %v", got, ok)
	}
	if _, err := c.Write(strings.NewReader("toolong"), 5, "b"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the limit: %v", err)
	}
	if _, ok := c.Lookup("b"); ok {
		t.Error("an oversized file was stored")
	}
	if _, err := c.WriteFunc(func(w io.Writer) error { io.WriteString(w, "part"); return errors.New("failed") }, "c"); err == nil {
		t.Error("a failed write was not reported")
	}
	ents, _ := os.ReadDir(c.Dir)
	for _, e := range ents {
		if e.Name() != "a.pdb" {
			t.Errorf("left in the cache: %s", e.Name())
		}
	}
}

// TestConcurrentWrites: many writers of one file, readers only ever see a
// whole version.
func TestConcurrentWrites(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	body := strings.Repeat("0123456789", 100000)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := c.Write(strings.NewReader(body), 0, "x", "y"); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			if p, ok := c.Lookup("x", "y"); ok {
				if b, err := os.ReadFile(p); err != nil || string(b) != body {
					t.Errorf("torn read: %d bytes, %v", len(b), err)
				}
			}
		})
	}
	wg.Wait()
}

func TestMisses(t *testing.T) {
	c := &Cache{Dir: t.TempDir(), MissTTL: time.Hour}
	if c.Missed("https://a", "x.pdb", "ID", "x.sym") {
		t.Fatal("missed before any miss")
	}
	if err := c.RememberMiss("https://a", "x.pdb", "ID", "x.sym"); err != nil {
		t.Fatal(err)
	}
	if !c.Missed("https://a", "x.pdb", "ID", "x.sym") {
		t.Error("miss not remembered")
	}
	if c.Missed("https://b", "x.pdb", "ID", "x.sym") {
		t.Error("a miss of one server counted for another")
	}
	// Expired.
	p, _ := c.Path(missElems("https://a", []string{"x.pdb", "ID", "x.sym"})...)
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(p, old, old)
	if c.Missed("https://a", "x.pdb", "ID", "x.sym") {
		t.Error("an expired miss still counts")
	}
	off := &Cache{Dir: c.Dir, MissTTL: -1}
	off.RememberMiss("https://a", "y")
	if off.Missed("https://a", "y") {
		t.Error("misses remembered with a negative TTL")
	}
}

// TestTempDir: with TempDir, a file is written there and then moved into
// place (rust-minidump's --symbols-tmp), and nothing is left behind.
func TestTempDir(t *testing.T) {
	c := &Cache{Dir: t.TempDir(), TempDir: filepath.Join(t.TempDir(), "tmp")}
	var during []os.DirEntry
	p, err := c.WriteFunc(func(w io.Writer) error {
		during, _ = os.ReadDir(c.TempDir)
		_, err := io.WriteString(w, "MODULE")
		return err
	}, "a.pdb", "ID", "a.sym")
	if err != nil || p != filepath.Join(c.Dir, "a.pdb", "ID", "a.sym") {
		t.Fatalf("%s, %v", p, err)
	}
	if len(during) != 1 {
		t.Errorf("while writing, %d files in TempDir, want 1", len(during))
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "MODULE" {
		t.Errorf("stored %q, %v", b, err)
	}
	if after, _ := os.ReadDir(c.TempDir); len(after) != 0 {
		t.Errorf("left in TempDir: %v", after)
	}
	// A file copied in from another place still lands whole.
	if p, err := c.copyInto(p, []string{"b"}); err != nil || p != filepath.Join(c.Dir, "b") {
		t.Errorf("copyInto: %s, %v", p, err)
	}
}
