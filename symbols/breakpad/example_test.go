package breakpad_test

import (
	"fmt"
	"log"
	"path/filepath"

	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/breakpad"
)

// Walk a minidump with the symbol files of a Breakpad symbol store, chained
// before a second store that is asked only for what the first lacks.
func Example() {
	dir := filepath.Join("..", "..", "testdata", "capture", "x64-segv")
	f, err := minidump.Open(filepath.Join(dir, "crash.dmp"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	store := breakpad.NewDirs(filepath.Join(dir, "symbols"))
	defer store.Close()
	other := breakpad.NewDirs(filepath.Join(dir, "no-such-store"))
	p, err := stackwalk.Process(f, stackwalk.Options{Symbols: symbols.Chain{store, other}})
	if err != nil {
		log.Fatal(err)
	}
	// The first frames of the crashed thread: the program's own code.
	for _, fr := range p.Threads[p.RequestingThread].Frames[:5] {
		fmt.Printf("%s [%s:%d] found by %v\n", fr.Function, filepath.Base(fr.SourceFile), fr.SourceLine, fr.Trust)
	}
	// Output:
	// crash_here [crasher.c:54] found by given as instruction pointer in context
	// level3 [crasher.c:57] found by call frame info
	// level2 [crasher.c:58] found by call frame info
	// level1 [crasher.c:59] found by call frame info
	// main [crasher.c:116] found by call frame info
}
