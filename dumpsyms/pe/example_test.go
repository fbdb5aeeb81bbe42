package pe_test

import (
	"fmt"
	"os"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/dumpsyms/pe"
)

// Dump reads a PDB (or a PE and the PDB it names) into the symbol model,
// which writes itself as a Breakpad .sym file.
func ExampleDump() {
	syms, err := pe.Dump("app.pdb", dumpsyms.Options{Inlines: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	fmt.Println(syms.Module.ID, len(syms.Funcs), "functions")
	syms.Write(os.Stdout)
}
