package symbfile

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Table is a whole symbfile indexed for lookups. It is safe for concurrent
// use.
type Table struct {
	// Ranges are the file's ranges sorted by depth, then start address.
	Ranges []Range
	// Pads are the return pads sorted by address.
	Pads []ReturnPad

	depths []depthIndex // per depth, a slice of Ranges
}

// depthIndex is the ranges of one depth, sorted by start, with a tree of
// their ends so that overlapping ranges are found too.
type depthIndex struct {
	lo, hi int // Ranges[lo:hi]
	ends   endTree
}

// maxCrossing bounds the ranges covering an address that a lookup skips at
// one depth because they cross their parent's end (only hostile files have
// them); past it the depth has no range there.
const maxCrossing = 64

// zstdMagic starts a zstd frame.
const zstdMagic = "\x28\xb5\x2f\xfd"

// Open reads and indexes the symbfile at path, decompressing it first when
// it is zstd-compressed (as ".zst" files are).
func Open(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Read reads and indexes a symbfile, zstd-compressed or not.
func Read(r io.Reader) (*Table, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(4)
	var src io.Reader = br
	if string(head) == zstdMagic {
		d, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(64<<20))
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		defer d.Close()
		src = d
	}
	t := &Table{}
	rd := NewReader(src)
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch rec := rec.(type) {
		case *Range:
			t.Ranges = append(t.Ranges, *rec)
		case *ReturnPad:
			t.Pads = append(t.Pads, *rec)
		}
	}
	t.index()
	return t, nil
}

// Parse reads and indexes a symbfile held in memory.
func Parse(data []byte) (*Table, error) { return Read(bytes.NewReader(data)) }

// NewTable indexes ranges and return pads (which it sorts in place).
func NewTable(ranges []Range, pads []ReturnPad) *Table {
	t := &Table{Ranges: ranges, Pads: pads}
	t.index()
	return t
}

func (t *Table) index() {
	slices.SortStableFunc(t.Ranges, func(a, b Range) int {
		if a.Depth != b.Depth {
			return cmp.Compare(uint64(a.Depth), uint64(b.Depth))
		}
		return cmp.Compare(a.Start, b.Start)
	})
	slices.SortStableFunc(t.Pads, func(a, b ReturnPad) int { return cmp.Compare(a.Addr, b.Addr) })
	t.depths = nil
	for lo := 0; lo < len(t.Ranges); {
		d := t.Ranges[lo].Depth
		hi := lo
		for hi < len(t.Ranges) && t.Ranges[hi].Depth == d {
			hi++
		}
		// Depths are dense from 0 in well-formed files; a gap ends lookups,
		// and so do depths past MaxInlineDepth (not indexed).
		if int(d) != len(t.depths) || d > MaxInlineDepth {
			break
		}
		ends := make([]uint64, hi-lo)
		for i := lo; i < hi; i++ {
			ends[i-lo] = t.Ranges[i].End()
		}
		t.depths = append(t.depths, depthIndex{lo: lo, hi: hi, ends: newEndTree(ends)})
		lo = hi
	}
}

// covering returns the range of depth d covering addr inside [lo, hi), the
// one starting last when several do; -1 for none.
func (t *Table) covering(d int, addr, lo, hi uint64) int {
	i, _ := t.coveringSeen(d, addr, lo, hi)
	return i
}

// coveringSeen is covering, also returning the lowest index in Ranges it
// examined: the answer depends only on which ranges of depth d from there
// on cover addr.
func (t *Table) coveringSeen(d int, addr, lo, hi uint64) (found, seen int) {
	di := &t.depths[d]
	rs := t.Ranges[di.lo:di.hi]
	i := sort.Search(len(rs), func(i int) bool { return rs[i].Start > addr }) - 1
	for skipped := 0; skipped <= maxCrossing; skipped++ {
		i = di.ends.last(i, addr)
		if i < 0 {
			return -1, di.lo // every covering range examined
		}
		if rs[i].Start < lo {
			return -1, di.lo + i // the ones before start earlier still
		}
		if rs[i].End() <= hi {
			return di.lo + i, di.lo + i
		}
		i--
	}
	return -1, di.lo + i + 1
}

// Frame is one frame of a lookup's answer.
type Frame struct {
	// Func is the function and File, Line the source position in it: for
	// the innermost frame the line table's, for the others the call site of
	// the next inner frame.
	Func, File string
	Line       uint32
	// Base is the start of the frame's range and LineBase that of its line
	// table entry (innermost frame only; else Base).
	Base, LineBase uint64
}

// Covering returns the indexes in Ranges of the ranges covering addr,
// outermost first, each inside the previous; at most MaxInlineDepth+1.
func (t *Table) Covering(addr uint64) []int {
	var out []int
	lo, hi := uint64(0), ^uint64(0)
	for d := range t.depths {
		i := t.covering(d, addr, lo, hi)
		if i < 0 {
			break
		}
		out = append(out, i)
		lo, hi = t.Ranges[i].Start, t.Ranges[i].End()
	}
	return out
}

// Lookup returns the frames at addr, innermost first; nil when no range
// covers it. A return pad at addr answers directly (its frames with the
// bases of the ranges covering addr). At most MaxInlineDepth+1 frames are
// returned: the function and its outermost MaxInlineDepth inlined calls.
func (t *Table) Lookup(addr uint64) []Frame {
	cov := t.Covering(addr)
	if p, ok := slices.BinarySearchFunc(t.Pads, addr, func(p ReturnPad, a uint64) int { return cmp.Compare(p.Addr, a) }); ok {
		frames := t.Pads[p].Frames
		frames = frames[:min(len(frames), MaxInlineDepth+1)]
		out := make([]Frame, len(frames))
		for i, f := range frames {
			fr := Frame{Func: f.Func, File: f.File, Line: f.Line, Base: addr, LineBase: addr}
			if i < len(cov) {
				fr.Base = t.Ranges[cov[i]].Start
				fr.LineBase = fr.Base
			}
			out[len(out)-1-i] = fr
		}
		return out
	}
	if len(cov) == 0 {
		return nil
	}
	out := make([]Frame, len(cov))
	for k, i := range cov {
		r := &t.Ranges[i]
		fr := Frame{Func: r.Func, File: r.File, Base: r.Start, LineBase: r.Start}
		if k == len(cov)-1 {
			j := sort.Search(len(r.Lines), func(j int) bool { return r.Lines[j].Addr > addr }) - 1
			if j >= 0 {
				fr.Line, fr.LineBase = r.Lines[j].Line, r.Lines[j].Addr
			}
		} else {
			child := &t.Ranges[cov[k+1]]
			fr.Line = child.CallLine
			if child.CallFile != "" {
				fr.File = child.CallFile
			}
		}
		out[len(cov)-1-k] = fr
	}
	return out
}

// String describes frames as llvm-symbolizer prints them (function, then
// file:line), one frame a line; for tests and tools.
func FramesString(fs []Frame) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%s\n%s:%d\n", f.Func, f.File, f.Line)
	}
	return b.String()
}
