package minidump_test

import (
	"fmt"
	"log"
	"path/filepath"

	"github.com/gobreakpad/gobreakpad/minidump"
)

// Open a minidump and read its system info, threads and modules.
func ExampleOpen() {
	f, err := minidump.Open(filepath.Join("..", "testdata", "walk", "crash.dmp"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	sys, err := f.SystemInfo()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("cpu:", sys.CPU(), "os:", sys.OSName())
	threads, _ := f.ThreadList()
	for _, t := range threads {
		fmt.Printf("thread %d: pc %#x\n", t.ThreadID, t.Context.InstructionPointer())
	}
	mods, _ := f.ModuleList()
	for _, m := range mods {
		fmt.Printf("module %s at %#x, debug id %s\n", filepath.Base(m.CodeFile()), m.BaseOfImage, m.DebugIdentifier())
	}
	// Output:
	// cpu: amd64 os: linux
	// thread 1234: pc 0x555555555110
	// module demo at 0x555555554000, debug id 6F6D6564622D69756C642D69640000000
}
