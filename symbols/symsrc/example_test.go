package symsrc_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/symbols/symsrc"
)

// Open the sources of a command line, a local Breakpad store and a
// Breakpad-layout HTTP store, and walk a dump through them. The program's
// symbol file is split in two: the local store keeps its names and lines,
// the HTTP store its unwind rules (STACK CFI). The chain takes each kind of
// information from the first source that has it, so the frames' names come
// from the local store and the frames found by call frame info from the
// server.
func Example() {
	dir := filepath.Join("..", "..", "testdata", "capture", "x64-segv")
	rel := filepath.Join("crasher-x64", "18BAFF1081380C82C6A55BB5BDB2732F0", "crasher-x64.sym")
	sym, err := os.ReadFile(filepath.Join(dir, "symbols", rel))
	if err != nil {
		log.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "symsrc-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	var names, rules strings.Builder
	for _, line := range strings.SplitAfter(string(sym), "\n") {
		switch {
		case strings.HasPrefix(line, "MODULE ") || strings.HasPrefix(line, "INFO "):
			names.WriteString(line)
			rules.WriteString(line)
		case strings.HasPrefix(line, "STACK "):
			rules.WriteString(line)
		default:
			names.WriteString(line)
		}
	}
	write := func(root, text string) {
		p := filepath.Join(tmp, root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	write("local", names.String())
	write("served", rules.String())
	srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Join(tmp, "served"))))
	defer srv.Close()

	// As minidump_stackwalk DUMP LOCAL URL --symbols-cache CACHE builds them
	// (the environment's $_NT_SYMBOL_PATH and $DEBUGINFOD_URLS left out).
	srcs, err := symsrc.Open(symsrc.Config{
		Paths:    []string{filepath.Join(tmp, "local"), srv.URL},
		CacheDir: filepath.Join(tmp, "cache"),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srcs.Close()
	f, err := minidump.Open(filepath.Join(dir, "crash.dmp"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	p, err := stackwalk.Process(f, stackwalk.Options{Symbols: srcs})
	if err != nil {
		log.Fatal(err)
	}
	for _, fr := range p.Threads[p.RequestingThread].Frames[:5] {
		fmt.Printf("%s [%s:%d] found by %v\n", fr.Function, filepath.Base(fr.SourceFile), fr.SourceLine, fr.Trust)
	}
	fmt.Println("served:", srcs.Requests() > 0)
	// Output:
	// crash_here [crasher.c:54] found by given as instruction pointer in context
	// level3 [crasher.c:57] found by call frame info
	// level2 [crasher.c:58] found by call frame info
	// level1 [crasher.c:59] found by call frame info
	// main [crasher.c:116] found by call frame info
	// served: true
}
