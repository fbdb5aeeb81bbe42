package dumptext_test

import (
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/dumptext"
)

// ExampleWrite prints a Linux dump as Breakpad's minidump_dump does, and
// shows its stream summary and why minidump_dump would exit with status 1
// (Linux dumps have no memory info list).
func ExampleWrite() {
	f, err := minidump.Open("../../testdata/walk/crash.dmp")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	var out strings.Builder
	err = dumptext.Write(&out, f, dumptext.Options{})
	_, streams, _ := strings.Cut(out.String(), "Streams:\n")
	streams, _, _ = strings.Cut(streams, "\n\n")
	fmt.Println(streams)

	var problems dumptext.Problems
	if errors.As(err, &problems) {
		for _, p := range problems {
			fmt.Println("problem:", p)
		}
	}
	// Output:
	//   stream type 0x3 (MD_THREAD_LIST_STREAM) at index 0
	//   stream type 0x4 (MD_MODULE_LIST_STREAM) at index 1
	//   stream type 0x5 (MD_MEMORY_LIST_STREAM) at index 2
	//   stream type 0x6 (MD_EXCEPTION_STREAM) at index 3
	//   stream type 0x7 (MD_SYSTEM_INFO_STREAM) at index 4
	//   stream type 0xf (MD_MISC_INFO_STREAM) at index 5
	// problem: MD_MEMORY_INFO_LIST_STREAM: stream not present
}
