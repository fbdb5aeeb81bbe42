package elf_test

import (
	"bytes"
	"fmt"
	"log"
	"path/filepath"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/dumpsyms/elf"
	"github.com/gobreakpad/gobreakpad/minidump"
)

// Dump reads an ELF file (and its separate debug file, if any, from
// Options.DebugDirs) into the symbol model, which writes itself as a
// Breakpad .sym file (Model.Write):
//
//	syms, err := elf.Dump("/usr/lib/libfoo.so", dumpsyms.Options{Inlines: true})
//
// DumpImage does the same for an ELF image held in memory. Here the vDSO
// that minidump_capture saved whole in testdata/signal/x64-segv.
func ExampleDumpImage() {
	f, err := minidump.Open(filepath.Join("..", "..", "testdata", "signal", "x64-segv", "crash.dmp"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	mods, err := f.ModuleList()
	if err != nil {
		log.Fatal(err)
	}
	mem, err := f.Memory()
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range mods {
		if m.Name != "linux-gate.so" {
			continue
		}
		image, err := mem.ReadMemory(m.BaseOfImage, int(m.SizeOfImage))
		if err != nil {
			log.Fatal(err)
		}
		syms, err := elf.DumpImage(bytes.NewReader(image), dumpsyms.Options{Name: m.Name})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("MODULE", syms.Module.OS, syms.Module.Arch, syms.Module.ID, syms.Module.Name)
		for _, p := range syms.Publics {
			fmt.Printf("PUBLIC %x %s\n", p.Address, p.Name)
		}
		fmt.Println(len(syms.CFI) > 0, "STACK CFI from .eh_frame")
	}
	// Output:
	// MODULE Linux x86_64 831225E0CE45B76519DAB776555F2B640 linux-gate.so
	// PUBLIC 810 __vdso_gettimeofday
	// PUBLIC ac0 __vdso_time
	// PUBLIC af0 clock_gettime
	// PUBLIC e80 clock_getres
	// PUBLIC f00 __vdso_getcpu
	// PUBLIC f40 __vdso_getrandom
	// true STACK CFI from .eh_frame
}
