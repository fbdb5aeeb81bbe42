package symcache_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/gobreakpad/gobreakpad/symcache"
)

// Build a SymCache of one function with a call inlined into it, then look
// addresses up: each answer is the inline chain, innermost first.
func Example() {
	id, _ := symcache.ParseDebugID("0123456789ABCDEF0123456789ABCDEF1")
	b := &symcache.Builder{DebugID: id, Arch: symcache.ArchAmd64}
	// render at 0x1100-0x1140; draw_pixel (canvas.h:9) inlined from
	// demo.c:21 at 0x1108-0x1120.
	b.Add(0x1100, 0x1108, []symcache.Loc{{Function: "render", EntryPC: 0x1100, File: "/src/demo.c", Line: 20}})
	b.Add(0x1108, 0x1120, []symcache.Loc{
		{Function: "render", EntryPC: 0x1100, File: "/src/demo.c", Line: 21},
		{Function: "draw_pixel", EntryPC: symcache.None, File: "/src/canvas.h", Line: 9},
	})
	b.Add(0x1120, 0x1140, []symcache.Loc{{Function: "render", EntryPC: 0x1100, File: "/src/demo.c", Line: 22}})
	var buf bytes.Buffer
	if _, err := b.WriteTo(&buf); err != nil {
		log.Fatal(err)
	}

	c, err := symcache.Parse(buf.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("version", c.Version, "debug id", c.DebugID, c.Arch)
	for _, addr := range []uint64{0x1104, 0x1110, 0x1150} {
		fmt.Printf("%#x:\n", addr)
		for _, l := range c.Lookup(addr) {
			fmt.Printf("  %s %s:%d\n", l.Function, l.File, l.Line)
		}
	}
	// Output:
	// version 9 debug id 0123456789ABCDEF0123456789ABCDEF1 x86_64
	// 0x1104:
	//   render /src/demo.c:20
	// 0x1110:
	//   draw_pixel /src/canvas.h:9
	//   render /src/demo.c:21
	// 0x1150:
}
