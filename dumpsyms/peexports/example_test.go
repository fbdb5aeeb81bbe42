package peexports_test

import (
	"debug/pe"
	"fmt"
	"log"
	"path/filepath"

	"github.com/gobreakpad/gobreakpad/dumpsyms/peexports"
	"github.com/gobreakpad/gobreakpad/pe/unwindinfo"
)

// Writing the symbol records of an executable whose PDB is not at hand, as
// Breakpad's Windows dump_syms does (s.Write writes the .sym file): the
// MODULE and INFO records, its exports and the STACK CFI of its .pdata.
// Here the PE of cmd/dump_syms/testdata/winprogs/chkstk.
func ExampleDump() {
	f, err := pe.Open(filepath.Join("..", "..", "cmd", "dump_syms", "testdata", "winprogs", "chkstk", "big.exe"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	s, err := peexports.Dump(f, "big.exe", peexports.Options{Style: unwindinfo.StyleBreakpad})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("MODULE", s.Module.OS, s.Module.Arch, s.Module.ID, s.Module.Name)
	fmt.Println("INFO CODE_ID", s.CodeID.ID, s.CodeID.File)
	fmt.Println(len(s.Publics), "exports,", len(s.CFI) > 0, "STACK CFI")
	// Output:
	// MODULE windows x86_64 439A19FA5FE394FE4C4C44205044422E1 big.pdb
	// INFO CODE_ID AEDA7C22A000 big.exe
	// 0 exports, true STACK CFI
}
