package cfiindex

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/gobreakpad/gobreakpad/internal/strindex"
)

// Writer collects records and writes an index. Records of each kind must be
// added in address order, without overlaps.
type Writer struct {
	// Source and Flags go into the header.
	Source Stamp
	Flags  uint32

	inits                       chunks
	deltas                      chunks
	wins                        chunks
	funcs                       chunks
	nInit, nDelta, nWin, nFunc  uint32
	lastInit, lastWin, lastFunc uint64
	str                         []byte
	strs                        strindex.Index // offsets of the strings in str
	err                         error
}

func (w *Writer) text(s string) (uint32, uint32) {
	h := w.strs.Hash(s)
	if off, ok := w.strs.Find(h, s, w.at); ok {
		return off, uint32(len(s))
	}
	if uint64(len(w.str))+uint64(len(s)) > math.MaxUint32 {
		w.fail(errors.New("string area over 4 GiB"))
		return 0, 0
	}
	off := uint32(len(w.str))
	w.str = append(w.str, s...)
	w.strs.Add(h, s, off)
	return off, uint32(len(s))
}

// at reports whether the string area holds s at off.
func (w *Writer) at(off uint32, s string) bool {
	return uint64(off)+uint64(len(s)) <= uint64(len(w.str)) && string(w.str[off:off+uint32(len(s))]) == s
}

func (w *Writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// order checks that a range starts after the previous one of its kind.
func (w *Writer) order(kind string, n uint32, last *uint64, addr, size uint64) bool {
	if size == 0 || addr+size-1 < addr {
		w.fail(fmt.Errorf("%s %#x: bad size %#x", kind, addr, size))
		return false
	}
	if n > 0 && addr <= *last {
		w.fail(fmt.Errorf("%s %#x: not after the previous one (last %#x)", kind, addr, *last))
		return false
	}
	if n == math.MaxUint32 {
		w.fail(fmt.Errorf("%s: too many records", kind))
		return false
	}
	*last = addr + size - 1
	return true
}

// AddInit adds an INIT record and its deltas.
func (w *Writer) AddInit(in Init) {
	if !w.order("STACK CFI INIT", w.nInit, &w.lastInit, in.Address, in.Size) {
		return
	}
	if uint64(w.nDelta)+uint64(len(in.Deltas)) > math.MaxUint32 {
		w.fail(errors.New("too many delta records"))
		return
	}
	off, n := w.text(in.Rules)
	first := w.nDelta
	prev := in.Address
	for k, d := range in.Deltas {
		if d.Address < prev || d.Address > w.lastInit || (k > 0 && d.Address == prev) {
			w.fail(fmt.Errorf("STACK CFI %#x: out of order or outside INIT %#x", d.Address, in.Address))
			return
		}
		prev = d.Address
		doff, dn := w.text(d.Rules)
		var rec [16]byte
		b := binary.LittleEndian.AppendUint64(rec[:0], d.Address)
		b = binary.LittleEndian.AppendUint32(b, doff)
		w.deltas.write(binary.LittleEndian.AppendUint32(b, dn))
		w.nDelta++
	}
	var rec [32]byte
	b := binary.LittleEndian.AppendUint64(rec[:0], in.Address)
	b = binary.LittleEndian.AppendUint64(b, w.lastInit)
	b = binary.LittleEndian.AppendUint32(b, off)
	b = binary.LittleEndian.AppendUint32(b, n)
	b = binary.LittleEndian.AppendUint32(b, first)
	w.inits.write(binary.LittleEndian.AppendUint32(b, uint32(len(in.Deltas))))
	w.nInit++
}

// AddWin adds the STACK WIN record answering for a range.
func (w *Writer) AddWin(r Win) {
	if !w.order("STACK WIN", w.nWin, &w.lastWin, r.Address, r.Size) {
		return
	}
	var off, n uint32
	if r.HasProgram {
		off, n = w.text(r.Program)
	}
	var rec [40]byte
	b := binary.LittleEndian.AppendUint64(rec[:0], r.Address)
	b = binary.LittleEndian.AppendUint64(b, w.lastWin)
	for _, v := range []uint32{r.ParamSize, r.SavedRegisterSize, r.LocalSize, off, n} {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	var fl byte
	if r.AllocatesBasePointer {
		fl |= 1
	}
	if r.HasProgram {
		fl |= 2
	}
	w.wins.write(append(b, r.Type, fl, 0, 0))
	w.nWin++
}

// AddFunc adds a FUNC record's range and parameter size.
func (w *Writer) AddFunc(f Func) {
	if !w.order("FUNC", w.nFunc, &w.lastFunc, f.Address, f.Size) {
		return
	}
	var rec [24]byte
	b := binary.LittleEndian.AppendUint64(rec[:0], f.Address)
	b = binary.LittleEndian.AppendUint64(b, w.lastFunc)
	b = binary.LittleEndian.AppendUint32(b, f.ParamSize)
	w.funcs.write(binary.LittleEndian.AppendUint32(b, 0))
	w.nFunc++
}

// WriteTo writes the index; it fails if a record added was bad.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	if w.err != nil {
		return 0, fmt.Errorf("cfiindex: %w", w.err)
	}
	h := make([]byte, 0, headerSize)
	h = append(h, Magic...)
	h = binary.LittleEndian.AppendUint32(h, Version)
	h = binary.LittleEndian.AppendUint32(h, w.Flags)
	h = binary.LittleEndian.AppendUint64(h, uint64(w.Source.Size))
	h = binary.LittleEndian.AppendUint64(h, uint64(w.Source.ModTime))
	for _, v := range []uint32{w.nInit, w.nDelta, w.nWin, w.nFunc} {
		h = binary.LittleEndian.AppendUint32(h, v)
	}
	h = binary.LittleEndian.AppendUint64(h, uint64(len(w.str)))
	h = binary.LittleEndian.AppendUint64(h, 0)
	bw := bufio.NewWriter(out)
	var n int64
	parts := [][]byte{h}
	for _, c := range []*chunks{&w.inits, &w.deltas, &w.wins, &w.funcs} {
		parts = append(parts, c.bs...)
	}
	for _, b := range append(parts, w.str) {
		k, err := bw.Write(b)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, bw.Flush()
}

// chunks is a table being encoded, in blocks of chunkSize bytes: growing it
// never copies it (a table of a big .sym's records is tens of megabytes).
type chunks struct{ bs [][]byte }

const chunkSize = 1 << 20

func (c *chunks) write(p []byte) {
	for len(p) > 0 {
		n := len(c.bs)
		if n == 0 || len(c.bs[n-1]) == cap(c.bs[n-1]) {
			c.bs = append(c.bs, make([]byte, 0, chunkSize))
			n++
		}
		last := c.bs[n-1]
		k := min(len(p), cap(last)-len(last))
		c.bs[n-1] = append(last, p[:k]...)
		p = p[k:]
	}
}
