package gsym

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/gobreakpad/gobreakpad/internal/strindex"
)

// Writer builds a GSYM file: add strings, files and functions, then write
// it out. Functions are encoded as they are added, so memory holds the
// encoded file, not the decoded functions.
type Writer struct {
	// Order is the byte order written; little-endian when nil.
	Order binary.AppendByteOrder
	// BaseAddress is the header's base address, which every function
	// address must be at or above. llvm-gsymutil --convert sets the ELF's
	// lowest PT_LOAD address.
	BaseAddress uint64
	// UUID is the header's UUID (at most MaxUUIDSize bytes): for ELF, the
	// build ID.
	UUID []byte

	strs   strindex.Index
	strtab []byte
	files  map[FileEntry]uint32
	flist  []FileEntry
	funcs  []wfunc
	body   []byte // encoded FunctionInfos, each 4-byte aligned
	err    error
}

// wfunc is an added function: its start, how much it says (for ordering
// entries at one address) and its encoding's place in body.
type wfunc struct {
	start uint64
	info  int
	off   uint64
}

// NewWriter returns an empty Writer.
func NewWriter() *Writer {
	return &Writer{strtab: []byte{0}, files: map[FileEntry]uint32{{}: 0}, flist: []FileEntry{{}}}
}

func (w *Writer) order() binary.AppendByteOrder {
	if w.Order == nil {
		return binary.LittleEndian
	}
	return w.Order
}

// String returns the string table offset of s, adding it if new.
func (w *Writer) String(s string) uint32 {
	if s == "" {
		return 0
	}
	h := w.strs.Hash(s)
	if off, ok := w.strs.Find(h, s, w.stringAt); ok {
		return off
	}
	off := uint32(len(w.strtab))
	if uint64(len(w.strtab))+uint64(len(s))+1 > 1<<32-1 {
		w.fail(errors.New("gsym: string table over 4 GiB"))
		return 0
	}
	w.strtab = append(append(w.strtab, s...), 0)
	w.strs.Add(h, s, off)
	return off
}

// stringAt reports whether the string table holds s at off.
func (w *Writer) stringAt(off uint32, s string) bool {
	end := uint64(off) + uint64(len(s))
	return end < uint64(len(w.strtab)) && w.strtab[end] == 0 && string(w.strtab[off:end]) == s
}

// File returns the file table index of the file dir/base, adding it if new;
// 0 when both are empty.
func (w *Writer) File(dir, base string) uint32 {
	fe := FileEntry{Dir: w.String(dir), Base: w.String(base)}
	if i, ok := w.files[fe]; ok {
		return i
	}
	i := uint32(len(w.flist))
	w.files[fe] = i
	w.flist = append(w.flist, fe)
	return i
}

// FilePath is File with the path split by SplitPath.
func (w *Writer) FilePath(path string) uint32 {
	if path == "" {
		return 0
	}
	return w.File(SplitPath(path))
}

