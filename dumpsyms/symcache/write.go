// Package symcache converts between the project's symbol model (package
// dumpsyms) and Sentry's SymCache files (package symcache): Write makes a
// SymCache of a model, so of a Breakpad .sym file or of an ELF file's DWARF;
// Read and ReadFile make a model of a SymCache, so that one converts back to
// a .sym. docs/symcache.md records what the format cannot hold.
package symcache

import (
	"fmt"
	"io"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/dumpsyms/internal/segment"
	"github.com/gobreakpad/gobreakpad/symcache"
)

// Write writes the model as a SymCache of the given version: per
// run of addresses with one line record and inline chain, the chain as
// symfile's lookups give it (the function at the call site of the outermost
// inlined call, each inlined function at the call site of the next, the
// innermost at the line record); PUBLIC records as symbols up to the next
// range (but at address 0, which .sym lookups ignore). What it loses: addresses at or above 4 GiB, parameter sizes,
// STACK CFI and STACK WIN records, INFO records, the MODULE record's OS and
// name (the debug id and CPU are kept).
func Write(w io.Writer, s *dumpsyms.Model, version uint32) error {
	b := &symcache.Builder{Version: version, Arch: symcache.ArchFromName(s.Module.Arch)}
	if id, err := symcache.ParseDebugID(s.Module.ID); err == nil {
		b.DebugID = id
	}
	n := segment.NamesOf(s)
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
		for _, sg := range segment.Of(f) {
			chain = chain[:0]
			chain = append(chain, symcache.Loc{Function: f.Name, EntryPC: entry32})
			for _, ii := range sg.Inl {
				in := f.Inlines[ii]
				last := &chain[len(chain)-1]
				last.File, last.Line = n.CallFile(in, f, sg), in.CallLine
				chain = append(chain, symcache.Loc{Function: n.Origins[in.Origin], EntryPC: symcache.None})
			}
			if sg.Line >= 0 {
				l := f.Lines[sg.Line]
				last := &chain[len(chain)-1]
				last.File = n.Files[l.File]
				if l.Line > 0 && l.Line < int64(symcache.None) {
					last.Line = uint32(l.Line)
				}
			}
			b.Add(sg.Start, sg.End, chain)
		}
	}
	for i := range s.NumPublics() {
		p := s.Public(i)
		if p.Address == 0 {
			// Breakpad's resolver (and symfile) ignore PUBLIC records
			// at 0: the SymCache answers as the .sym file does.
			continue
		}
		b.AddSymbol(p.Name, p.Address)
	}
	if _, err := b.WriteTo(w); err != nil {
		return fmt.Errorf("symcache: %w", err)
	}
	return nil
}
