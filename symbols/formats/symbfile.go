package formats

import (
	"io"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dssymbfile "github.com/gobreakpad/gobreakpad/dumpsyms/symbfile"
	"github.com/gobreakpad/gobreakpad/symbfile"
	"github.com/gobreakpad/gobreakpad/symbols"
	symsymbfile "github.com/gobreakpad/gobreakpad/symbols/symbfile"
)

func init() {
	register(&Format{
		Name:        "symbfile",
		Description: "OpenTelemetry eBPF profiler symbfile (ranges; zstd-compressed when named .zst; no unwind information)",
		Exts:        []string{".symbfile"},
		sniff:       func(head []byte) bool { return hasPrefix(head, symbfile.Magic) || symsymbfile.IsZstd(head) },
		read:        dssymbfile.ReadFile,
		write: func(w io.Writer, s *dumpsyms.Model, opts WriteOptions) error {
			return dssymbfile.Write(w, s, dssymbfile.WriteOptions{Binary: opts.Binary})
		},
		noStack: true,
		open: func(path string) (symbols.Lookuper, io.Closer, error) {
			t, err := symbfile.Open(path)
			if err != nil {
				return nil, nil, err
			}
			return &symsymbfile.Table{Table: t}, io.NopCloser(nil), nil
		},
	})
}
