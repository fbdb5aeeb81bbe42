package formats

import (
	"fmt"
	"io"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dssymcache "github.com/gobreakpad/gobreakpad/dumpsyms/symcache"
	"github.com/gobreakpad/gobreakpad/symbols"
	symsymcache "github.com/gobreakpad/gobreakpad/symbols/symcache"
	"github.com/gobreakpad/gobreakpad/symcache"
)

func init() {
	register(&Format{
		Name:        "symcache",
		Description: "Sentry SymCache (versions 7-9; written as version 9; 32-bit addresses, no unwind information)",
		Exts:        []string{".symc"},
		sniff:       func(head []byte) bool { return hasPrefix(head, symcache.Magic) },
		read:        dssymcache.ReadFile,
		write:       writeSymCache(symcache.LatestVersion),
		noStack:     true,
		open:        openSymCache,
	})
	// Older versions on request (-f symcache7): what symbolic before 8.x
	// reads. Files of every version are read as "symcache".
	for _, v := range []uint32{symcache.Version7, symcache.Version8} {
		register(&Format{
			Name:        fmt.Sprintf("symcache%d", v),
			Description: fmt.Sprintf("Sentry SymCache written as version %d (for older readers)", v),
			read:        dssymcache.ReadFile,
			write:       writeSymCache(v),
			noStack:     true,
			open:        openSymCache,
		})
	}
}

// writeSymCache returns the writer of SymCache version v.
func writeSymCache(v uint32) func(io.Writer, *dumpsyms.Model, WriteOptions) error {
	return func(w io.Writer, s *dumpsyms.Model, _ WriteOptions) error { return dssymcache.Write(w, s, v) }
}

func openSymCache(path string) (symbols.Lookuper, io.Closer, error) {
	c, err := symcache.Open(path)
	if err != nil {
		return nil, nil, err
	}
	return &symsymcache.Table{Cache: c}, c, nil
}
