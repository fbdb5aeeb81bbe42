package unwindinfo_test

import (
	"debug/pe"
	"fmt"
	"log"
	"path/filepath"

	"github.com/gobreakpad/gobreakpad/pe/unwindinfo"
)

// The STACK CFI rules of an x64 PE's functions from its .pdata and .xdata:
// after the prolog in symbolic's style, at every instruction in ours. Here
// the PE of cmd/dump_syms/testdata/winprogs/chkstk, its third function.
func ExampleTable_Rules() {
	f, err := pe.Open(filepath.Join("..", "..", "cmd", "dump_syms", "testdata", "winprogs", "chkstk", "big.exe"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	t, err := unwindinfo.New(f)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(t.Functions), "functions")
	for _, style := range []unwindinfo.Style{unwindinfo.StyleSymbolic, unwindinfo.StyleExact} {
		entries, err := t.Rules(style)
		if err != nil {
			log.Fatal(err)
		}
		e := entries[2]
		fmt.Printf("STACK CFI INIT %x %x %s\n", e.Address, e.Size, e.Init)
		for _, c := range e.Changes {
			fmt.Printf("STACK CFI %x %s\n", c.Address, c.Rules)
		}
	}
	// Output:
	// 47 functions
	// STACK CFI INIT 1130 49 .cfa: $rsp 64 + .ra: .cfa 8 - ^
	// STACK CFI INIT 1130 49 .cfa: $rsp 8 + .ra: .cfa 8 - ^
	// STACK CFI 1134 .cfa: $rsp 64 +
	// STACK CFI 1178 .cfa: $rsp 8 +
}
