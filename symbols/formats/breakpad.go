package formats

import (
	"io"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dsbreakpad "github.com/gobreakpad/gobreakpad/dumpsyms/breakpad"
	"github.com/gobreakpad/gobreakpad/symbols"
	symbreakpad "github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symfile"
)

func init() {
	register(&Format{
		Name:        "breakpad",
		Description: "Breakpad text symbol file",
		Exts:        []string{".sym"},
		sniff:       func(head []byte) bool { return hasPrefix(head, "MODULE ") },
		read:        dsbreakpad.ReadFile,
		readLazy:    dsbreakpad.Open,
		write:       func(w io.Writer, s *dumpsyms.Model, _ WriteOptions) error { return s.Write(w) },
		open: func(path string) (symbols.Lookuper, io.Closer, error) {
			t, err := symfile.OpenLookups(path)
			if err != nil {
				return nil, nil, err
			}
			return &symbreakpad.Table{Table: t}, t, nil
		},
	})
}
