package formats

import (
	"fmt"
	"io"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/symbols"
	symsymcache "github.com/gobreakpad/gobreakpad/symbols/symcache"
	"github.com/gobreakpad/gobreakpad/symcache"
)

func init() {
	register(&Format{
		Name:        "symcache",
		Description: "Sentry SymCache (versions 7-9; written as version 9; 32-bit addresses, no unwind information)",
		Exts:        []string{".symc"},
		Sniff:       func(head []byte) bool { return hasPrefix(head, symcache.Magic) },
		Read:        ReadSymCache,
		Write:       func(w io.Writer, s *dumpsyms.Symbols) error { return WriteSymCache(w, s, symcache.LatestVersion) },
		NoStack:     true,
		Open:        openSymCache,
	})
	// Older versions on request (-f symcache7): what symbolic before 8.x
	// reads. Files of every version are read as "symcache".
	for _, v := range []uint32{symcache.Version7, symcache.Version8} {
		register(&Format{
			Name:        fmt.Sprintf("symcache%d", v),
			Description: fmt.Sprintf("Sentry SymCache written as version %d (for older readers)", v),
			Read:        ReadSymCache,
			Write:       func(w io.Writer, s *dumpsyms.Symbols) error { return WriteSymCache(w, s, v) },
			NoStack:     true,
			Open:        openSymCache,
		})
	}
}

func openSymCache(path string) (symbols.Lookuper, io.Closer, error) {
	c, err := symcache.Open(path)
	if err != nil {
		return nil, nil, err
	}
	return &symsymcache.Cache{Cache: c}, c, nil
}

// WriteSymCache writes the model as a SymCache of the given version: per
// run of addresses with one line record and inline chain, the chain as
// symfile's lookups give it (the function at the call site of the outermost
// inlined call, each inlined function at the call site of the next, the
// innermost at the line record); PUBLIC records as symbols up to the next
// range. What it loses: addresses at or above 4 GiB, parameter sizes,
// STACK CFI and STACK WIN records, INFO records, the MODULE record's OS and
// name (the debug id and CPU are kept).
func WriteSymCache(w io.Writer, s *dumpsyms.Symbols, version uint32) error {
	b := &symcache.Builder{Version: version, Arch: symcache.ArchFromName(s.Module.Arch)}
	if id, err := symcache.ParseDebugID(s.Module.ID); err == nil {
		b.DebugID = id
	}
	n := modelNames(s)
	var chain []symcache.Loc
	var buf dumpsyms.Function
	for fi := range s.NumFuncs() {
		f := s.Func(fi, &buf, true)
		if len(f.Ranges) == 0 {
			continue
		}
		entry := f.Ranges[0].Address
		for _, r := range f.Ranges {
			entry = min(entry, r.Address)
		}
		entry32 := symcache.None
		if entry < uint64(symcache.None) {
			entry32 = uint32(entry)
		}
		for _, sg := range segments(f) {
			chain = chain[:0]
			chain = append(chain, symcache.Loc{Function: f.Name, EntryPC: entry32})
			for _, ii := range sg.inl {
				in := f.Inlines[ii]
				last := &chain[len(chain)-1]
				last.File, last.Line = n.callFile(in, f, sg), in.CallLine
				chain = append(chain, symcache.Loc{Function: n.origins[in.Origin], EntryPC: symcache.None})
			}
			if sg.line >= 0 {
				l := f.Lines[sg.line]
				last := &chain[len(chain)-1]
				last.File = n.files[l.File]
				if l.Line > 0 && l.Line < int64(symcache.None) {
					last.Line = uint32(l.Line)
				}
			}
			b.Add(sg.start, sg.end, chain)
		}
	}
	for i := range s.NumPublics() {
		p := s.Public(i)
		b.AddSymbol(p.Name, p.Address)
	}
	if _, err := b.WriteTo(w); err != nil {
		return fmt.Errorf("symcache: %w", err)
	}
	return nil
}
