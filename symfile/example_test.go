package symfile_test

import (
	"fmt"
	"log"
	"path/filepath"

	"github.com/gobreakpad/gobreakpad/symfile"
)

// Read a .sym file and look an address (relative to the module's base) up.
func ExampleOpen() {
	path, err := filepath.Glob(filepath.Join("..", "testdata", "walk", "symbols", "demo", "*", "demo.sym"))
	if err != nil || len(path) != 1 {
		log.Fatal("example symbol file not found")
	}
	t, err := symfile.Open(path[0])
	if err != nil {
		log.Fatal(err)
	}
	defer t.Close()
	for _, addr := range []uint64{0x1110, 0x115a, 0x5000} {
		s, ok := t.Lookup(addr)
		if !ok {
			fmt.Printf("%#x: no symbol\n", addr)
			continue
		}
		fmt.Printf("%#x: %s+%#x %s:%d", addr, s.Name, addr-s.Address, filepath.Base(s.File), s.Line)
		for _, in := range s.Inlines {
			fmt.Printf(" (inlined %s)", in.Name)
		}
		fmt.Println()
	}
	// Output:
	// 0x1110: render+0x10 canvas.h:9 (inlined draw_pixel)
	// 0x115a: main+0x1a demo.c:31
	// 0x5000: no symbol
}
