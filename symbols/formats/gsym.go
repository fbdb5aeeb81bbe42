package formats

import (
	"encoding/binary"
	"io"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dsgsym "github.com/gobreakpad/gobreakpad/dumpsyms/gsym"
	"github.com/gobreakpad/gobreakpad/gsym"
	"github.com/gobreakpad/gobreakpad/symbols"
	symgsym "github.com/gobreakpad/gobreakpad/symbols/gsym"
)

func init() {
	register(&Format{
		Name:        "gsym",
		Description: "LLVM GSYM file (llvm-gsymutil), version 1",
		Exts:        []string{".gsym"},
		sniff: func(head []byte) bool {
			return len(head) >= 4 && (binary.LittleEndian.Uint32(head) == gsym.Magic || binary.BigEndian.Uint32(head) == gsym.Magic)
		},
		read: dsgsym.ReadFile,
		write: func(w io.Writer, s *dumpsyms.Model, _ WriteOptions) error {
			return dsgsym.Write(w, s, nil)
		},
		noStack: true,
		// Lookups take addresses as the file stores them, as
		// llvm-gsymutil --address does.
		open: func(path string) (symbols.Lookuper, io.Closer, error) {
			f, err := gsym.Open(path)
			if err != nil {
				return nil, nil, err
			}
			return &symgsym.Lookuper{File: f, Absolute: true}, f, nil
		},
	})
}
