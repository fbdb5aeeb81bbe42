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
// strings as references.
type Writer struct {
	w      io.Writer
	ranges []Range
	pads   []ReturnPad
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// AddRange adds a range; its Lines must be sorted by address, inside it.
func (w *Writer) AddRange(r Range) { w.ranges = append(w.ranges, r) }

// AddReturnPad adds a return pad.
func (w *Writer) AddReturnPad(p ReturnPad) { w.pads = append(w.pads, p) }

// Flush writes the file.
func (w *Writer) Flush() error {
	slices.SortStableFunc(w.ranges, func(a, b Range) int {
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
	var recs [][]byte
	var types []MessageType
	var prev uint64
	delta := func(m []byte, a uint64) []byte {
		m = protowire.AppendTag(m, 1, protowire.VarintType)
		m = protowire.AppendVarint(m, protowire.EncodeZigZag(int64(a-prev)))
		prev = a
		return m
	}
	ri, pi := 0, 0
	for ri < len(w.ranges) || pi < len(w.pads) {
		if pi < len(w.pads) && (ri == len(w.ranges) || w.pads[pi].Addr < w.ranges[ri].Start) {
			p := &w.pads[pi]
			pi++
			m := delta(nil, p.Addr)
			var fs, files, lines []byte
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
			recs, types = append(recs, m), append(types, TypeReturnPad)
			continue
		}
		r := &w.ranges[ri]
		ri++
		m := delta(nil, r.Start)
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
		if len(r.Lines) > 0 {
			var offs, nums []byte
			a := r.Start
			for _, l := range r.Lines {
				offs = protowire.AppendVarint(offs, uint64(uint32(l.Addr-a)))
				nums = protowire.AppendVarint(nums, uint64(l.Line))
				a = l.Addr
			}
			var lt []byte
			lt = protowire.AppendTag(lt, 1, protowire.BytesType)
			lt = protowire.AppendBytes(lt, offs)
			lt = protowire.AppendTag(lt, 2, protowire.BytesType)
			lt = protowire.AppendBytes(lt, nums)
			m = protowire.AppendTag(m, 8, protowire.BytesType)
			m = protowire.AppendBytes(m, lt)
		}
		recs, types = append(recs, m), append(types, TypeRange)
	}
	bw := bufio.NewWriter(w.w)
	bw.WriteString(Magic)
	write := func(t MessageType, m []byte) {
		bw.Write(binary.AppendUvarint(nil, uint64(len(m))))
		bw.Write(binary.AppendUvarint(nil, uint64(t)))
		bw.Write(m)
	}
	write(TypeHeader, nil)
	write(TypeStringTable, table)
	for i, m := range recs {
		write(types[i], m)
	}
	return bw.Flush()
}
