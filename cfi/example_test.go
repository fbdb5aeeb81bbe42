package cfi_test

import (
	"encoding/binary"
	"fmt"

	"github.com/gobreakpad/gobreakpad/cfi"
)

// stack is a little memory: 8-byte words from base.
type stack struct {
	base  uint64
	words []uint64
}

func (s stack) ReadMemory(addr uint64, n int) ([]byte, error) {
	b := make([]byte, 8*len(s.words))
	for i, w := range s.words {
		binary.LittleEndian.PutUint64(b[8*i:], w)
	}
	if addr < s.base || addr-s.base+uint64(n) > uint64(len(b)) {
		return nil, fmt.Errorf("%#x: not in the stack", addr)
	}
	return b[addr-s.base : addr-s.base+uint64(n)], nil
}

// Unwind one x86-64 frame with the STACK CFI rules in force after a
// function's "push rbp; mov rbp, rsp": the INIT record's rules, then its
// delta records up to the address.
func ExampleEvaluator_RuleSet() {
	e, err := cfi.NewEvaluator(8, []string{"$rip", "$rsp", "$rbp"})
	if err != nil {
		fmt.Println(err)
		return
	}
	rules, err := e.RuleSet(
		".cfa: $rsp 8 + .ra: .cfa 8 - ^",    // STACK CFI INIT
		".cfa: $rsp 16 + $rbp: .cfa 16 - ^", // after push rbp
		".cfa: $rbp 16 +",                   // after mov rbp, rsp
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	rip, _ := e.Index("$rip")
	rsp, _ := e.Index("$rsp")
	rbp, _ := e.Index("$rbp")
	var callee, caller cfi.Registers
	callee.Set(rip, 0x401234)
	callee.Set(rsp, 0x7ff0)
	callee.Set(rbp, 0x7ff0)
	// The saved rbp, then the return address.
	mem := stack{base: 0x7ff0, words: []uint64{0x8040, 0x401100}}
	cfa, ra, err := rules.FindCallerRegs(&callee, mem, &caller)
	if err != nil {
		fmt.Println(err)
		return
	}
	callerRBP, _ := caller.Get(rbp)
	fmt.Printf("cfa %#x, return address %#x, caller's rbp %#x\n", cfa, ra, callerRBP)
	// Output:
	// cfa 0x8000, return address 0x401100, caller's rbp 0x8040
}
