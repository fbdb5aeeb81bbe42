package symbfile

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"io"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// Writer collects ranges and return pads and writes them as a symbfile on
// Flush: the header, one string table of every distinct string, then the
// records by address (each address a delta from the previous record's), with
// strings as references. A range's line table is encoded when it is added,
// so the Writer holds a few bytes per line, not the entries.
type Writer struct {
	w      io.Writer
	ranges []wrange
	pads   []ReturnPad
}

// wrange is an added range with its line table encoded (the payload of the
// range's field 8; nil without lines).
type wrange struct {
	Range
	lt []byte
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// AddRange adds a range; its Lines must be sorted by address, inside it.
// The Writer keeps no reference to r.Lines.
func (w *Writer) AddRange(r Range) {
	var lt []byte
	if len(r.Lines) > 0 {
		var offs, nums []byte
		a := r.Start
		for _, l := range r.Lines {
			offs = protowire.AppendVarint(offs, uint64(uint32(l.Addr-a)))
			nums = protowire.AppendVarint(nums, uint64(l.Line))
			a = l.Addr
		}
		lt = make([]byte, 0, len(offs)+len(nums)+2*(1+binary.MaxVarintLen64))
		lt = protowire.AppendTag(lt, 1, protowire.BytesType)
		lt = protowire.AppendBytes(lt, offs)
		lt = protowire.AppendTag(lt, 2, protowire.BytesType)
		lt = protowire.AppendBytes(lt, nums)
	}
	r.Lines = nil
	w.ranges = append(w.ranges, wrange{r, lt})
}

// AddReturnPad adds a return pad.
func (w *Writer) AddReturnPad(p ReturnPad) { w.pads = append(w.pads, p) }

// Flush writes the file: the records are encoded twice, first to number
// the strings in the order they are met (the string table comes first),
// then to be written one by one.
func (w *Writer) Flush() error {
	slices.SortStableFunc(w.ranges, func(a, b wrange) int {
		if c := cmp.Compare(a.Start, b.Start); c != 0 {
			return c
		}
		return cmp.Compare(uint64(a.Depth), uint64(b.Depth))
	})
	slices.SortStableFunc(w.pads, func(a, b ReturnPad) int { return cmp.Compare(a.Addr, b.Addr) })
	idx := map[string]uint64{}
	var table []byte
	intern := func(s string) uint64 {
		i, ok := idx[s]
		if !ok {
			i = uint64(len(idx))
			idx[s] = i
			table = protowire.AppendTag(table, 1, protowire.BytesType)
			table = protowire.AppendString(table, s)
		}
		return i
	}
	var prev uint64
	delta := func(m []byte, a uint64) []byte {
		m = protowire.AppendTag(m, 1, protowire.VarintType)
		m = protowire.AppendVarint(m, protowire.EncodeZigZag(int64(a-prev)))
		prev = a
		return m
	}
	var m, fs, files, lines []byte
	// each encodes every record in file order into m and calls f.
	each := func(f func(t MessageType, m []byte)) {
		prev = 0
		ri, pi := 0, 0
		for ri < len(w.ranges) || pi < len(w.pads) {
			if pi < len(w.pads) && (ri == len(w.ranges) || w.pads[pi].Addr < w.ranges[ri].Start) {
				p := &w.pads[pi]
				pi++
				m = delta(m[:0], p.Addr)
				fs, files, lines = fs[:0], files[:0], lines[:0]
				for _, f := range p.Frames {
					fs = protowire.AppendVarint(fs, intern(f.Func))
					files = protowire.AppendVarint(files, intern(f.File))
					lines = protowire.AppendVarint(lines, uint64(f.Line))
				}
				for _, f := range []struct {
					n protowire.Number
					b []byte
				}{{2, fs}, {3, files}, {4, lines}} {
					m = protowire.AppendTag(m, f.n, protowire.BytesType)
					m = protowire.AppendBytes(m, f.b)
				}
				f(TypeReturnPad, m)
				continue
			}
			r := &w.ranges[ri]
			ri++
			m = delta(m[:0], r.Start)
			m = protowire.AppendTag(m, 2, protowire.VarintType)
			m = protowire.AppendVarint(m, r.Length)
			m = protowire.AppendTag(m, 9, protowire.VarintType)
			m = protowire.AppendVarint(m, intern(r.Func))
			m = protowire.AppendTag(m, 10, protowire.VarintType)
			m = protowire.AppendVarint(m, intern(r.File))
			if r.CallLine != 0 {
				m = protowire.AppendTag(m, 5, protowire.VarintType)
				m = protowire.AppendVarint(m, uint64(r.CallLine))
			}
			if r.CallFile != "" {
				m = protowire.AppendTag(m, 11, protowire.VarintType)
				m = protowire.AppendVarint(m, intern(r.CallFile))
			}
			if r.Depth != 0 {
				m = protowire.AppendTag(m, 7, protowire.VarintType)
				m = protowire.AppendVarint(m, uint64(r.Depth))
			}
			if r.lt != nil {
				m = protowire.AppendTag(m, 8, protowire.BytesType)
				m = protowire.AppendBytes(m, r.lt)
			}
			f(TypeRange, m)
		}
	}
	each(func(MessageType, []byte) {}) // numbers the strings
	bw := bufio.NewWriter(w.w)
	bw.WriteString(Magic)
	write := func(t MessageType, m []byte) {
		bw.Write(binary.AppendUvarint(nil, uint64(len(m))))
		bw.Write(binary.AppendUvarint(nil, uint64(t)))
		bw.Write(m)
	}
	write(TypeHeader, nil)
	write(TypeStringTable, table)
	each(write)
	return bw.Flush()
}
