package cfiindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/gobreakpad/gobreakpad/internal/mmap"
	"github.com/gobreakpad/gobreakpad/symbols"
)

// ErrFormat is wrapped by the errors of files that are not indexes this
// package reads.
var ErrFormat = errors.New("cfiindex: not a valid index")

// Index is an opened index. It implements symbols.CFIRuler and
// symbols.WinRuler, and is safe for concurrent use.
type Index struct {
	// Source and Flags are the header's.
	Source Stamp
	Flags  uint32

	data                       []byte
	close                      func() error
	inits, deltas, wins, funcs []byte
	str                        []byte
}

// Open maps the index file at path.
func Open(path string) (*Index, error) {
	b, unmap, err := mmap.Open(path, mmap.Normal)
	if err != nil {
		return nil, err
	}
	x, err := New(b)
	if err != nil {
		unmap()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	x.close = unmap
	return x, nil
}

// New reads an index held in b, which it keeps (and must not change).
// Only the header is checked.
func New(b []byte) (*Index, error) {
	if len(b) < headerSize || string(b[:8]) != Magic {
		return nil, fmt.Errorf("%w: bad magic", ErrFormat)
	}
	le := binary.LittleEndian
	if v := le.Uint32(b[8:]); v != Version {
		return nil, fmt.Errorf("%w: version %d", ErrFormat, v)
	}
	x := &Index{Flags: le.Uint32(b[12:]), data: b,
		Source: Stamp{Size: int64(le.Uint64(b[16:])), ModTime: int64(le.Uint64(b[24:]))}}
	counts := [4]uint64{uint64(le.Uint32(b[32:])), uint64(le.Uint32(b[36:])), uint64(le.Uint32(b[40:])), uint64(le.Uint32(b[44:]))}
	strLen := le.Uint64(b[48:])
	sizes := [4]uint64{initSize, deltaSize, winSize, funcSize}
	secs := [4]*[]byte{&x.inits, &x.deltas, &x.wins, &x.funcs}
	off := uint64(headerSize)
	for k := range counts {
		n := counts[k] * sizes[k] // counts are 32-bit: no overflow
		if n > uint64(len(b))-off {
			return nil, fmt.Errorf("%w: section %d past the end", ErrFormat, k)
		}
		*secs[k] = b[off : off+n]
		off += n
	}
	if strLen != uint64(len(b))-off {
		return nil, fmt.Errorf("%w: string area of %d bytes, %d left", ErrFormat, strLen, uint64(len(b))-off)
	}
	x.str = b[off:]
	return x, nil
}

// Close unmaps the file opened by Open.
func (x *Index) Close() error {
	if x.close == nil {
		return nil
	}
	c := x.close
	x.close = nil
	return c()
}

// HasCFI reports whether the symbol file had STACK CFI INIT records.
func (x *Index) HasCFI() bool { return x.Flags&FlagHasCFI != 0 }

// text returns a string of the string area, or false when out of bounds.
func (x *Index) text(off, n uint32) (string, bool) {
	if uint64(off)+uint64(n) > uint64(len(x.str)) {
		return "", false
	}
	return string(x.str[off : off+n]), true
}

// find returns the record of sec (of size sz) whose range covers a, or nil.
func find(sec []byte, sz int, a uint64) []byte {
	n := len(sec) / sz
	i := sort.Search(n, func(i int) bool { return binary.LittleEndian.Uint64(sec[i*sz:]) > a }) - 1
	if i < 0 {
		return nil
	}
	r := sec[i*sz : (i+1)*sz]
	if binary.LittleEndian.Uint64(r[8:]) < a {
		return nil
	}
	return r
}

// CFIRules implements symbols.CFIRuler: the INIT record's rules covering rel,
// then those of its deltas at or below rel.
func (x *Index) CFIRules(rel uint64, dst []string) ([]string, bool) {
	le := binary.LittleEndian
	r := find(x.inits, initSize, rel)
	if r == nil {
		return dst, false
	}
	init, ok := x.text(le.Uint32(r[16:]), le.Uint32(r[20:]))
	if !ok {
		return dst, false
	}
	first, n := uint64(le.Uint32(r[24:])), uint64(le.Uint32(r[28:]))
	if first+n > uint64(len(x.deltas)/deltaSize) {
		return dst, false
	}
	ds := x.deltas[first*deltaSize : (first+n)*deltaSize]
	k := sort.Search(int(n), func(i int) bool { return le.Uint64(ds[i*deltaSize:]) > rel })
	dst = append(dst, init)
	for i := 0; i < k; i++ {
		d := ds[i*deltaSize:]
		t, ok := x.text(le.Uint32(d[8:]), le.Uint32(d[12:]))
		if !ok {
			return dst, false
		}
		dst = append(dst, t)
	}
	return dst, true
}

// StackWin implements symbols.WinRuler: the STACK WIN record answering for
// rel, else the parameter size of the FUNC record covering rel.
func (x *Index) StackWin(rel uint64) (symbols.StackWin, bool) {
	le := binary.LittleEndian
	if r := find(x.wins, winSize, rel); r != nil {
		w := symbols.StackWin{
			Type:                 int(r[36]),
			ParameterSize:        le.Uint32(r[16:]),
			SavedRegisterSize:    le.Uint32(r[20:]),
			LocalSize:            le.Uint32(r[24:]),
			AllocatesBasePointer: r[37]&1 != 0,
		}
		if r[37]&2 != 0 {
			p, ok := x.text(le.Uint32(r[28:]), le.Uint32(r[32:]))
			if !ok {
				return symbols.StackWin{}, false
			}
			w.ProgramString = p
		}
		return w, true
	}
	if r := find(x.funcs, funcSize, rel); r != nil {
		return symbols.StackWin{ParamSizeOnly: true, ParameterSize: le.Uint32(r[16:])}, true
	}
	return symbols.StackWin{}, false
}
