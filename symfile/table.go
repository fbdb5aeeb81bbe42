package symfile

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

// A Table is a parsed and indexed symbol file, answering lookups by
// module-relative address in O(log n). It is built in one streaming pass over
// the file's bytes, which it keeps (memory-mapped by [Open]) and refers into
// by offset rather than copying names and rules; line records, INLINE records
// and STACK CFI delta records are checked in that pass but decoded only when a
// lookup needs them. Strings returned by lookups are copies and stay valid
// after [Table.Close].
//
// A Table is safe for concurrent use.
type Table struct {
	data  []byte
	close func() error

	module    Module
	hasModule bool
	codeID    CodeID
	hasCodeID bool
	infos     []Info

	files   []named // FILE records by number; first record wins, as in Breakpad
	origins []named // INLINE_ORIGIN records by id; first record wins
	// The names of files and origins, copied out of the file after the pass
	// (off in named is then an offset in these): lookups return substrings,
	// without allocating or touching the mapped file.
	fileNames, originNames string

	funcs    []span // FUNC records; aux: index in funcBody
	funcBody []body
	publics  []public
	// STACK CFI INIT records; aux: end of the block of delta records
	// directly after the record.
	cfi []span
	// STACK CFI delta records that may apply outside their block: those
	// outside their INIT's range, after a dropped INIT, or after no INIT;
	// sorted by address, then file order. Breakpad keeps all deltas in one
	// map by address, so these must be looked at too. Real files have few.
	deltas []delta
	win    [2]nested // STACK WIN FrameData (0) and FPO (1) records

	errs       []*SyntaxError
	numErrs    int
	numCorrupt int

	// lazy, when not nil, holds the STACK records not indexed yet (see
	// OpenLookups); set when the Table is made, never changed after.
	lazy *lazyStack

	details sync.Map // int (index in funcs) -> *funcDetail
	// longNames holds the names and rules of longName bytes or more that
	// lookups returned: uint32 (record offset) -> string.
	longNames sync.Map
	lineLens  sync.Map // uint32 (offset of a line of longName bytes or more) -> uint32 (its length)
}

// named is a numbered name: FILE and INLINE_ORIGIN records.
type named struct {
	id     uint32
	off, n uint32 // the name's bytes in the file
}

// body locates the line and INLINE records of a FUNC record: they lie
// between the FUNC line and end; the line records start at lines (0 if none).
// When ordered is set, everything from lines to end is line records, one per
// line, at increasing, non-overlapping, non-empty ranges: lookups can then
// binary-search the text.
//
// inlLo and inlLast bound the ranges of the function's well-formed INLINE
// records, as offsets from the FUNC's address (inlLo > inlLast when there are
// none; 0 and math.MaxUint32, covering everything, when a range lies below
// the FUNC or 4 GiB above it): a lookup outside them need not read those
// records.
type body struct {
	end, lines     uint32
	inlLo, inlLast uint32
	ordered        bool
}

// inlineBounds reports whether the INLINE records of the function at base
// with body b may cover addr.
func (b *body) inlineBounds(base, addr uint64) bool {
	d := addr - base
	return uint64(b.inlLo) <= d && (d <= uint64(b.inlLast) || b.inlLast == math.MaxUint32)
}

// bodyTracker follows the records of the current function during the pass.
// b points at the last element of Table.funcBody, which only grows when a new
// FUNC replaces the tracker.
type bodyTracker struct {
	b        *body
	base     uint64 // the FUNC's address
	next     int    // offset of the line after the function's last record
	lastAddr uint64 // last address of the previous line record
}

func (bt *bodyTracker) line(start, end, next int, addr, size uint64) {
	b := bt.b
	if b.lines == 0 {
		b.lines = uint32(start)
	} else if start != bt.next || addr <= bt.lastAddr {
		b.ordered = false
	}
	if size == 0 || addr+size-1 < addr {
		b.ordered = false
	}
	bt.lastAddr = addr + size - 1
	b.end, bt.next = uint32(end), next
}

