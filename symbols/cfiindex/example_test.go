package cfiindex_test

import (
	"bytes"
	"fmt"

	"github.com/gobreakpad/gobreakpad/symbols/cfiindex"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// Example indexes a symbol file's unwind records and asks for the CFI rules
// in force at an address.
func Example() {
	tab, err := symfile.Parse([]byte(`MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 m
FUNC 1000 20 0 f
STACK CFI INIT 1000 20 .cfa: $rsp 8 + .ra: .cfa -8 + ^
STACK CFI 1001 .cfa: $rsp 16 +
`))
	if err != nil {
		panic(err)
	}
	var b bytes.Buffer
	if _, err := cfiindex.FromTable(tab).WriteTo(&b); err != nil {
		panic(err)
	}
	x, err := cfiindex.New(b.Bytes())
	if err != nil {
		panic(err)
	}
	rules, _ := x.CFIRules(0x1008, nil)
	fmt.Printf("%q\n", rules)
	// Output: [".cfa: $rsp 8 + .ra: .cfa -8 + ^" ".cfa: $rsp 16 +"]
}
