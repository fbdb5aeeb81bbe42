package remote

import (
	"sync"

	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// symFiles opens converted .sym files once each.
type symFiles struct {
	mu    sync.Mutex
	files map[string]*symFile
}

type symFile struct {
	once sync.Once
	t    *symfile.Table
	syms *symbols.Symbols
	err  error
}

// open returns the symbols of the .sym file at path, opened once.
func (s *symFiles) open(path string) (*symbols.Symbols, error) {
	s.mu.Lock()
	if s.files == nil {
		s.files = map[string]*symFile{}
	}
	f := s.files[path]
	if f == nil {
		f = &symFile{}
		s.files[path] = f
	}
	s.mu.Unlock()
	f.once.Do(func() {
		f.t, f.err = symfile.Open(path)
		if f.err == nil {
			f.syms = breakpad.Symbols(f.t)
		}
	})
	return f.syms, f.err
}

// Close unmaps the files.
func (s *symFiles) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first error
	for p, f := range s.files {
		if f.t != nil {
			if err := f.t.Close(); err != nil && first == nil {
				first = err
			}
		}
		delete(s.files, p)
	}
	return first
}