func (bt *bodyTracker) inline(end, next int, ranges []Range) {
	b := bt.b
	if b.lines != 0 {
		b.ordered = false // an INLINE record after line records
	}
	for _, r := range ranges {
		s, ok := makeSpan(r.Address, r.Size, 0, 0)
		if !ok {
			continue
		}
		if s.start < bt.base || s.last-bt.base >= math.MaxUint32 {
			b.inlLo, b.inlLast = 0, math.MaxUint32
			continue
		}
		b.inlLo, b.inlLast = min(b.inlLo, uint32(s.start-bt.base)), max(b.inlLast, uint32(s.last-bt.base))
	}
	b.end, bt.next = uint32(end), next
}

// delta is a STACK CFI delta record: its address and the offset of its line.
type delta struct {
	addr uint64
	off  uint32
}

func compareDelta(a, b delta) int {
	if c := cmp.Compare(a.addr, b.addr); c != 0 {
		return c
	}
	return cmp.Compare(a.off, b.off)
}

// orNil returns s, or nil when s is empty: the tables of a file parsed in
// chunks are then those of a file parsed in one pass.
func orNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// mergeSpans merges slices sorted by byStartThenOrder into one (the one
// non-empty slice itself when there is one).
func mergeSpans(s [][]span) []span {
	n := 0
	h := s[:0:0]
	for _, e := range s {
		if len(e) > 0 {
			n += len(e)
			h = append(h, e)
		}
	}
	switch len(h) {
	case 0:
		return nil
	case 1:
		return h[0]
	}
	// A binary min-heap of the slices by their first element.
	less := func(i, j int) bool { return byStartThenOrder(h[i][0], h[j][0]) < 0 }
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && less(c+1, c) {
				c++
			}
			if !less(c, i) {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	out := make([]span, 0, n)
	for len(h) > 0 {
		out = append(out, h[0][0])
		if h[0] = h[0][1:]; len(h[0]) == 0 {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
	return out
}

// mergeDeltas merges two slices sorted by compareDelta (one of them, as
// it is, when the other is empty).
func mergeDeltas(a, b []delta) []delta {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	out := make([]delta, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if compareDelta(a[0], b[0]) <= 0 {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	out = append(out, a...)
	return append(out, b...)
}

// addDroppedDeltas adds to t.deltas the delta records in the blocks of
// dropped INIT records that lie in their INIT's range (the others are there
// already).
func (t *Table) addDroppedDeltas(dropped []span) {
	var extra []delta
	for _, c := range dropped {
		t.blockDeltas(c, func(addr uint64, off uint32, _ []byte) {
			if c.contains(addr) {
				extra = append(extra, delta{addr: addr, off: off})
			}
		})
	}
	slices.SortFunc(extra, compareDelta)
	t.deltas = mergeDeltas(t.deltas, extra)
}

// blockDeltas calls f for each well-formed delta record in the block after
// INIT record c, with its address, line offset and rules text.
func (t *Table) blockDeltas(c span, f func(addr uint64, off uint32, rules []byte)) {
	off := t.nextLine(c.off)
	for off < c.aux {
		b := t.lineAt(off)
		lineOff := off
		off = t.nextLine(off)
		if !isCFILine(b) {
			continue
		}
		kind, d, msg := parseCFILine(b)
		if msg == "" && kind == stackCFI {
			f(d.addr, lineOff, b[d.rules:])
		}
	}
}

// public is a PUBLIC record: its address and the offset of its line.
type public struct {
	addr uint64
	off  uint32
}

// maxErrors is how many syntax errors a Table keeps in detail.
const maxErrors = 100

// A SyntaxError describes one malformed line of a symbol file.
type SyntaxError struct {
	Line int    // 1-based line number in the file
	Msg  string // what is wrong, starting with the record kind
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Parse indexes the symbol file held in data. The Table refers into data,
// which must not be modified while the Table is in use.
//
// Malformed lines do not stop parsing: as Breakpad does, they are skipped and
// the rest of the file loads; [Table.Errors] lists them and [Table.Corrupt]
// reports whether Breakpad would call the file corrupt. Parse itself fails
// only when the file is too large to index (4 GiB or more).
func Parse(data []byte) (*Table, error) {
	if uint64(len(data)) >= math.MaxUint32 {
		return nil, fmt.Errorf("symbol file of %d bytes is too large (limit 4 GiB)", len(data))
	}
	t := &Table{data: data}
	t.parse(0, nil, false)
	return t, nil
}

// Close releases the file mapping of a Table made by [Open]. The Table must not
// be used afterwards. Close on a Table from [Parse] does nothing.
func (t *Table) Close() error {
	if t.close == nil {
		return nil
	}
	err := t.close()
	t.close = nil
	t.data = nil
	return err
}

// Module returns the MODULE record, and false if the file has none.
func (t *Table) Module() (Module, bool) { return t.module, t.hasModule }

// CodeID returns the INFO CODE_ID record, and false if the file has none.
func (t *Table) CodeID() (CodeID, bool) { return t.codeID, t.hasCodeID }

// Infos returns the INFO records other than CODE_ID, in file order.
func (t *Table) Infos() []Info { return t.infos }

// Errors returns the first 100 malformed lines of the file.
func (t *Table) Errors() []*SyntaxError {
	t.stack()
	return t.errs
}

// NumErrors returns how many lines of the file are malformed.
func (t *Table) NumErrors() int {
	t.stack()
	return t.numErrs
}

// Corrupt reports whether Breakpad would mark this symbol file corrupt: some
// line other than an INLINE or INLINE_ORIGIN record is malformed, or the file
// lacks a MODULE record.
func (t *Table) Corrupt() bool {
	t.stack()
	return t.numCorrupt > 0
}

// HasCFI reports whether the file has any STACK CFI INIT record.
func (t *Table) HasCFI() bool {
	t.stack()
	return len(t.cfi) > 0
}

// HasSymbols reports whether the file has FUNC or PUBLIC records, so that
// lookups can find anything (a file of STACK records only has none).
func (t *Table) HasSymbols() bool { return len(t.funcs) > 0 || len(t.publics) > 0 }

func (t *Table) fail(line int, msg string, counts bool) {
	t.numErrs++
	if counts {
		t.numCorrupt++
	}
	if len(t.errs) < maxErrors {
		t.errs = append(t.errs, &SyntaxError{Line: line, Msg: msg})
	}
}

// lineAt returns the line starting at offset off, without its line end.
func (t *Table) lineAt(off uint32) []byte {
	b := t.data[off:]
	if len(b) > longName {
		if i := bytes.IndexByte(b[:longName], '\n'); i >= 0 {
			return trimCR(b[:i])
		}
		return t.longLine(off)
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return trimCR(b)
}

// longLine is lineAt for a line of longName bytes or more, whose length is
// found once and kept (Table.lineLens): a lookup in a 16 MiB FUNC record
// would otherwise scan it each time.
func (t *Table) longLine(off uint32) []byte {
	if n, ok := t.lineLens.Load(off); ok {
		return t.data[off : off+n.(uint32)]
	}
	b := t.data[off:]
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	b = trimCR(b)
	t.lineLens.Store(off, uint32(len(b)))
	return b
}

// trimCR drops the carriage returns ending b: Breakpad splits lines at both
// '\r' and '\n'.
func trimCR(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return b
}

// parse indexes t.data: the streaming pass (see pass) in chunks (see
// passes), then the sorted arrays. With lazy set, STACK records are only
// skipped over and indexed on first use (see lazyStack).
func (t *Table) parse(chunks int, release func([]byte), lazy bool) {
	ps := passes(t.data, chunks, release, lazy)
	// The chunks' records are joined in file order into slices of exactly
	// their size (see blocks).
	var nFuncs, nPublics int
	for _, p := range ps {
		nFuncs += p.funcs.n
		nPublics += p.publics.n
	}
	if len(ps) == 1 {
		p := ps[0]
		t.infos, t.files, t.origins = p.infos, p.files, p.origins
		t.funcs, t.funcBody, t.publics = p.funcs.slice(), p.funcBody.slice(), p.publics.slice()
	} else {
		t.funcs = make([]span, 0, nFuncs)
		t.funcBody = make([]body, 0, nFuncs)
		t.publics = make([]public, 0, nPublics)
		for _, p := range ps {
			t.infos = append(t.infos, p.infos...)
			t.files = append(t.files, p.files...)
			t.origins = append(t.origins, p.origins...)
			base := uint32(len(t.funcBody))
			n := len(t.funcs)
			t.funcs = p.funcs.appendTo(t.funcs)
			for k := n; k < len(t.funcs); k++ {
				t.funcs[k].aux += base
			}
			t.funcBody = p.funcBody.appendTo(t.funcBody)
			t.publics = p.publics.appendTo(t.publics)
		}
	}
	lineBase := 0
	var runs []stackRun
	first := make([]int, len(ps))
	for i, p := range ps {
		if !t.hasModule && p.hasModule {
			t.module, t.hasModule = p.module, true
		}
		if !t.hasCodeID && p.hasCodeID {
			t.codeID, t.hasCodeID = p.codeID, true
		}
		for _, r := range p.stack {
			r.line += lineBase
			runs = append(runs, r)
		}
		first[i] = lineBase + 1
		lineBase += p.lines
	}
	t.joinErrors(ps, first)
	t.funcs, t.funcBody, t.publics = orNil(t.funcs), orNil(t.funcBody), orNil(t.publics)
	t.funcs = exclusiveRanges(t.funcs)
	t.files = sortNamed(t.files)
	t.origins = sortNamed(t.origins)
	t.fileNames = t.copyNames(t.files)
	t.originNames = t.copyNames(t.origins)
	if !slices.IsSortedFunc(t.publics, comparePublic) {
		slices.SortStableFunc(t.publics, comparePublic)
	}
	// Breakpad's AddressMap keeps the first PUBLIC at an address.
	t.publics = slices.CompactFunc(t.publics, func(a, b public) bool { return a.addr == b.addr })
	if lazy {
		t.lazy = &lazyStack{runs: runs, chunks: chunks, release: release}
		return
	}
	t.joinStack(ps)
	t.moduleCheck()
}

// lazyStack is what a Table opened for lookups ([OpenLookups]) needs to
// index its STACK records on first use: the runs of lines the pass
// skipped.
type lazyStack struct {
	once    sync.Once
	runs    []stackRun
	chunks  int
	release func([]byte)
}

// stack indexes the STACK records of a Table opened for lookups, once; the
// methods reading them or the error counts call it first.
func (t *Table) stack() {
	l := t.lazy
	if l == nil {
		return
	}
	l.once.Do(func() {
		if t.data == nil && len(l.runs) > 0 {
			return // closed (and so not to be used): answer as if there were no STACK records
		}
		ps, first := stackPasses(t.data, l.runs, l.chunks, l.release)
		t.joinErrors(ps, first)
		t.joinStack(ps)
		t.moduleCheck()
		l.runs = nil
	})
}

// joinErrors adds the syntax errors of passes (in file order; first[i] is
// the file's number of the first line of ps[i]) to the Table's, keeping the
// first maxErrors of the file in line order.
func (t *Table) joinErrors(ps []*pass, first []int) {
	var errs []*SyntaxError
	for i, p := range ps {
		for _, e := range p.errs {
			if len(errs) < maxErrors {
				e.Line += first[i] - 1
				errs = append(errs, e)
			}
		}
		t.numErrs += p.numErrs
		t.numCorrupt += p.numCorrupt
	}
	if len(t.errs) == 0 {
		t.errs = errs
		return
	}
	if len(errs) > 0 {
		t.errs = append(t.errs, errs...)
		slices.SortStableFunc(t.errs, func(a, b *SyntaxError) int { return cmp.Compare(a.Line, b.Line) })
		t.errs = t.errs[:min(len(t.errs), maxErrors)]
	}
}

// joinStack joins the STACK records of passes into the Table's indexes.
func (t *Table) joinStack(ps []*pass) {
	var nWin0, nWin1 int
	for _, p := range ps {
		nWin0 += p.win[0].n
		nWin1 += p.win[1].n
	}
	var cfi [][]span
	var winAll [2][]span
	winAll[0] = make([]span, 0, nWin0)
	winAll[1] = make([]span, 0, nWin1)
	for _, p := range ps {
		cfi = append(append(cfi, p.cfi.full...), p.cfi.cur)
		for k := range winAll {
			winAll[k] = p.win[k].appendTo(winAll[k])
		}
		t.deltas = mergeDeltas(t.deltas, p.deltas)
	}
	t.cfi = orNil(mergeSpans(cfi))
	winAll[0], winAll[1] = orNil(winAll[0]), orNil(winAll[1])
	var dropped []span
	t.cfi, dropped = exclusiveRangesDropped(t.cfi)
	if len(dropped) > 0 {
		t.addDroppedDeltas(dropped)
	}
	for k := range winAll {
		t.win[k] = nestedRanges(winAll[k], false)
	}
}

// moduleCheck counts a missing MODULE record as an error, after all others.
func (t *Table) moduleCheck() {
	if !t.hasModule {
		t.fail(1, "MODULE: missing", true)
	}
}

func comparePublic(a, b public) int { return cmp.Compare(a.addr, b.addr) }

// sortNamed sorts numbered names by number, keeping the first of duplicates.
func sortNamed(s []named) []named {
	f := func(a, b named) int { return cmp.Compare(a.id, b.id) }
	if !slices.IsSortedFunc(s, f) {
		slices.SortStableFunc(s, f)
	}
	return slices.CompactFunc(s, func(a, b named) bool { return a.id == b.id })
}

// copyNames copies the names of s out of the file into one string and makes
// the offsets in s refer into it.
func (t *Table) copyNames(s []named) string {
	n := 0
	for _, e := range s {
		n += int(e.n)
	}
	var b strings.Builder
	b.Grow(n)
	for i := range s {
		off := uint32(b.Len())
		b.Write(t.data[s[i].off : s[i].off+s[i].n])
		s[i].off = off
	}
	return b.String()
}

// findNamed returns the element of s, sorted by id without repeats, with
// the given id. Ids are usually 0, 1, 2, ...: the element is then at index id.
func findNamed(s []named, id uint32) (named, bool) {
	if uint64(id) < uint64(len(s)) && s[id].id == id {
		return s[id], true
	}
	i, ok := slices.BinarySearchFunc(s, id, func(e named, id uint32) int { return cmp.Compare(e.id, id) })
	if !ok {
		return named{}, false
	}
	return s[i], true
}

func parseModuleLine(b []byte) (Module, bool) {
	i := len("MODULE ")
	var f [3][2]int
	for k := range f {
		s, e := word(b, i)
		if s == e {
			return Module{}, false
		}
		f[k] = [2]int{s, e}
		i = e
	}
	name, ok := restField(b, i)
	if !ok {
		return Module{}, false
	}
	return Module{
		OS:   string(b[f[0][0]:f[0][1]]),
		Arch: string(b[f[1][0]:f[1][1]]),
		ID:   string(b[f[2][0]:f[2][1]]),
		Name: string(b[name:]),
	}, true
}

func (ps *pass) parseInfo(b []byte) {
	switch r := parseInfoLine(b).(type) {
	case CodeID:
		if !ps.hasCodeID {
			ps.codeID, ps.hasCodeID = r, true
		}
	case Info:
		ps.infos = append(ps.infos, r)
	}
}

// parseInfoLine parses an INFO line: a CodeID for INFO CODE_ID, else an Info.
func parseInfoLine(b []byte) Record {
	ks, ke := word(b, len("INFO "))
	key := string(b[ks:ke])
	if key == "CODE_ID" {
		is, ie := word(b, ke)
		c := CodeID{ID: string(b[is:ie])}
		if r, ok := restField(b, ie); ok {
			c.File = string(b[r:])
		}
		return c
	}
	in := Info{Key: key}
	if r, ok := restField(b, ke); ok {
		in.Value = string(b[r:])
	}
	return in
}
