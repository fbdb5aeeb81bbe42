package symbols_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gobreakpad/gobreakpad/symbols"
)

func TestFilesOpenOnce(t *testing.T) {
	var opened, closed atomic.Int32
	bad := errors.New("bad file")
	fs := symbols.Files[string]{
		Open: func(p string) (string, *symbols.Symbols, error) {
			opened.Add(1)
			if p == "bad" {
				return "", nil, bad
			}
			return p, &symbols.Symbols{Lookup: named(p)}, nil
		},
		CloseFile: func(string) error { closed.Add(1); return nil },
	}
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := []string{"a", "b", "bad"}[i%3]
			f, s, err := fs.Load(p)
			if p == "bad" {
				if !errors.Is(err, bad) {
					t.Errorf("bad: err %v", err)
				}
				return
			}
			if err != nil || f != p || s == nil {
				t.Errorf("%s: %q %v %v", p, f, s, err)
			}
		}()
	}
	wg.Wait()
	if n := opened.Load(); n != 3 {
		t.Errorf("%d opens for 3 files", n)
	}
	if err := fs.Close(); err != nil || closed.Load() != 2 {
		t.Errorf("Close: %v, %d files closed, want the 2 opened", err, closed.Load())
	}
	fs.Load("a")
	if opened.Load() != 4 {
		t.Error("a file loaded after Close was not opened anew")
	}
}
