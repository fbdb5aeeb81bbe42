package symbfile_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/gobreakpad/gobreakpad/symbfile"
)

// Write a symbfile of one function with a call inlined into it, then read
// it back and look addresses up: frames innermost first, each with its
// function and source position (for outer frames, the call site).
func Example() {
	var buf bytes.Buffer
	w := symbfile.NewWriter(&buf)
	w.AddRange(symbfile.Range{Start: 0x1100, Length: 0x40, Func: "render", File: "/src/demo.c",
		Lines: []symbfile.LineEntry{{Addr: 0x1100, Line: 20}, {Addr: 0x1120, Line: 22}}})
	w.AddRange(symbfile.Range{Start: 0x1108, Length: 0x18, Func: "draw_pixel", File: "/src/canvas.h",
		Depth: 1, CallLine: 21, Lines: []symbfile.LineEntry{{Addr: 0x1108, Line: 9}}})
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}

	t, err := symbfile.Parse(buf.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	for _, addr := range []uint64{0x1104, 0x1110} {
		fmt.Printf("%#x:\n", addr)
		for _, f := range t.Lookup(addr) {
			fmt.Printf("  %s %s:%d\n", f.Func, f.File, f.Line)
		}
	}
	// Output:
	// 0x1104:
	//   render /src/demo.c:20
	// 0x1110:
	//   draw_pixel /src/canvas.h:9
	//   render /src/demo.c:21
}
