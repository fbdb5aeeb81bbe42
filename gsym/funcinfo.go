package gsym

import (
	"fmt"

	"github.com/gobreakpad/gobreakpad/internal/dwarfbuf"
)

// InfoType is the type of a FunctionInfo chunk.
type InfoType uint32

// The chunk types LLVM defines.
const (
	EndOfList           InfoType = 0
	LineTableInfo       InfoType = 1
	InlineInfoType      InfoType = 2
	MergedFunctionsInfo InfoType = 3
	CallSiteInfo        InfoType = 4
)

// String returns the chunk type's name in LLVM's sources.
func (t InfoType) String() string {
	switch t {
	case EndOfList:
		return "EndOfList"
	case LineTableInfo:
		return "LineTableInfo"
	case InlineInfoType:
		return "InlineInfo"
	case MergedFunctionsInfo:
		return "MergedFunctionsInfo"
	case CallSiteInfo:
		return "CallSiteInfo"
	}
	return fmt.Sprintf("InfoType(%d)", uint32(t))
}

// FunctionInfo is one function entry, decoded.
type FunctionInfo struct {
	// Start is the function's address (from the address table) and Size
	// its size in bytes; 0 for symbols without one.
	Start uint64
	Size  uint32
	// Name is a string table offset.
	Name uint32
	// LineTable holds the line rows, nil when the entry has none.
	LineTable LineTable
	// Inline is the inline call tree, whose root is the function itself;
	// nil when the entry has none.
	Inline *InlineInfo
	// Merged are the functions folded into this one (identical code), as
	// newer LLVM records them; their Start is this function's.
	Merged []FunctionInfo
	// CallSites is the raw CallSiteInfo chunk, kept undecoded.
	CallSites []byte
}

// maxNesting bounds how deep merged functions nest: LLVM writes them only
// at the top level, so merged entries hold none themselves.
const maxNesting = 1

// FunctionAt decodes function entry i entirely.
func (f *File) FunctionAt(i int) (*FunctionInfo, error) {
	start, err := f.Address(i)
	if err != nil {
		return nil, err
	}
	off, err := f.infoOffset(uint64(i))
	if err != nil {
		return nil, err
	}
	b, err := f.funcBytes(off)
	if err != nil {
		return nil, fmt.Errorf("function %d at %#x: %w", i, off, err)
	}
	fi, err := f.decodeFunc(b, start, 0)
	if err != nil {
		return nil, fmt.Errorf("gsym: function %d at %#x: %w", i, off, err)
	}
	return fi, nil
}

// funcBytes returns the encoded FunctionInfo at off: everything up to its
// EndOfList chunk, found by reading the chunk headers.
func (f *File) funcBytes(off uint64) ([]byte, error) {
	if off >= f.size {
		return nil, fmt.Errorf("gsym: function info offset %#x past the end of the file (%d bytes)", off, f.size)
	}
	if f.r == nil {
		return f.data[off:], nil
	}
	// Read the size, name and chunk headers, then all of it at once.
	end, err := f.funcEnd(off)
	if err != nil {
		return nil, err
	}
	return f.at(off, end-off)
}

// funcEnd returns the end of the encoded FunctionInfo at off, found by
// reading its chunk headers, or an error if it passes the file's end.
func (f *File) funcEnd(off uint64) (uint64, error) {
	end := off + 8
	for {
		h, err := f.at(end, 8)
		if err != nil {
			return 0, err
		}
		typ, n := f.Order.Uint32(h), uint64(f.Order.Uint32(h[4:]))
		end += 8
		if end+n > f.size {
			return 0, fmt.Errorf("gsym: %s chunk of %d bytes at %#x past the end of the file", InfoType(typ), n, end)
		}
		end += n
		if InfoType(typ) == EndOfList {
			return end, nil
		}
	}
}

// decodeFunc decodes an encoded FunctionInfo.
func (f *File) decodeFunc(data []byte, start uint64, nesting int) (*FunctionInfo, error) {
	b := dwarfbuf.Make(data, f.Order, nil)
	fi := &FunctionInfo{Start: start}
	fi.Size = b.U32()
	fi.Name = b.U32()
	if err := b.Err(); err != nil {
		return nil, fmt.Errorf("size and name: %w", err)
	}
	if fi.Name == 0 {
		return nil, fmt.Errorf("invalid name offset 0")
	}
	for {
		at := b.Off()
		typ, n := InfoType(b.U32()), b.U32()
		chunk := b.Bytes(uint64(n))
		if err := b.Err(); err != nil {
			return nil, fmt.Errorf("chunk at +%#x: %w", at, err)
		}
		var err error
		switch typ {
		case EndOfList:
			return fi, nil
		case LineTableInfo:
			fi.LineTable, err = decodeLineTable(chunk, start)
		case InlineInfoType:
			fi.Inline, err = decodeInline(chunk, f.Order, start)
		case MergedFunctionsInfo:
			if nesting >= maxNesting {
				return nil, fmt.Errorf("chunk at +%#x: merged functions inside merged functions", at)
			}
			fi.Merged, err = f.decodeMerged(chunk, start, nesting+1)
		case CallSiteInfo:
			fi.CallSites = chunk
		default:
			err = fmt.Errorf("unsupported chunk type")
		}
		if err != nil {
			return nil, fmt.Errorf("%s chunk at +%#x: %w", typ, at, err)
		}
	}
}

// decodeMerged decodes a MergedFunctionsInfo chunk: a count, then per
// function a size and its FunctionInfo, unpadded.
func (f *File) decodeMerged(data []byte, start uint64, nesting int) ([]FunctionInfo, error) {
	b := dwarfbuf.Make(data, f.Order, nil)
	n := b.U32()
	var out []FunctionInfo
	for i := uint32(0); i < n && b.Err() == nil; i++ {
		sz := b.U32()
		fb := b.Bytes(uint64(sz))
		if b.Err() != nil {
			break
		}
		fi, err := f.decodeFunc(fb, start, nesting)
		if err != nil {
			return nil, fmt.Errorf("merged function %d: %w", i, err)
		}
		out = append(out, *fi)
	}
	if err := b.Err(); err != nil {
		return nil, fmt.Errorf("%d merged functions: %w", n, err)
	}
	return out, nil
}
