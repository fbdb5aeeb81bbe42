package symbols

import "sync"

// Files opens each symbol file once, however many modules and goroutines
// ask for it, and closes them all on Close: the part every format's store
// shares. T is what the format's reader returns for an open file.
type Files[T any] struct {
	// Open opens the file at path and returns it with the symbols it
	// gives; CloseFile releases it (nil: nothing to release).
	Open      func(path string) (T, *Symbols, error)
	CloseFile func(T) error

	mu    sync.Mutex
	files map[string]*openFile[T]
}

type openFile[T any] struct {
	once sync.Once
	f    T
	syms *Symbols
	err  error
	ok   bool
}

// Load returns the file at path and its symbols, opening it on first use.
// Different files open concurrently.
func (s *Files[T]) Load(path string) (T, *Symbols, error) {
	s.mu.Lock()
	if s.files == nil {
		s.files = map[string]*openFile[T]{}
	}
	of := s.files[path]
	if of == nil {
		of = &openFile[T]{}
		s.files[path] = of
	}
	s.mu.Unlock()
	of.once.Do(func() {
		of.f, of.syms, of.err = s.Open(path)
		of.ok = of.err == nil
	})
	return of.f, of.syms, of.err
}

// Close releases every file opened; the symbols loaded through s must not
// be used afterwards. It returns the first error.
func (s *Files[T]) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first error
	for p, of := range s.files {
		if of.ok && s.CloseFile != nil {
			if err := s.CloseFile(of.f); err != nil && first == nil {
				first = err
			}
		}
		delete(s.files, p)
	}
	return first
}

// Once runs one conversion per key, however many goroutines ask: the
// converting sources (symbols/elfsyms, symbols/pdbsyms, symbols/remote) make
// each module's file once. The zero value is ready to use.
type Once struct {
	mu sync.Mutex
	m  map[string]*onceEntry
}

type onceEntry struct {
	once sync.Once
	path string
	err  error
}

// Do returns the result of f for key (a path), running f the first time
// only; later and concurrent callers get the first call's result.
func (o *Once) Do(key string, f func() (string, error)) (string, error) {
	o.mu.Lock()
	if o.m == nil {
		o.m = map[string]*onceEntry{}
	}
	e := o.m[key]
	if e == nil {
		e = &onceEntry{}
		o.m[key] = e
	}
	o.mu.Unlock()
	e.once.Do(func() { e.path, e.err = f() })
	return e.path, e.err
}
