package gsym

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/gobreakpad/gobreakpad/internal/dwarfbuf"
)

// MaxInlineDepth bounds the nesting of inline trees read: deeper trees are
// reported as errors rather than followed.
const MaxInlineDepth = 1024

// Range is an address range [Start, End).
type Range struct {
	Start, End uint64
}

// Contains reports whether a lies in r.
func (r Range) Contains(a uint64) bool { return a >= r.Start && a < r.End }

// InlineInfo is a node of a function's inline tree: the root is the
// function itself (ranges: the function's, call file 0), each child a call
// inlined into its parent.
type InlineInfo struct {
	// Ranges are sorted and merged, as LLVM's AddressRanges keeps them.
	// Children's ranges are encoded relative to Ranges[0].Start.
	Ranges []Range
	// Name is a string table offset: the inlined function's name.
	Name uint32
	// CallFile (a file table index) and CallLine are where the call was
	// made, in the parent.
	CallFile, CallLine uint32
	Children           []InlineInfo
}

var errInlineDepth = fmt.Errorf("inline tree deeper than %d", MaxInlineDepth)

// normalizeRanges sorts and merges ranges as LLVM's AddressRanges does:
// empty ranges are dropped, overlapping and adjacent ones merged.
func normalizeRanges(rs []Range) []Range {
	rs = slices.DeleteFunc(rs, func(r Range) bool { return r.End <= r.Start })
	slices.SortFunc(rs, func(a, b Range) int { return cmp.Compare(a.Start, b.Start) })
	out := rs[:0]
	for _, r := range rs {
		if k := len(out) - 1; k >= 0 && r.Start <= out[k].End {
			out[k].End = max(out[k].End, r.End)
			continue
		}
		out = append(out, r)
	}
	return out
}

// decodeInline decodes an InlineInfo chunk.
func decodeInline(data []byte, order binary.ByteOrder, base uint64) (*InlineInfo, error) {
	b := dwarfbuf.Make(data, order, nil)
	ii, err := decodeInlineNode(&b, base, 0)
	if err != nil {
		return nil, err
	}
	return &ii, nil
}

func decodeInlineNode(b *dwarfbuf.Buf, base uint64, depth int) (InlineInfo, error) {
	var ii InlineInfo
	if depth > MaxInlineDepth {
		return ii, errInlineDepth
	}
	n := b.Uleb()
	for i := uint64(0); i < n && b.Err() == nil; i++ {
		off, size := b.Uleb(), b.Uleb()
		ii.Ranges = append(ii.Ranges, Range{base + off, base + off + size})
	}
	ii.Ranges = normalizeRanges(ii.Ranges)
	if len(ii.Ranges) == 0 {
		return ii, b.Err()
	}
	hasChildren := b.U8() != 0
	ii.Name = b.U32()
	ii.CallFile = uint32(b.Uleb())
	ii.CallLine = uint32(b.Uleb())
	if err := b.Err(); err != nil {
		return ii, fmt.Errorf("+%#x: %w", b.ErrOffset(), err)
	}
	if hasChildren {
		for {
			c, err := decodeInlineNode(b, ii.Ranges[0].Start, depth+1)
			if err != nil {
				return ii, err
			}
			if len(c.Ranges) == 0 {
				break
			}
			ii.Children = append(ii.Children, c)
		}
	}
	return ii, nil
}

// inlineLookup walks an encoded inline tree as LLVM's InlineInfo::lookup
// does, without building it: only the nodes holding addr are decoded, and
// locs (holding the function's location, last) gains one location per
// inlined call covering addr.
type inlineLookup struct {
	f    *File
	b    dwarfbuf.Buf
	addr uint64
	locs []SourceLocation
}

