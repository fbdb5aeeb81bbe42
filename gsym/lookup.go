package gsym

import (
	"errors"
	"fmt"

	"github.com/gobreakpad/gobreakpad/internal/dwarfbuf"
)

// SourceLocation is one frame of a lookup's result.
type SourceLocation struct {
	// Name is the function's name and Offset the address's distance from
	// the start of the function (for an inlined call, from the start of
	// the call's first range).
	Name   string
	Offset uint64
	// Start is the start of the range holding the address: the function's
	// start, or for an inlined call the start of the one of its ranges
	// that holds the address (Offset counts from its first range's).
	Start uint64
	// Dir and Base name the source file; both empty when unknown.
	Dir, Base string
	Line      uint32
}

// Path returns the source file's path as LLVM prints it (see JoinPath).
func (s SourceLocation) Path() string { return JoinPath(s.Dir, s.Base) }

// LookupResult is what a GSYM file says about an address.
type LookupResult struct {
	Address uint64
	// Start and Size are those of the function entry covering Address;
	// Name is its name.
	Start, Size uint64
	Name        string
	// Locations are the frames at Address, innermost (inlined) first, the
	// function itself last. There is always at least one.
	Locations []SourceLocation
	// HasRow is set when a line row covers Address, and LineAddress is
	// then the row's address.
	HasRow      bool
	LineAddress uint64
}

// Lookup describes the code at addr as LLVM's GsymReader::lookup does. It
// returns an error wrapping ErrNotFound when no function covers addr.
//
// One difference: where LLVM fails (an address below a function's first
// line row, or a row naming file 0), Lookup returns the function with no
// source location, as LLVM does for functions without a line table.
func (f *File) Lookup(addr uint64) (LookupResult, error) {
	var res LookupResult
	i, err := f.funcIndex(addr)
	if err != nil {
		return res, err
	}
	// Among the entries starting at the same address, the first that
	// covers addr (a size-0 one covers everything).
	var start, infoOff uint64
	found := false
	for j := i; j < uint64(f.Header.NumAddresses); j++ {
		off, err := f.addrOffset(j)
		if err != nil {
			return res, err
		}
		s := f.Header.BaseAddress + off
		if j > i && s != start {
			break
		}
		start = s
		io, err := f.infoOffset(j)
		if err != nil {
			return res, err
		}
		// The size alone says whether the entry covers addr.
		sb, err := f.at(io, 4)
		if err != nil {
			return res, fmt.Errorf("gsym: function %d: %w", j, err)
		}
		if size := f.Order.Uint32(sb); size == 0 || addr-start < uint64(size) {
			infoOff, found = io, true
			break
		}
	}
	if !found {
		return res, fmt.Errorf("%w: %#x", ErrNotFound, addr)
	}
	data, err := f.funcBytes(infoOff)
	if err != nil {
		return res, fmt.Errorf("gsym: function at %#x: %w", start, err)
	}
	res, err = f.lookupFunc(data, start, addr)
	if err != nil {
		return LookupResult{}, fmt.Errorf("gsym: function at %#x: %w", start, err)
	}
	return res, nil
}

// lookupFunc looks addr up in one encoded FunctionInfo.
func (f *File) lookupFunc(data []byte, start, addr uint64) (LookupResult, error) {
	b := dwarfbuf.Make(data, f.Order, nil)
	res := LookupResult{Address: addr, Start: start}
	res.Size = uint64(b.U32())
	nameOff := b.U32()
	if nameOff == 0 {
		return res, errors.New("invalid name offset 0")
	}
	name, err := f.String(nameOff)
	if err != nil {
		return res, err
	}
	res.Name = name
	var row LineEntry
	hasRow := false
	var inline []byte
	for done := false; !done; {
		at := b.Off()
		typ, n := InfoType(b.U32()), b.U32()
		chunk := b.Bytes(uint64(n))
		if err := b.Err(); err != nil {
			return res, fmt.Errorf("chunk at +%#x: %w", at, err)
		}
		switch typ {
		case EndOfList:
			done = true
		case LineTableInfo:
			row, err = lookupLineTable(chunk, start, addr)
			switch {
			case err == nil:
				hasRow = true
			case err != errNoRow:
				return res, fmt.Errorf("line table: %w", err)
			}
		case InlineInfoType:
			inline = chunk
		}
	}
	loc := SourceLocation{Name: name, Offset: addr - start, Start: start}
	if !hasRow {
		res.Locations = []SourceLocation{loc}
		return res, nil
	}
	fe, err := f.FileEntry(row.File)
	if err != nil {
		return res, fmt.Errorf("line row: %w", err)
	}
	if loc.Dir, err = f.String(fe.Dir); err != nil {
		return res, err
	}
	if loc.Base, err = f.String(fe.Base); err != nil {
		return res, err
	}
	loc.Line = row.Line
	res.HasRow, res.LineAddress = true, row.Address
	if inline == nil {
		res.Locations = []SourceLocation{loc}
		return res, nil
	}
	l := inlineLookup{f: f, b: dwarfbuf.Make(inline, f.Order, nil), addr: addr, locs: make([]SourceLocation, 1, 4)}
	l.locs[0] = loc
	if _, err := l.node(start, 0); err != nil {
		return res, fmt.Errorf("inline info: %w", err)
	}
	res.Locations = l.locs
	return res, nil
}
