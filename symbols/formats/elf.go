package formats

import (
	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dself "github.com/gobreakpad/gobreakpad/dumpsyms/elf"
)

func init() {
	register(&Format{
		Name:        "elf",
		Description: "ELF binary or debug file with DWARF (read as dump_syms -d reads it)",
		sniff:       func(head []byte) bool { return hasPrefix(head, "\x7fELF") },
		read: func(path string, warn Warn) (*dumpsyms.Model, error) {
			return dself.Dump(path, dumpsyms.Options{Inlines: true, Warn: warn})
		},
		binary: true, // its code: symbfile return pads (ReadFor)
	})
}
