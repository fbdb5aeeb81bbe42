// Package symbfile converts between the project's symbol model (package
// dumpsyms) and the OpenTelemetry eBPF profiler's symbfiles (package
// symbfile): Write makes a symbfile of a model, so of a Breakpad .sym file or
// of an ELF file's DWARF (with return pads decoded from the ELF's code when
// WriteOptions.Binary names it); Read and ReadFile make a model of a
// symbfile, so that one converts back to a .sym. docs/symbfile.md records
// what the format cannot hold.
package symbfile

import (
	"cmp"
	"io"
	"slices"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/dumpsyms/internal/segment"
	"github.com/gobreakpad/gobreakpad/symbfile"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// WriteOptions are what Write needs beyond the model.
type WriteOptions struct {
	// Binary is the path of the ELF file the model was read from
	// (dumpsyms/elf.Dump's input), whose code Write decodes for return
	// pads; empty for none (a model from a .sym file has no code).
	Binary string
}

// Write writes the model as a symbfile: a depth-0 range per FUNC
// range, a range at depth d+1 per range of each INLINE record at depth d,
// and each range's line table from the line records of its own code (not
// covered by deeper calls), cut where the line records' source file
// changes (a range has one file; the pieces after the first start at their
// first line, so only frames without a line there see a later function
// base). What it loses: module identity, PUBLIC records' extent past the next symbol (the last is
// one byte long), parameter sizes,
// // STACK CFI and STACK WIN. Return pads only when opts.Binary names the
// ELF file the model was read from: one per call instruction found by
// decoding each function's code (x86-64, i386, arm64), with the inline
// stack at the return address minus one.
func Write(w io.Writer, s *dumpsyms.Model, opts WriteOptions) error {
	n := segment.NamesOf(s)
	sw := symbfile.NewWriter(w)
	isELF := opts.Binary != ""
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
				cf = n.Files[uint32(in.CallFile)]
			}
			for ri, r := range in.Ranges {
				at[key{ii, ri}] = len(ranges)
				ranges = append(ranges, symbfile.Range{Start: r.Address, Length: r.Size, Func: n.Origins[in.Origin],
					Depth: in.Depth + 1, CallLine: in.CallLine, CallFile: cf})
			}
		}
		for _, sg := range segment.Of(f) {
			k := key{-1, -1}
			if d := len(sg.Inl); d > 0 {
				k = key{sg.Inl[d-1], sg.Rng[d-1]}
			} else {
				for ri, r := range f.Ranges {
					if sg.Start >= r.Address && sg.Start-r.Address < r.Size {
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
			if sg.Line >= 0 {
				l := f.Lines[sg.Line]
				if l.Line > 0 && l.Line <= 1<<32-1 {
					line = uint32(l.Line)
				}
				if file := n.Files[l.File]; r.File == "" {
					r.File = file
				} else if file != r.File && len(r.Lines) > 0 && sg.Start > r.Start && sg.Start < r.End() {
					// A range has one file: the rest of the range,
					// from here, becomes a range of its own. No
					// deeper range crosses sg.Start (this code is
					// the range's own), so nesting holds.
					rest := *r
					rest.Start, rest.Length, rest.File, rest.Lines = sg.Start, r.End()-sg.Start, file, nil
					r.Length = sg.Start - r.Start
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
			r.Lines = append(r.Lines, symbfile.LineEntry{Addr: sg.Start, Line: line})
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
	// The model's ELF file: a return pad per call instruction.
	if isELF {
		for _, p := range returnPads(fr, opts.Binary, symbfile.NewTable(all, nil)) {
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