func (w *Writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// Add encodes a function. Its Name must not be 0 (an empty name); its
// LineTable rows must be sorted, none below Start; its Inline tree, when
// set, has the function's range as root and every child's ranges within
// its parent's first range start. Merged and CallSites are not written.
func (w *Writer) Add(fi *FunctionInfo) error {
	if fi.Name == 0 {
		return fmt.Errorf("gsym: function at %#x: empty name", fi.Start)
	}
	if fi.Start < w.BaseAddress {
		return fmt.Errorf("gsym: function at %#x below the base address %#x", fi.Start, w.BaseAddress)
	}
	o := w.order()
	b := w.body
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	off := uint64(len(b))
	b = o.AppendUint32(b, fi.Size)
	b = o.AppendUint32(b, fi.Name)
	info := 0
	chunk := func(t InfoType, enc func([]byte) ([]byte, error)) error {
		b = o.AppendUint32(b, uint32(t))
		at := len(b)
		b = o.AppendUint32(b, 0)
		var err error
		if b, err = enc(b); err != nil {
			return fmt.Errorf("gsym: function at %#x: %s: %w", fi.Start, t, err)
		}
		n := len(b) - at - 4
		if uint64(n) > 1<<32-1 {
			return fmt.Errorf("gsym: function at %#x: %s over 4 GiB", fi.Start, t)
		}
		putU32(o, b[at:], uint32(n))
		info++
		return nil
	}
	if len(fi.LineTable) > 0 {
		if err := chunk(LineTableInfo, func(b []byte) ([]byte, error) { return appendLineTable(b, fi.LineTable, fi.Start) }); err != nil {
			return err
		}
	}
	if fi.Inline != nil {
		if err := chunk(InlineInfoType, func(b []byte) ([]byte, error) { return appendInline(b, o, fi.Inline, fi.Start) }); err != nil {
			return err
		}
	}
	b = o.AppendUint32(b, uint32(EndOfList))
	b = o.AppendUint32(b, 0)
	w.body = b
	w.funcs = append(w.funcs, wfunc{start: fi.Start, info: info, off: off})
	return nil
}

// Len returns about how many bytes the file would have if written now.
func (w *Writer) Len() int {
	return HeaderSize + 12*len(w.funcs) + 8*len(w.flist) + len(w.strtab) + len(w.body)
}

// putU32 stores v at b in byte order o.
func putU32(o binary.AppendByteOrder, b []byte, v uint32) {
	t := o.AppendUint32(b[:0:0], v)
	copy(b, t)
}

// WriteTo writes the file: header, address table, address info offsets,
// file table, string table, then the functions. A file without functions
// is an error, as in LLVM. Entries starting at one
// address are ordered with those saying most first, as LLVM orders them.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	if len(w.UUID) > MaxUUIDSize {
		return 0, fmt.Errorf("gsym: UUID of %d bytes (at most %d)", len(w.UUID), MaxUUIDSize)
	}
	if len(w.funcs) == 0 {
		// As LLVM's GsymCreator: its reader crashes on an empty address
		// table (llvm-gsymutil 22.1.8 lookups).
		return 0, errors.New("gsym: no functions to write")
	}
	if uint64(len(w.funcs)) > 1<<32-1 {
		return 0, fmt.Errorf("gsym: %d functions", len(w.funcs))
	}
	slices.SortStableFunc(w.funcs, func(a, b wfunc) int {
		if c := cmp.Compare(a.start, b.start); c != 0 {
			return c
		}
		return cmp.Compare(b.info, a.info)
	})
	o := w.order()
	h := Header{Magic: Magic, Version: Version, AddrOffSize: 1, BaseAddress: w.BaseAddress,
		NumAddresses: uint32(len(w.funcs)), UUIDSize: uint8(len(w.UUID))}
	copy(h.UUID[:], w.UUID)
	if n := len(w.funcs); n > 0 {
		switch last := w.funcs[n-1].start - w.BaseAddress; {
		case last > 1<<32-1:
			h.AddrOffSize = 8
		case last > 0xffff:
			h.AddrOffSize = 4
		case last > 0xff:
			h.AddrOffSize = 2
		}
	}
	asz := uint64(h.AddrOffSize)
	addrOff := align(HeaderSize, asz)
	infoOff := align(addrOff+asz*uint64(len(w.funcs)), 4)
	filesOff := infoOff + 4*uint64(len(w.funcs))
	strOff := filesOff + 4 + 8*uint64(len(w.flist))
	bodyOff := align(strOff+uint64(len(w.strtab)), 4)
	if bodyOff+uint64(len(w.body)) > 1<<32-1 {
		return 0, fmt.Errorf("gsym: file of %d bytes: offsets are 32-bit", bodyOff+uint64(len(w.body)))
	}
	h.StrtabOffset, h.StrtabSize = uint32(strOff), uint32(len(w.strtab))

	buf := appendHeader(make([]byte, 0, strOff), o, &h)
	for uint64(len(buf)) < addrOff {
		buf = append(buf, 0)
	}
	for _, f := range w.funcs {
		a := f.start - w.BaseAddress
		switch asz {
		case 1:
			buf = append(buf, byte(a))
		case 2:
			buf = o.AppendUint16(buf, uint16(a))
		case 4:
			buf = o.AppendUint32(buf, uint32(a))
		default:
			buf = o.AppendUint64(buf, a)
		}
	}
	for uint64(len(buf)) < infoOff {
		buf = append(buf, 0)
	}
	for _, f := range w.funcs {
		buf = o.AppendUint32(buf, uint32(bodyOff+f.off))
	}
	buf = o.AppendUint32(buf, uint32(len(w.flist)))
	for _, fe := range w.flist {
		buf = o.AppendUint32(buf, fe.Dir)
		buf = o.AppendUint32(buf, fe.Base)
	}
	// The string table and the functions go out as they are, not copied.
	var pad []byte
	for k := strOff + uint64(len(w.strtab)); k < bodyOff; k++ {
		pad = append(pad, 0)
	}
	var n int64
	for _, b := range [][]byte{buf, w.strtab, pad, w.body} {
		k, err := out.Write(b)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
