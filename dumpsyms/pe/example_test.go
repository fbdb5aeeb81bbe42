package pe_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/dumpsyms/pe"
)

// Dump reads a PDB (or a PE and the PDB it names) into the symbol model,
// which writes itself as a Breakpad .sym file (Model.Write). Here a PE
// built by cmd/dump_syms/testdata/winprogs/chkstk/mkchkstk.sh, with its
// PDB beside it.
func ExampleDump() {
	path := filepath.Join("..", "..", "cmd", "dump_syms", "testdata", "winprogs", "chkstk", "big.exe")
	syms, err := pe.Dump(path, dumpsyms.Options{Inlines: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	fmt.Println(syms.Module.OS, syms.Module.Arch, syms.Module.ID, syms.Module.Name)
	for _, f := range syms.Funcs {
		fmt.Printf("FUNC %s, %d lines\n", f.Name, len(f.Lines))
	}
	fmt.Println(len(syms.CFI) > 0, "STACK CFI from .pdata")
	// Output:
	// windows x86_64 439A19FA5FE394FE4C4C44205044422E1 big.pdb
	// FUNC deep(int), 4 lines
	// FUNC outer(int), 4 lines
	// FUNC main(int, char**), 4 lines
	// true STACK CFI from .pdata
}
