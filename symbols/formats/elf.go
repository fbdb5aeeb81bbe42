package formats

import (
	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/dumpsyms/elf"
)

func init() {
	register(&Format{
		Name:        "elf",
		Description: "ELF binary or debug file with DWARF (read as dump_syms -d reads it)",
		Sniff:       func(head []byte) bool { return hasPrefix(head, "\x7fELF") },
		Read: func(path string, warn func(string, ...any)) (*dumpsyms.Symbols, error) {
			s, err := elf.Dump(path, dumpsyms.Options{Inlines: true, Warn: warn})
			if err == nil {
				rememberELF(s, path) // for return pads (WriteSymbfile)
			}
			return s, err
		},
	})
}
