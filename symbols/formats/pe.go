package formats

import (
	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dspe "github.com/gobreakpad/gobreakpad/dumpsyms/pe"
	"github.com/gobreakpad/gobreakpad/pdb"
)

func init() {
	read := func(path string, warn Warn) (*dumpsyms.Model, error) {
		return dspe.Dump(path, dumpsyms.Options{Inlines: true, Warn: warn})
	}
	register(&Format{
		Name:        "pdb",
		Description: "Windows PDB (MSF 7.00), with the PE beside it when there (read as dump_syms reads it)",
		sniff:       func(head []byte) bool { return hasPrefix(head, pdb.Magic) },
		read:        read,
	})
	register(&Format{
		Name:        "pe",
		Description: "Windows PE (.exe, .dll) with the PDB its CodeView record names beside it, else what the PE alone holds (as dump_syms reads it)",
		sniff:       func(head []byte) bool { return hasPrefix(head, "MZ") },
		read:        read,
	})
}
