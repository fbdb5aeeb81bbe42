package formats

import (
	"cmp"
	"io"
	"slices"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/symbfile"
	"github.com/gobreakpad/gobreakpad/symbols"
	symsymbfile "github.com/gobreakpad/gobreakpad/symbols/symbfile"
	"github.com/gobreakpad/gobreakpad/symfile"
)

func init() {
	register(&Format{
		Name:        "symbfile",
		Description: "OpenTelemetry eBPF profiler symbfile (ranges; zstd-compressed when named .zst; no unwind information)",
		Exts:        []string{".symbfile"},
		Sniff:       func(head []byte) bool { return hasPrefix(head, symbfile.Magic) || symsymbfile.IsZstd(head) },
		Read:        ReadSymbfile,
		Write:       WriteSymbfile,
		NoStack:     true,
		Open: func(path string) (symbols.Lookuper, io.Closer, error) {
			t, err := symbfile.Open(path)
			if err != nil {
				return nil, nil, err
			}
			return &symsymbfile.Table{Table: t}, io.NopCloser(nil), nil
		},
	})
}

// WriteSymbfile writes the model as a symbfile: a depth-0 range per FUNC
// range, a range at depth d+1 per range of each INLINE record at depth d,
// and each range's line table from the line records of its own code (not
// covered by deeper calls), cut where the line records' source file
// changes (a range has one file; the pieces after the first start at their
// first line, so only frames without a line there see a later function
// base). What it loses: module identity, PUBLIC records' extent past the next symbol (the last is
// one byte long), parameter sizes,
// STACK CFI and STACK WIN. Return pads only for a model read from an ELF
// file (format "elf"): one per call instruction found by decoding each
// function's code (x86-64, i386, arm64), with the inline stack at the
// return address minus one.
func WriteSymbfile(w io.Writer, s *dumpsyms.Symbols) error {
	n := modelNames(s)
	sw := symbfile.NewWriter(w)
	elf, isELF := elfPath(s)
	var all []symbfile.Range        // every function's, for return pads (ELF only)
	type key struct{ inl, rng int } // inl -1: the function's own range rng
	var buf dumpsyms.Function
	var fr []funcRanges // every function's ranges, for PUBLIC records and return pads
	for fi := range s.NumFuncs() {
		f := s.Func(fi, &buf, true)
		fr = append(fr, funcRanges{slices.Clone(f.Ranges)})
		var ranges []symbfile.Range
		at := map[key]int{}
		for ri, r := range f.Ranges {
			at[key{-1, ri}] = len(ranges)
			ranges = append(ranges, symbfile.Range{Start: r.Address, Length: r.Size, Func: f.Name})
		}
		for ii, in := range f.Inlines {
			cf := ""
			if in.HasCallFile && in.CallFile >= 0 {
				cf = n.files[uint32(in.CallFile)]
			}
			for ri, r := range in.Ranges {
				at[key{ii, ri}] = len(ranges)
				ranges = append(ranges, symbfile.Range{Start: r.Address, Length: r.Size, Func: n.origins[in.Origin],
					Depth: in.Depth + 1, CallLine: in.CallLine, CallFile: cf})
			}
		}
		for _, sg := range segments(f) {
			k := key{-1, -1}
			if d := len(sg.inl); d > 0 {
				k = key{sg.inl[d-1], sg.rng[d-1]}
			} else {
				for ri, r := range f.Ranges {
					if sg.start >= r.Address && sg.start-r.Address < r.Size {
						k = key{-1, ri}
						break
					}
				}
			}
			i, ok := at[k]
			if !ok {
				continue
			}
			r := &ranges[i]
			line := uint32(0)
			if sg.line >= 0 {
				l := f.Lines[sg.line]
				if l.Line > 0 && l.Line <= 1<<32-1 {
					line = uint32(l.Line)
				}
				if file := n.files[l.File]; r.File == "" {
					r.File = file
				} else if file != r.File && len(r.Lines) > 0 && sg.start > r.Start && sg.start < r.End() {
					// A range has one file: the rest of the range,
					// from here, becomes a range of its own. No
					// deeper range crosses sg.start (this code is
					// the range's own), so nesting holds.
					rest := *r
					rest.Start, rest.Length, rest.File, rest.Lines = sg.start, r.End()-sg.start, file, nil
					r.Length = sg.start - r.Start
					at[k] = len(ranges)
					ranges = append(ranges, rest)
					r = &ranges[len(ranges)-1]
				}
			}
			// Consecutive records of one line stay apart: a line
			// record's start is where frames count their offset from.
			if len(r.Lines) == 0 && line == 0 {
				continue
			}
			r.Lines = append(r.Lines, symbfile.LineEntry{Addr: sg.start, Line: line})
		}
		for _, r := range ranges {
			sw.AddRange(r)
		}
		if isELF {
			all = append(all, ranges...)
		}
	}
	// PUBLIC records outside every FUNC: depth-0 ranges without lines up
	// to the next FUNC or PUBLIC (the last one byte long).
	var starts []uint64
	for _, f := range fr {
		for _, r := range f.ranges {
			starts = append(starts, r.Address)
		}
	}
	for i := range s.NumPublics() {
		starts = append(starts, s.Public(i).Address)
	}
	slices.Sort(starts)
	starts = slices.Compact(starts)
	for i := range s.NumPublics() {
		p := s.Public(i)
		if covered(fr, p.Address) {
			continue
		}
		i, _ := slices.BinarySearch(starts, p.Address)
		size := uint64(1)
		if i+1 < len(starts) {
			size = starts[i+1] - p.Address
		}
		sw.AddRange(symbfile.Range{Start: p.Address, Length: size, Func: p.Name})
	}
	// A model read from an ELF file: a return pad per call instruction.
	if isELF {
		for _, p := range returnPads(fr, elf, symbfile.NewTable(all, nil)) {
			sw.AddReturnPad(p)
		}
	}
	return sw.Flush()
}

// funcRanges are a function's ranges.
type funcRanges struct{ ranges []symfile.Range }

// covered reports whether a FUNC range holds addr; fs are the model's
// functions' ranges, in its order.
func covered(fs []funcRanges, addr uint64) bool {
	i, _ := slices.BinarySearchFunc(fs, addr, func(f funcRanges, a uint64) int {
		if len(f.ranges) == 0 {
			return -1
		}
		return cmp.Compare(f.ranges[0].Address, a)
	})
	for _, j := range []int{i - 1, i} {
		if j < 0 || j >= len(fs) {
			continue
		}
		for _, r := range fs[j].ranges {
			if addr >= r.Address && addr-r.Address < r.Size {
				return true
			}
		}
	}
	return false
}
