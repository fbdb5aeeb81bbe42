package gsym_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/gobreakpad/gobreakpad/gsym"
)

// Write a GSYM file with one function holding an inlined call, then look
// an address up in it as llvm-gsymutil --address does. Open maps a file
// from disk the same way NewFileBytes reads one from memory.
func Example() {
	w := gsym.NewWriter()
	w.UUID = []byte{0xde, 0xad, 0xbe, 0xef}
	src := w.FilePath("/src/main.c")
	hdr := w.FilePath("/src/util.h")
	err := w.Add(&gsym.FunctionInfo{
		Start: 0x1000, Size: 0x20, Name: w.String("main"),
		LineTable: gsym.LineTable{{Address: 0x1000, File: src, Line: 10}, {Address: 0x1008, File: hdr, Line: 3}, {Address: 0x1010, File: src, Line: 12}},
		Inline: &gsym.InlineInfo{Ranges: []gsym.Range{{Start: 0x1000, End: 0x1020}}, Name: w.String("main"), Children: []gsym.InlineInfo{
			{Ranges: []gsym.Range{{Start: 0x1008, End: 0x1010}}, Name: w.String("helper"), CallFile: src, CallLine: 11},
		}},
	})
	if err != nil {
		log.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		log.Fatal(err)
	}

	f, err := gsym.NewFileBytes(buf.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	res, err := f.Lookup(0x100a)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("UUID %x, %d function(s)\n", f.Header.ID(), f.NumFunctions())
	for _, loc := range res.Locations {
		fmt.Printf("%s + %d at %s:%d\n", loc.Name, loc.Offset, loc.Path(), loc.Line)
	}
	// Output:
	// UUID deadbeef, 1 function(s)
	// helper + 2 at /src/util.h:3
	// main + 10 at /src/main.c:11
}
