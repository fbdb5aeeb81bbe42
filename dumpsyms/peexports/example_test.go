package peexports_test

import (
	"debug/pe"
	"log"
	"os"

	"github.com/gobreakpad/gobreakpad/dumpsyms/peexports"
	"github.com/gobreakpad/gobreakpad/pe/unwindinfo"
)

// Writing the symbol file of a DLL whose PDB is not at hand, as Breakpad's
// Windows dump_syms does.
func ExampleDump() {
	f, err := pe.Open("pe_only_symbol_test.dll")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	s, err := peexports.Dump(f, "pe_only_symbol_test.dll", peexports.Options{Style: unwindinfo.StyleBreakpad})
	if err != nil {
		log.Fatal(err)
	}
	if err := s.Write(os.Stdout); err != nil {
		log.Fatal(err)
	}
}
