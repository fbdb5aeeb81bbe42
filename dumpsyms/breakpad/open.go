package breakpad

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/internal/mmap"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// Open memory-maps the symbol file at path and indexes it in one pass,
// returning a model whose functions and PUBLIC records stay in the file
// until a writer asks for them (dumpsyms.Model.Lazy): what Read would
// make, function for function and record for record, without holding every
// line record, INLINE record and name decoded at once. The index keeps, per
// FUNC record, its address and where its line and INLINE records lie in the
// file, and per PUBLIC record its address and line; MODULE, INFO, FILE and
// INLINE_ORIGIN records are decoded as Read decodes them.
//
// The model carries no STACK CFI or STACK WIN records (the lookup formats
// hold none): write a .sym from Read's model. Problems are reported to warn
// as Read reports them. Close the returned Closer when done with the model;
// the model must not be used afterwards, nor by several goroutines at once.
// A file of 4 GiB or more (past the index's offsets) is read by Read.
func Open(path string, warn func(format string, args ...any)) (*dumpsyms.Model, io.Closer, error) {
	if st, err := os.Stat(path); err == nil && st.Size() >= 1<<32-1 {
		s, err := ReadFile(path, warn)
		if err != nil {
			return nil, nil, err
		}
		return s, io.NopCloser(nil), nil
	}
	data, unmap, err := mmap.Open(path, mmap.Sequential)
	if err != nil {
		return nil, nil, err
	}
	x := &index{data: data, unmap: unmap}
	s, err := x.pass(warn)
	if err != nil {
		unmap()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, x, nil
}

// index is a symbol file's functions and PUBLIC records by offset.
type index struct {
	data  []byte
	unmap func() error

	funcs   []funcRec  // sorted by address, stably
	extras  []extraRec // by function (file order), then file order
	publics []pubRec   // file order

	decoded int // bytes decoded since the mapping's pages were last given back
}

// funcRec is a FUNC record: its address, the offset of its line, the end of
// the run of line and INLINE records (and blank or malformed lines) right
// after it, and its number in file order.
type funcRec struct {
	addr     uint64
	off, end uint32
	seq      uint32
}

// extraRec is a line or INLINE record of function seq found after some other
// record ended the function's run (Read gives it to the last FUNC all the
// same).
type extraRec struct {
	seq, off uint32
}

// pubRec is a PUBLIC record: its address and the offset of its line.
type pubRec struct {
	addr uint64
	off  uint32
}

// releaseEvery is how many bytes of the file are decoded between two
// givings back of the mapping's pages: the file is never resident whole.
const releaseEvery = 32 << 20

func (x *index) Close() error {
	if x.unmap == nil {
		return nil
	}
	err := x.unmap()
	x.unmap, x.data = nil, nil
	return err
}

// line returns the line at off without its line end, and the offset of the
// next line.
func (x *index) line(off int) (line []byte, next int) {
	b := x.data[off:]
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b, next = b[:i], off+i+1
	} else {
		next = len(x.data)
	}
	return bytes.TrimRight(b, "\r"), next
}

// pass indexes the file, reporting to warn what Read reports.
func (x *index) pass(warn func(format string, args ...any)) (*dumpsyms.Model, error) {
	if warn == nil {
		warn = func(string, ...any) {}
	}
	if uint64(len(x.data)) >= 1<<32-1 {
		return nil, fmt.Errorf("symbol file of %d bytes is too large (limit 4 GiB)", len(x.data))
	}
	s := &dumpsyms.Model{Lazy: x}
	hasModule, hasInit, inRun := false, false, false
	cur := -1 // index in x.funcs of the last FUNC, in file order
	released := 0
	lineNo := 0
	for off := 0; off < len(x.data); {
		b, next := x.line(off)
		lineNo++
		if next-off > symfile.MaxLineLength || (next == len(x.data) && len(x.data)-off >= symfile.MaxLineLength) {
			return nil, fmt.Errorf("line %d: longer than %d bytes", lineNo, symfile.MaxLineLength)
		}
		at := off
		off = next
		if off-released >= releaseEvery {
			mmap.Release(x.data[released:off])
			released = off
		}
		if len(b) == 0 {
			continue
		}
		// Line, INLINE and STACK records (most of a file) are only
		// checked here; the kind of a STACK CFI record matters only until
		// the first INIT.
		if k := cheapKind(b); k != kindOther && !(k == kindCFI && !hasInit) {
			if err := symfile.CheckRecord(b); err != nil {
				se := err.(*symfile.SyntaxError)
				se.Line = lineNo
				warn("%v", se)
				continue
			}
			switch {
			case k == kindStack || k == kindCFI:
				inRun = false
			case cur < 0:
				kind := "a line record"
				if k == kindInline {
					kind = "an INLINE record"
				}
				warn("line %d: %s with no FUNC before it, ignored", lineNo, kind)
			case inRun:
				x.funcs[cur].end = uint32(next)
			default:
				x.extras = append(x.extras, extraRec{seq: uint32(cur), off: uint32(at)})
			}
			continue
		}
		rec, err := symfile.ParseRecord(b)
		var se *symfile.SyntaxError
		if errors.As(err, &se) {
			se.Line = lineNo
			warn("%v", se)
			continue
		}
		// Line and INLINE records never get here (cheapKind).
		if addHeader(s, rec, &hasModule, lineNo, warn) {
			inRun = false
			continue
		}
		switch rec := rec.(type) {
		case symfile.Func:
			cur = len(x.funcs)
			x.funcs = append(x.funcs, funcRec{addr: rec.Address, off: uint32(at), end: uint32(next), seq: uint32(cur)})
			inRun = true
			continue
		case symfile.Public:
			x.publics = append(x.publics, pubRec{addr: rec.Address, off: uint32(at)})
		case symfile.CFIInit:
			hasInit = true
		case symfile.CFI:
			if !hasInit {
				warn("line %d: a STACK CFI record with no STACK CFI INIT before it, ignored", lineNo)
			}
		}
		inRun = false
	}
	mmap.Release(x.data)
	if !hasModule {
		return nil, fmt.Errorf("symbol file: no MODULE record")
	}
	byAddr := func(a, b funcRec) int { return cmp.Compare(a.addr, b.addr) }
	if !slices.IsSortedFunc(x.funcs, byAddr) {
		slices.SortStableFunc(x.funcs, byAddr)
	}
	x.funcs = slices.Clip(x.funcs)
	return s, nil
}

