package stackwalk_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
)

// Read a minidump, walk its threads with the symbols of a Breakpad symbol
// store, and print the crashed thread's frames as minidump_stackwalk -b does.
func ExampleRead() {
	dir := filepath.Join("..", "testdata", "capture", "x64-segv")
	f, err := minidump.Open(filepath.Join(dir, "crash.dmp"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	p, err := stackwalk.Read(f)
	if err != nil {
		log.Fatal(err)
	}
	// Read has chosen the threads and the crash, without walking.
	fmt.Printf("%s at %#x, %d threads, %d frames\n", p.CrashReason, p.CrashAddress, len(p.Threads), len(p.Threads[p.RequestingThread].Frames))
	store := symbreakpad.NewDirs(filepath.Join(dir, "symbols"))
	defer store.Close()
	p.Walk(stackwalk.Options{Symbols: store, Workers: 2})
	if err := stackwalk.PrintBrief(os.Stdout, p); err != nil {
		log.Fatal(err)
	}
	// Output:
	// SIGSEGV /SEGV_MAPERR at 0x0, 1 threads, 0 frames
	// Thread 0 (crashed)
	//  0  crasher-x64!crash_here [crasher.c : 54 + 0x0]
	//  1  crasher-x64!level3 [crasher.c : 57 + 0x5]
	//  2  crasher-x64!level2 [crasher.c : 58 + 0x5]
	//  3  crasher-x64!level1 [crasher.c : 59 + 0x5]
	//  4  crasher-x64!main [crasher.c : 116 + 0xa]
	//  5  libc.so.6 + 0x2724a
	//  6  crasher-x64!crasher_thread [crasher.c : 73 + 0xa]
	//  7  0x200000000
	//  8  crasher-x64!_fini + 0x289c
	//  9  ld-linux-x86-64.so.2 + 0x33020
	// 10  libc.so.6 + 0x27305
	// 11  crasher-x64!crasher_thread [crasher.c : 73 + 0xa]
	// 12  crasher-x64!_fini + 0x289c
	// 13  crasher-x64!_init + 0x100
	// 14  crasher-x64!_start + 0x21
}
