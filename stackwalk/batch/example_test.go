package batch_test

import (
	"context"
	"fmt"
	"log"
	"path/filepath"

	"github.com/gobreakpad/gobreakpad/stackwalk/batch"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
)

// Walk the captured dumps of the test data two at a time, with the symbols
// of each case, and print each dump's crash reason and signature.
func ExampleWalk() {
	dir := filepath.Join("..", "..", "testdata", "capture")
	dumps, _, err := batch.Find([]string{dir})
	if err != nil {
		log.Fatal(err)
	}
	var stores []string
	for _, d := range dumps {
		stores = append(stores, filepath.Join(filepath.Dir(d.Path), "symbols"))
	}
	syms := symbreakpad.NewDirs(stores...)
	defer syms.Close()
	lines, err := batch.Walk(context.Background(), dumps, batch.Options{Symbols: syms, Workers: 2}, func(w batch.Walked) string {
		// Called while the dump is open: keep what is needed of the walk.
		if w.Err != nil {
			return fmt.Sprintf("%s: %v", filepath.Base(filepath.Dir(w.Dump.Path)), w.Err)
		}
		return fmt.Sprintf("%s: %s: %s", filepath.Base(filepath.Dir(w.Dump.Path)), w.State.CrashReason, w.Signature.Signature)
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// arm64-core-segv: SIGSEGV /0x00000000: crash_here
	// x64-core-abort: SIGABRT: libc.so.6@0x8aeec | _fini
	// x64-segv: SIGSEGV /SEGV_MAPERR: crash_here
	// x64-threads: SIGSEGV /SEGV_MAPERR: crash_here
	// x86-core-segv: SIGSEGV /0x00000000: crash_here
	// x86-threads: SIGSEGV /SEGV_MAPERR: crash_here
}