// Kinds of lines the pass tells by their first bytes, as ParseRecord does.
const (
	kindOther  = iota // MODULE, INFO, FILE, INLINE_ORIGIN, FUNC, PUBLIC: parsed
	kindLine          // a line record
	kindInline        // INLINE
	kindCFI           // STACK CFI (INIT or delta)
	kindStack         // STACK WIN
)

func cheapKind(b []byte) int {
	switch {
	case bytes.HasPrefix(b, []byte("STACK CFI ")):
		return kindCFI
	case bytes.HasPrefix(b, []byte("STACK WIN ")):
		return kindStack
	case bytes.HasPrefix(b, []byte("INLINE ")):
		return kindInline
	}
	for _, p := range []string{"MODULE ", "INFO ", "FILE ", "INLINE_ORIGIN ", "FUNC ", "PUBLIC "} {
		if bytes.HasPrefix(b, []byte(p)) {
			return kindOther
		}
	}
	return kindLine
}

// NumFuncs implements dumpsyms.Source.
func (x *index) NumFuncs() int { return len(x.funcs) }

// Func implements dumpsyms.Source: the FUNC record's line parsed again, then
// its line and INLINE records, as Read collects them.
func (x *index) Func(i int, f *dumpsyms.Function, body bool) {
	r := x.funcs[i]
	b, next := x.line(int(r.off))
	rec, _ := symfile.ParseRecord(b)
	fn, _ := rec.(symfile.Func)
	f.Name, f.Multiple, f.ParamSize = fn.Name, fn.Multiple, fn.ParamSize
	f.Ranges = append(f.Ranges[:0], symfile.Range{Address: fn.Address, Size: fn.Size})
	clear(f.Inlines) // the records' range slices
	f.Lines, f.Inlines = f.Lines[:0], f.Inlines[:0]
	if !body {
		x.touch(len(b))
		return
	}
	for off := next; off < int(r.end); {
		b, next := x.line(off)
		off = next
		x.add(f, b)
	}
	j, _ := slices.BinarySearchFunc(x.extras, r.seq, func(e extraRec, seq uint32) int { return cmp.Compare(e.seq, seq) })
	for ; j < len(x.extras) && x.extras[j].seq == r.seq; j++ {
		b, _ := x.line(int(x.extras[j].off))
		x.add(f, b)
	}
	lineAddr := func(a, b symfile.Line) int { return cmp.Compare(a.Address, b.Address) }
	if !slices.IsSortedFunc(f.Lines, lineAddr) {
		slices.SortStableFunc(f.Lines, lineAddr)
	}
	x.touch(int(r.end - r.off))
}

// touch counts n bytes of the file read (at least what a page fault maps
// around a page), giving the mapping's pages back every releaseEvery bytes:
// writers read the functions about in file order, several times.
func (x *index) touch(n int) {
	x.decoded += max(n, 64<<10)
	if x.decoded >= releaseEvery {
		mmap.Release(x.data)
		x.decoded = 0
	}
}

// add appends the line or INLINE record on line b to f; other and malformed
// lines (reported by the pass) are passed over.
func (x *index) add(f *dumpsyms.Function, b []byte) {
	if len(b) == 0 {
		return
	}
	rec, err := symfile.ParseRecord(b)
	if err != nil {
		return
	}
	switch rec := rec.(type) {
	case symfile.Line:
		f.Lines = append(f.Lines, rec)
	case symfile.Inline:
		f.Inlines = append(f.Inlines, rec)
	}
}

// NumPublics implements dumpsyms.Source.
func (x *index) NumPublics() int { return len(x.publics) }

// Public implements dumpsyms.Source.
func (x *index) Public(i int) symfile.Public {
	b, _ := x.line(int(x.publics[i].off))
	x.touch(len(b))
	rec, _ := symfile.ParseRecord(b)
	p, _ := rec.(symfile.Public)
	return p
}
