package gsym

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gobreakpad/gobreakpad/internal/dwarfbuf"
)

// Line table opcodes. Special opcodes (FirstSpecial and up) advance both
// the address and the line and push a row.
const (
	EndSequence  = 0x00 // end of the table
	SetFile      = 0x01 // ULEB128 file index; no row
	AdvancePC    = 0x02 // ULEB128 address delta; pushes a row
	AdvanceLine  = 0x03 // SLEB128 line delta; no row
	FirstSpecial = 0x04
)

// LineEntry is one row of a line table.
type LineEntry struct {
	Address uint64
	File    uint32 // file table index
	Line    uint32
}

// LineTable is a function's rows, sorted by address.
type LineTable []LineEntry

// lineTableHeader is the start of an encoded line table.
type lineTableHeader struct {
	minDelta, maxDelta int64
	firstLine          uint32
}

var errNoRow = errors.New("no row")

// parseLineTable runs the line table program in data, calling row for each
// row pushed until it returns false.
func parseLineTable(data []byte, base uint64, row func(LineEntry) bool) error {
	b := dwarfbuf.Make(data, nil, nil)
	minDelta := b.Sleb()
	maxDelta := b.Sleb()
	first := uint32(b.Uleb())
	if err := b.Err(); err != nil {
		return fmt.Errorf("header: %w", err)
	}
	lineRange := uint64(maxDelta) - uint64(minDelta) + 1
	if maxDelta < minDelta || lineRange == 0 {
		return fmt.Errorf("invalid line delta range [%d, %d]", minDelta, maxDelta)
	}
	r := LineEntry{Address: base, File: 1, Line: first}
	for {
		if b.Len() == 0 {
			return fmt.Errorf("+%#x: no EndSequence", b.Off())
		}
		op := b.U8()
		switch op {
		case EndSequence:
			return nil
		case SetFile:
			r.File = uint32(b.Uleb())
		case AdvancePC:
			r.Address += b.Uleb()
			if b.Err() == nil && !row(r) {
				return nil
			}
		case AdvanceLine:
			r.Line += uint32(b.Sleb())
		default:
			adj := uint64(op - FirstSpecial)
			r.Line += uint32(minDelta + int64(adj%lineRange))
			r.Address += adj / lineRange
			if !row(r) {
				return nil
			}
		}
		if err := b.Err(); err != nil {
			return fmt.Errorf("+%#x: %w", b.ErrOffset(), err)
		}
	}
}

// decodeLineTable decodes all rows.
func decodeLineTable(data []byte, base uint64) (LineTable, error) {
	lt := LineTable{}
	err := parseLineTable(data, base, func(r LineEntry) bool { lt = append(lt, r); return true })
	return lt, err
}

// lookupLineTable returns the last row at or below addr, as LLVM's
// LineTable::lookup does, without decoding the others.
func lookupLineTable(data []byte, base, addr uint64) (LineEntry, error) {
	var res LineEntry
	found := false
	err := parseLineTable(data, base, func(r LineEntry) bool {
		if addr < r.Address {
			return false
		}
		res, found = r, true
		return true
	})
	if err != nil {
		return res, err
	}
	if !found || res.File == 0 {
		return res, errNoRow
	}
	return res, nil
}

// appendLineTable encodes rows (sorted by address, none below base) as
// LLVM's LineTable::encode does, choosing the special opcodes' line delta
// range from the deltas met most.
func appendLineTable(out []byte, rows LineTable, base uint64) ([]byte, error) {
	if len(rows) == 0 {
		return out, errors.New("empty line table")
	}
	minD, maxD := int64(0), int64(0)
	counts := map[int64]int{}
	if len(rows) > 1 {
		minD, maxD = int64(1)<<62, -int64(1)<<62
		prev := int64(rows[0].Line)
		for _, r := range rows[1:] {
			d := int64(r.Line) - prev
			counts[d]++
			minD, maxD = min(minD, d), max(maxD, d)
			prev = int64(r.Line)
		}
	}
	const maxLineRange = 14
	if maxD-minD > maxLineRange {
		// The window of 15 deltas covering the most rows.
		deltas := make([]int64, 0, len(counts))
		for d := range counts {
			deltas = append(deltas, d)
		}
		slices.Sort(deltas)
		best, bestLo, bestHi := 0, 0, 0
		for i := range deltas {
			n, j := 0, i
			for ; j < len(deltas) && deltas[j]-deltas[i] <= maxLineRange; j++ {
				n += counts[deltas[j]]
			}
			if n > best {
				best, bestLo, bestHi = n, i, j-1
			}
		}
		minD, maxD = deltas[bestLo], deltas[bestHi]
	}
	if minD == maxD && minD > 0 && minD < maxLineRange {
		minD = 0
	}
	out = appendSleb(out, minD)
	out = appendSleb(out, maxD)
	out = appendUleb(out, uint64(rows[0].Line))
	prev := LineEntry{Address: base, File: 1, Line: rows[0].Line}
	lineRange := maxD - minD + 1
	for _, r := range rows {
		if r.Address < prev.Address {
			return out, fmt.Errorf("line row at %#x below the previous one (%#x)", r.Address, prev.Address)
		}
		addrDelta := r.Address - prev.Address
		lineDelta := int64(r.Line) - int64(prev.Line)
		if r.File != prev.File {
			out = append(out, SetFile)
			out = appendUleb(out, uint64(r.File))
		}
		if lineDelta >= minD && lineDelta <= maxD && addrDelta <= 255 {
			if op := (lineDelta - minD) + int64(addrDelta)*lineRange + FirstSpecial; op <= 255 {
				out = append(out, byte(op))
				prev = r
				continue
			}
		}
		if lineDelta != 0 {
			out = append(out, AdvanceLine)
			out = appendSleb(out, lineDelta)
		}
		out = append(out, AdvancePC)
		out = appendUleb(out, addrDelta)
		prev = r
	}
	return append(out, EndSequence), nil
}

func appendUleb(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendSleb(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