// node reads one node. It reports true when the node covered the address
// (or ended a list of siblings), which ends the parent's search.
func (l *inlineLookup) node(base uint64, depth int) (bool, error) {
	if depth > MaxInlineDepth {
		return false, errInlineDepth
	}
	b := &l.b
	n := b.Uleb()
	var first, hold uint64
	nonEmpty, covers := false, false
	for i := uint64(0); i < n && b.Err() == nil; i++ {
		off, size := b.Uleb(), b.Uleb()
		if size == 0 || base+off+size <= base+off {
			continue
		}
		s := base + off
		if !nonEmpty || s < first {
			first = s
		}
		nonEmpty = true
		if l.addr-s < size && !covers {
			covers, hold = true, s
		}
	}
	if err := b.Err(); err != nil {
		return false, err
	}
	if !nonEmpty {
		return true, nil
	}
	if !covers {
		return false, l.skip(true, depth)
	}
	hasChildren := b.U8() != 0
	name := b.U32()
	callFile := uint32(b.Uleb())
	callLine := uint32(b.Uleb())
	if err := b.Err(); err != nil {
		return false, err
	}
	if hasChildren {
		for {
			done, err := l.node(first, depth+1)
			if err != nil {
				return false, err
			}
			if done {
				break
			}
		}
	}
	fe, err := l.f.FileEntry(callFile)
	if err != nil {
		return false, err
	}
	if fe.Dir == 0 && fe.Base == 0 {
		return true, nil
	}
	dir, err := l.f.String(fe.Dir)
	if err != nil {
		return false, err
	}
	bn, err := l.f.String(fe.Base)
	if err != nil {
		return false, err
	}
	fn, err := l.f.String(name)
	if err != nil {
		return false, err
	}
	last := &l.locs[len(l.locs)-1]
	outer := SourceLocation{Name: last.Name, Offset: last.Offset, Start: last.Start, Dir: dir, Base: bn, Line: callLine}
	last.Name, last.Offset, last.Start = fn, l.addr-first, hold
	l.locs = append(l.locs, outer)
	return true, nil
}

// skip steps over a node (whose ranges were read when ranges is set) and
// its children.
func (l *inlineLookup) skip(ranges bool, depth int) error {
	if depth > MaxInlineDepth {
		return errInlineDepth
	}
	b := &l.b
	if !ranges {
		n := b.Uleb()
		if n == 0 {
			return errEndOfSiblings
		}
		for i := uint64(0); i < n && b.Err() == nil; i++ {
			b.Uleb()
			b.Uleb()
		}
	}
	hasChildren := b.U8() != 0
	b.U32()
	b.Uleb()
	b.Uleb()
	if err := b.Err(); err != nil {
		return err
	}
	if hasChildren {
		for {
			err := l.skip(false, depth+1)
			if err == errEndOfSiblings {
				break
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

var errEndOfSiblings = errors.New("end of siblings")

// appendInline encodes ii with its ranges relative to base.
func appendInline(out []byte, order binary.AppendByteOrder, ii *InlineInfo, base uint64) ([]byte, error) {
	if len(ii.Ranges) == 0 {
		return out, errors.New("inline info without ranges")
	}
	out = appendUleb(out, uint64(len(ii.Ranges)))
	for _, r := range ii.Ranges {
		if r.Start < base {
			return out, fmt.Errorf("inline range [%#x, %#x) below its base %#x", r.Start, r.End, base)
		}
		out = appendUleb(out, r.Start-base)
		out = appendUleb(out, r.End-r.Start)
	}
	if len(ii.Children) > 0 {
		out = append(out, 1)
	} else {
		out = append(out, 0)
	}
	out = order.AppendUint32(out, ii.Name)
	out = appendUleb(out, uint64(ii.CallFile))
	out = appendUleb(out, uint64(ii.CallLine))
	if len(ii.Children) > 0 {
		var err error
		for i := range ii.Children {
			if out, err = appendInline(out, order, &ii.Children[i], ii.Ranges[0].Start); err != nil {
				return out, err
			}
		}
		out = appendUleb(out, 0)
	}
	return out, nil
}
