package pe

import (
	"fmt"
	"runtime/debug"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/pdb"
)

// dumpMapped runs DumpPDB on a PDB opened by pdb.Open, whose streams may
// be slices of a mapping of the file. A file shortened while it is read (a
// linker rewriting it) makes the pages past its new end fault when
// touched, which would end the process (SIGBUS); here it is an error.
func dumpMapped(f *pdb.File, name string, opts dumpsyms.Options) (syms *dumpsyms.Model, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			fault, ok := r.(interface{ Addr() uintptr })
			if !ok {
				panic(r)
			}
			syms, err = nil, fmt.Errorf("the file changed while it was read (memory fault at %#x): %w", fault.Addr(), pdb.ErrFormat)
		}
	}()
	return DumpPDB(f, name, opts)
}
