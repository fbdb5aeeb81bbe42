// Package corpus locates the shared test corpus (../shared/corpus beside the
// project root) for tests and benchmarks, skipping them when it is absent.
package corpus

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Root returns the absolute path of the project root (the directory holding go.mod).
func Root() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "."
	}
	// file is <root>/internal/testkit/corpus/corpus.go
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Path returns the absolute path of the shared corpus folder, whether or not it exists.
// GOBREAKPAD_CORPUS overrides the default location ../shared/corpus beside the project root.
func Path() string {
	if p := os.Getenv("GOBREAKPAD_CORPUS"); p != "" {
		return p
	}
	return filepath.Join(filepath.Dir(Root()), "shared", "corpus")
}

// Dir returns the shared corpus folder, or skips the test (or benchmark) with a
// clear message when it is absent.
func Dir(tb testing.TB) string {
	tb.Helper()
	p := Path()
	if st, err := os.Stat(p); err != nil || !st.IsDir() {
		tb.Skipf("shared corpus not found at %s: skipping (set GOBREAKPAD_CORPUS or place ../shared/corpus beside the project)", p)
	}
	return p
}

// File returns the absolute path of a file inside the corpus, skipping the test when the corpus
// or that file is absent.
func File(tb testing.TB, rel string) string {
	tb.Helper()
	p := filepath.Join(Dir(tb), filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("corpus file %s not found: skipping", p)
	}
	return p
}
